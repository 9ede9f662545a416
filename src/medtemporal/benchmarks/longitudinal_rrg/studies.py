"""The family's cohort rules: which studies are items, and which study is each one's prior.

From the study table of the whole release (`medtemporal.sources.mimic_cxr_studies.read_study_table`) and the
report of each study used (`medtemporal.sources.mimic_cxr_reports.read_sections`):

1. **Items.** Every study of the chosen split (default ``test``, the official one) whose report has a findings
   section (the common test set of the R2Gen lineage, ReXrank and Libra: FACTS §6.1), in subject then time
   order. Left out and counted: a study without a valid ``StudyDate``/``StudyTime`` (``study_missing_time``: it
   cannot be ordered), without a report file (``study_no_report``) or whose report has no findings section
   (``study_no_findings``). With image checks (`usable`), a case one of whose images, the current study's or
   the prior's, is not there is left out (``image_missing``: the policy every MIMIC family shares,
   `medtemporal.sources.jpg_root.keep_with_images`), as is one with a corrupt image (``image_corrupt``).
2. **Prior.** The immediately preceding study of the same subject by ``StudyDate`` then ``StudyTime`` (CXRMate's
   rule, ``aehrc/cxrmate`` ``data/prompt.py`` L100-110): the latest study whose time is strictly earlier,
   from the same day included; a study at the very same time is not a prior. Any split may hold it (the
   official split keeps a subject's studies together, so it is the test split). When two studies share the
   latest earlier time, the one with the larger study id is taken and the case is counted
   (``prior_time_tied``; the order is ambiguous). The prior comes with its images and its report,
   whatever its sections (``prior_no_report`` counts priors without a report file). A study without one is
   kept and marked (subtype ``no_prior``): every score is reported over all items and over each subtype.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from medtemporal.progress import progress_bar
from medtemporal.sources.jpg_root import keep_with_images
from medtemporal.sources.mimic_cxr import _image_state, report_path
from medtemporal.sources.mimic_cxr_reports import read_sections
from medtemporal.sources.mimic_cxr_studies import StudyRecord


@dataclass(frozen=True)
class Visit:
    """A study as an item shows it: its record (images frontal first) and its report's sections."""

    record: StudyRecord
    sections: dict[str, str] = field(default_factory=dict)
    """The report's sections by canonical name (empty when there is no report file)."""


@dataclass(frozen=True)
class Case:
    """One item-to-be: the current study and its prior, if any."""

    current: Visit
    prior: Visit | None

    @property
    def images(self) -> list[str]:
        """The paths of every image the case shows: the current study's, then the prior's."""
        return [p for visit in (self.current, self.prior) if visit is not None for p, _ in visit.record.images]


def prior_of(studies: Sequence[StudyRecord], current: StudyRecord) -> tuple[StudyRecord | None, bool]:
    """The prior of ``current`` among its subject's ``studies`` (rule 2), and whether its time was tied.

    >>> import pandas as pd
    >>> t = pd.Timestamp
    >>> a, b, c = (StudyRecord(1, s, t(x), "test", ()) for s, x in ((7, "2180-01-01 08:00"),
    ...            (5, "2180-01-01 09:00"), (6, "2180-01-01 09:00")))
    >>> prior_of([a, b, c], c)[0].study_id, prior_of([a, b, c], a)[0]
    (7, None)
    """
    if current.time is None:
        return None, False
    earlier = [s for s in studies if s.time is not None and s.time < current.time]
    if not earlier:
        return None, False
    latest = max(s.time for s in earlier)
    tied = [s for s in earlier if s.time == latest]
    return max(tied, key=lambda s: s.study_id), len(tied) > 1


def cases(table: dict[int, list[StudyRecord]], reports: Path, split: str, excluded: Counter[str],
          notes: Counter[str]) -> list[Case]:
    """The items' studies of ``split`` with their priors (rules 1 and 2), in subject then time order.

    Exclusions go to ``excluded``; counts that leave nothing out (ties, priors without a report) to ``notes``.
    """
    wanted = [(subject, s) for subject, studies in table.items() for s in studies if s.split == split]
    out: list[Case] = []
    with progress_bar(total=len(wanted), desc=f"{split} studies", unit="study", leave=False) as bar:
        for subject, record in wanted:
            bar.update(1)
            if record.time is None:
                excluded["study_missing_time"] += 1
                continue
            path = reports / report_path(record.subject_id, record.study_id)
            if not path.is_file():
                excluded["study_no_report"] += 1
                continue
            sections = read_sections(path)
            if not sections.get("findings"):
                excluded["study_no_findings"] += 1
                continue
            prior_record, tied = prior_of(table[subject], record)
            prior = None
            if prior_record is not None:
                notes["prior_time_tied"] += tied
                prior_path = reports / report_path(prior_record.subject_id, prior_record.study_id)
                notes["prior_no_report"] += not prior_path.is_file()
                prior = Visit(prior_record, read_sections(prior_path))
            out.append(Case(Visit(record, sections), prior))
    return out


def usable(found: list[Case], root: Path, excluded: Counter[str]) -> list[Case]:
    """The cases every image of which is under ``root`` (`keep_with_images`: else ``image_missing``) and whole
    (else ``image_corrupt``: PIL's check and the JPEG end marker, `medtemporal.sources.mimic_cxr`)."""
    kept = keep_with_images(found, lambda case: case.images, root, excluded)
    state = {p: _image_state(root / p) for case in kept for p in dict.fromkeys(case.images)}
    whole = [case for case in kept if not any(state[p] for p in case.images)]
    if len(whole) < len(kept):
        excluded["image_corrupt"] += len(kept) - len(whole)
    return whole
