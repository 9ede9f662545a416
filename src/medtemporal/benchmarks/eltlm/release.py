"""The released ELTLM question file (``test.json``) read into items.

The file is a JSON list of objects with keys ``Source file`` (``p1xxxxxxx``),
``type`` (``g`` perception, ``t`` reasoning), ``Picture number`` (comma-separated
study ids), ``Question`` and ``Standard Answer`` (FACTS §3.1). Rules, each
counted in `ReadCounts`:

1. Repeated study ids in one list are removed, keeping the first
   (``deduplicated``: 64 items in the release list a study twice).
2. A study id that is not ``s`` + 8 digits starting with 5 is malformed
   (``malformed``: three 9-digit ids). Items listing a study id that another
   item lists under another patient are counted (``study_of_two_patients``:
   3 items in the release); with metadata, the item whose patient does not
   own the study is left out (``study_of_another_patient``). With metadata, a malformed id is
   resolved when exactly one study of the same subject has the id with one
   digit dropped (``malformed_resolved``); otherwise its item is left out.
3. With a MIMIC-CXR-JPG root, studies are shown in time order from
   ``StudyDate``/``StudyTime`` (``order="date"``, the default: the file's order
   is ascending by id, which is random in MIMIC; ``reordered_by_time`` counts
   the items whose order changed), or in the file's order (``order="file"``),
   each by its frontal image (`studies.read_studies`). Either way each item's
   ``meta["date_order_differs"]`` says whether the two orders differ, and
   ``date_order_differs`` counts such items: on them, a reference written
   against the other order names the exams differently. Items with a study the
   metadata lacks, a lateral-only study, a study without a time or (with
   ``verify_images``) a missing JPEG are left out, counted by reason.
   Without a root the file order is kept (``id_order_not_ascending`` counts
   the lists that are not ascending by id: 2 in the release) and images stay
   unresolved: each `ImageRef` names the study folder, so a run refuses.
4. ``g`` → task ``perception``, ``t`` → task ``reasoning``; the subtype is the
   number of distinct studies (``2_studies`` … ``5_studies``), the paper's
   Fig. 3 strata. The reference answer is ``Standard Answer`` as released
   (its known problems are listed in ``docs/eltlm.md``, not fixed here).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from medtemporal.benchmarks.eltlm.studies import StudyInfo
from medtemporal.family import ImageRef, InvalidInputError, Item
from medtemporal.sources.mimic_cxr import subject_folder
from medtemporal.sources.release_schema import Field, Schema

BENCHMARK = "eltlm"
TASKS = {"g": "perception", "t": "reasoning"}
"""Released ``type`` → task name (paper §3.2: Temporal Perception, Temporal Reasoning)."""
STUDY_ID = re.compile(r"s5\d{7}")
SUBJECT_ID = re.compile(r"p1\d{7}")
RECORD = Schema("an ELTLM question", (
    Field("Source file", pattern=rf"\s*{SUBJECT_ID.pattern}\s*", like="a MIMIC subject id like p10000898"),
    Field("type", choices=tuple(TASKS)), Field("Picture number"), Field("Question"), Field("Standard Answer"),
))
"""One question of the released list (FACTS §3.1)."""
ORDERS = ("date", "file")
"""How an item's images are ordered: by StudyDate/StudyTime (default), or as the file lists them (by study id)."""


