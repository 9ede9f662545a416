"""The family's cohort rules: which studies are items, and which study is each one's prior.

From the study table of the whole release (`medtemporal.sources.mimic_cxr_studies.read_study_table`) and the
report of each study used (`medtemporal.sources.mimic_cxr_reports.read_sections`):

1. **Items.** Every study of the chosen split (default ``test``, the official one) whose report has a findings
   section (the common test set of the R2Gen lineage, ReXrank and Libra: FACTS §6.1), in subject then time
   order. Left out and counted: a study without a valid ``StudyDate``/``StudyTime`` (``study_missing_time``: it
   cannot be ordered), without a report file (``study_no_report``) or whose report has no findings section
   (``study_no_findings``). With image checks (`usable`), an image that is not there (``image_missing``) or is
   corrupt (``image_corrupt``) is left out of its study, each counted once; a study left with no image is left
   out (``study_no_usable_image``), and a prior left with none is shown by its report alone
   (``prior_no_usable_image`` in the notes). One missing lateral image thus costs that image, not the study
   and the study whose prior it is.
2. **Prior** (`PRIOR_RULES`, ``build --prior-rule``; recorded in the manifest as ``config.prior_rule``):

   - ``ours`` (the default): the immediately preceding study of the same subject by ``StudyDate`` then
     ``StudyTime`` (CXRMate's rule, ``aehrc/cxrmate`` ``data/prompt.py`` L100-110): the latest study whose time
     is strictly earlier, from the same day included; a study at the very same time is not a prior. Any split
     may hold it (the official split keeps a subject's studies together, so it is the test split).
   - ``libra``: Libra's (``X-iZhang/Libra`` README.md L450-483): the latest study of the most recent *earlier
     day*, so a study on the same day is never a prior (Libra sorts by StudyDate and StudyTime and gives all of
     a day's rows the prior of its first row).
   - ``longitudinal-mimic``: Longitudinal-MIMIC's (``CelestialShine/Longitudinal-Chest-X-Ray``
     ``modules/datasets.py`` L20-49; FACTS §6.1), also a *selection*: the items are the studies of the split
     whose patient has an earlier study among them (the split's studies with a findings section), and the prior
     is the preceding one of those (by StudyDate; R2Gen's annotation order, which breaks its same-day ties, is not
     in the release, so same-day studies go by StudyTime). A study without one is left out
     (``no_earlier_study_in_split``): on the official test split, the 2,058 of the 2,347 studies that the
     Longitudinal-MIMIC table and the tables re-printed from it score.

   When two studies share the latest earlier time, the one with the larger study id is taken and the case is
   counted (``prior_time_tied``; the order is ambiguous). The prior comes with its images and its report,
   whatever its sections (``prior_no_report`` counts priors without a report file). Under ``ours`` and ``libra``
   a study without one is kept and marked (subtype ``no_prior``): every score is reported over all items and over
   each subtype.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

from medtemporal.progress import progress_bar
from medtemporal.errors import InvalidInputError
from medtemporal.sources.jpg_root import HINT, IMAGE_MISSING
from medtemporal.sources.mimic_cxr import _image_state, report_path
from medtemporal.sources.mimic_cxr_reports import read_sections
from medtemporal.sources.mimic_cxr_studies import StudyRecord


PRIOR_RULES = {
    "ours": "the immediately preceding study of the same subject by StudyDate then StudyTime (strictly earlier, the "
            "same day included; CXRMate's rule); ties of time to the larger study id",
    "libra": "the latest study of the subject's most recent earlier day (same-day studies are never priors; Libra "
             "README.md L450-483)",
    "longitudinal-mimic": "the preceding study of the same subject among the split's studies with findings (by "
                          "StudyDate, then StudyTime); only studies that have one are items (Longitudinal-MIMIC "
                          "modules/datasets.py L20-49)",
}
"""The prior rules a build may use (module doc, rule 2): key → what the manifest says."""


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


def prior_of(studies: Sequence[StudyRecord], current: StudyRecord, rule: str = "ours"
             ) -> tuple[StudyRecord | None, bool]:
    """The prior of ``current`` among its subject's ``studies`` by ``rule`` (`PRIOR_RULES`), and whether its time
    was tied.

    >>> import pandas as pd
    >>> t = pd.Timestamp
    >>> a, b, c = (StudyRecord(1, s, t(x), "test", ()) for s, x in ((7, "2180-01-01 08:00"),
    ...            (5, "2180-01-01 09:00"), (6, "2180-01-01 09:00")))
    >>> prior_of([a, b, c], c)[0].study_id, prior_of([a, b, c], a)[0], prior_of([a, b, c], c, "libra")[0]
    (7, None, None)
    """
    if current.time is None:
        return None, False
    if rule == "libra":
        earlier = [s for s in studies if s.time is not None and s.time.normalize() < current.time.normalize()]
    else:
        earlier = [s for s in studies if s.time is not None and s.time < current.time]
    if not earlier:
        return None, False
    latest = max(s.time for s in earlier)
    tied = [s for s in earlier if s.time == latest]
    return max(tied, key=lambda s: s.study_id), len(tied) > 1


def cases(table: dict[int, list[StudyRecord]], reports: Path, split: str, excluded: Counter[str],
          notes: Counter[str], rule: str = "ours") -> list[Case]:
    """The items' studies of ``split`` with their priors (rules 1 and 2), in subject then time order.

    Exclusions go to ``excluded``; counts that leave nothing out (ties, priors without a report) to ``notes``.
    """
    wanted = [(subject, s) for subject, studies in table.items() for s in studies if s.split == split]
    kept: list[tuple[int, StudyRecord, dict[str, str]]] = []
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
            kept.append((subject, record, sections))
    among = table
    if rule == "longitudinal-mimic":  # the prior is one of the split's studies with findings
        among = {}
        for subject, record, _ in kept:
            among.setdefault(subject, []).append(record)
    out: list[Case] = []
    for subject, record, sections in kept:
        prior_record, tied = prior_of(among[subject], record, rule)
        if prior_record is None and rule == "longitudinal-mimic":
            excluded["no_earlier_study_in_split"] += 1
            continue
        prior = None
        if prior_record is not None:
            notes["prior_time_tied"] += tied
            prior_path = reports / report_path(prior_record.subject_id, prior_record.study_id)
            notes["prior_no_report"] += not prior_path.is_file()
            prior = Visit(prior_record, read_sections(prior_path))
        out.append(Case(Visit(record, sections), prior))
    return out


def usable(found: list[Case], root: Path, excluded: Counter[str], notes: Counter[str]) -> list[Case]:
    """The cases with every image that is missing under ``root`` or corrupt (PIL's check and the JPEG end marker,
    `medtemporal.sources.mimic_cxr`) left out (module doc, rule 1).

    Raises:
        InvalidInputError: there are images, and none of them is under ``root`` (the wrong folder).
    """
    paths = list(dict.fromkeys(p for case in found for p in case.images))
    present = {p: (root / p).is_file() for p in paths}
    if paths and not any(present.values()):
        raise InvalidInputError(f"None of the {len(paths)} images the studies name exists under {root}; {HINT}.")
    bad = {p: IMAGE_MISSING if not present[p] else "image_corrupt" for p in paths
           if not present[p] or _image_state(root / p)}
    excluded.update(bad.values())

    def trimmed(visit: Visit) -> Visit:
        images = tuple((p, v) for p, v in visit.record.images if p not in bad)
        return visit if len(images) == len(visit.record.images) else replace(
            visit, record=replace(visit.record, images=images))

    out = []
    for case in found:
        current = trimmed(case.current)
        if not current.record.images:
            excluded["study_no_usable_image"] += 1
            continue
        prior = None if case.prior is None else trimmed(case.prior)
        notes["prior_no_usable_image"] += prior is not None and not prior.record.images
        out.append(Case(current, prior))
    return out