@dataclass
class ReadCounts:
    """What reading the released file found and did."""

    records: int = 0
    deduplicated: int = 0
    malformed: int = 0
    malformed_resolved: int = 0
    id_order_not_ascending: int = 0
    study_of_two_patients: int = 0
    """Items listing a study id that another item lists under another patient (2 ids, 3 items in the release)."""
    reordered_by_time: int | None = None
    """Items whose studies the time order rearranged; None without metadata (0 with ``order="file"``)."""
    date_order_differs: int | None = None
    """Items whose date order differs from their file order, whichever is shown; None without metadata."""
    excluded: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready counts (exclusions as a plain mapping)."""
        out = asdict(self)
        out["excluded"] = dict(sorted(self.excluded.items()))
        return out


def subtype_of(n_studies: int) -> str:
    """The sequence-length stratum of an item with ``n_studies`` distinct studies."""
    return f"{n_studies}_studies"


def load_records(path: str | Path) -> list[dict[str, str]]:
    """The released records, each checked for the five keys and string values.

    Raises:
        InvalidInputError: the file is missing, not JSON, not a list, or a record is malformed.
    """
    return RECORD.json_list(path, what="the released ELTLM test.json")


def read_official(
    path: str | Path, studies: dict[str, StudyInfo] | None, *, verify_images: bool = True,
    image_root: Path | None = None, order: str = "date",
) -> tuple[list[Item], ReadCounts]:
    """Items of the released file, in file order, and the counts of every rule applied.

    Args:
        path: The released ``test.json``.
        studies: `read_studies` of a MIMIC-CXR-JPG root, or None to leave images unresolved.
        verify_images: With ``studies``, require each chosen JPEG to exist under ``image_root``.
        image_root: The MIMIC-CXR-JPG root (needed with ``verify_images``).
        order: ``date`` (StudyDate/StudyTime) or ``file`` (the ``Picture number`` order) for the images
            of each item; without ``studies`` the file order is kept.
    """
    if order not in ORDERS:
        raise InvalidInputError(f"--order must be one of {', '.join(ORDERS)}, not {order!r}.")
    records = load_records(path)
    known = studies is not None
    counts = ReadCounts(records=len(records), reordered_by_time=0 if known else None,
                        date_order_differs=0 if known else None)
    by_subject: dict[str, list[str]] = {}
    if studies is not None:
        for info in studies.values():
            by_subject.setdefault(info.subject, []).append(info.study)
    owners: dict[str, set[str]] = {}
    for record in records:
        for s in record["Picture number"].split(","):
            owners.setdefault(s.strip(), set()).add(record["Source file"].strip())
    items = []
    for index, record in enumerate(records):
        subject = record["Source file"].strip()
        raw = [s.strip() for s in record["Picture number"].split(",") if s.strip()]
        ids = list(dict.fromkeys(raw))
        if not ids:  # an empty Picture number: a question with no image to ask it about
            counts.excluded["no_study_listed"] += 1
            continue
        counts.deduplicated += len(ids) < len(raw)
        counts.study_of_two_patients += any(len(owners[s]) > 1 for s in ids)
        bad = [s for s in ids if not STUDY_ID.fullmatch(s)]
        if bad:
            counts.malformed += 1
            fixed = [_resolve(s, by_subject.get(subject, [])) for s in bad]
            if studies is None or None in fixed:
                counts.excluded["malformed_study_id"] += 1
                continue
            counts.malformed_resolved += 1
            ids = list(dict.fromkeys(dict(zip(bad, fixed)).get(s, s) for s in ids))
        numbers = [int(s[1:]) for s in ids]
        counts.id_order_not_ascending += numbers != sorted(numbers)
        differs = False
        if studies is None:
            refs = [ImageRef(path=f"files/{subject_folder(subject)}/{s}", visit=k, label=f"Image {k}", role="study")
                    for k, s in enumerate(ids, 1)]
        else:
            why = _unusable(ids, subject, studies, verify_images, image_root)
            if why:
                counts.excluded[why] += 1
                continue
            timed = sorted(ids, key=lambda s: (studies[s].time, s))
            differs = timed != ids
            counts.date_order_differs += differs  # type: ignore[operator]
            if order == "date":
                counts.reordered_by_time += differs  # type: ignore[operator]
                ids = timed
            refs = [ImageRef(path=str(studies[s].frontal), visit=k, label=f"Image {k}", view=studies[s].view,
                             timestamp=studies[s].time.isoformat(timespec="milliseconds"))  # type: ignore[union-attr]
                    for k, s in enumerate(ids, 1)]
        items.append(Item.create(
            benchmark=BENCHMARK, task=TASKS[record["type"]], subtype=subtype_of(len(ids)), images=refs,
            question=record["Question"], answer_type="open", answer=record["Standard Answer"],
            reference=record["Standard Answer"],
            meta={"patient_id": subject, "study_ids": ids, "source_index": index, "type": record["type"],
                  "images_resolved": studies is not None, "order": order if known else "file",
                  "date_order_differs": differs if known else None},
        ))
    return items, counts


def _resolve(bad: str, candidates: list[str]) -> str | None:
    """The one study of the subject whose id is ``bad`` with one digit dropped, else None."""
    digits = bad[1:]
    variants = {"s" + digits[:i] + digits[i + 1:] for i in range(len(digits))}
    found = [c for c in candidates if c in variants]
    return found[0] if len(found) == 1 else None


def _unusable(ids: list[str], subject: str, studies: dict[str, StudyInfo], verify: bool,
              root: Path | None) -> str | None:
    """Why an item's studies cannot be shown (an exclusion key), or None."""
    for s in ids:
        info = studies.get(s)
        if info is None:
            return "study_not_in_metadata"
        if info.subject != subject:
            return "study_of_another_patient"
        if info.frontal is None:
            return "study_lateral_only"
        if info.time is None:
            return "study_missing_time"
        if verify and root is not None and not (root / info.frontal).is_file():
            return "study_image_missing"
    return None
