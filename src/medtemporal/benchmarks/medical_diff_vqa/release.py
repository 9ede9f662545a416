"""Readers of Medical-Diff-VQA 1.0.1 (PhysioNet ``medical-diff-vqa``) in its released schema (FACTS §5.2).

``mimic_pair_questions.csv``: ``study_id, subject_id, ref_id, question_type, question, answer, split``, one
question a row; ``study_id`` is the main study, ``ref_id`` the reference study, ``split`` ``train``, ``val``
or ``test``. ``mimic_all.csv`` gives each study its one image, chosen by the release's
``get_mimic_all.py`` (L5–44: the first PA or AP dicom of the study in the MIMIC-CXR-JPG metadata, else its
first dicom) with ``view``, ``study_date`` (YYYYMMDD) and ``study_order`` (the study's date rank within the
subject, ``method="min"``). Rules, each counted:

1. Both files need their columns (`QUESTION_COLUMNS`, `MIMIC_ALL_COLUMNS`); ids must be integers and
   ``question_type`` one of `TYPES` (``question_gen.py`` L634–643), else `InvalidInputError` naming the row.
2. The test set is one of `SPLITS`: ``release`` (default), the rows whose ``split`` column is ``test``; or
   ``ekaid``, the paper's own test set: EKAID ignores the column and cuts the file's rows 80/10/10 in file
   order (``dataset_preparation.py`` L204–208: ``indexes[ceil(0.9 * total):]``, ``total`` every row of the
   file), so its test set is the last 10% of rows (`ekaid_test_start`). Published numbers are on that one.
3. A row whose question or answer is empty is left out (``question_or_answer_empty``); one whose main or
   reference study is not in ``mimic_all.csv`` (``study_not_in_mimic_all``), belongs to another subject
   (``study_of_another_subject``) or is its own reference (``reference_is_main``) likewise.
4. Order. Release 1.0.0 had ``difference`` rows whose reference study came after the main one; 1.0.1 swapped
   them (DIFF commit eea4d56, ``code/temp/fix_order.py``: ``study_order`` of the reference above the
   main's). Such a ``difference`` row is refused here (``difference_reference_after_main``: the file is
   1.0.0, or was edited). Rows of the other types only ask about the main image and were not swapped by
   the fix: they are kept, flagged in ``meta.reference_after_main`` and counted.
5. With ``verify_images``, both images must exist under the MIMIC-CXR-JPG root (``image_missing``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medtemporal.errors import InvalidInputError
from medtemporal.sources.jpg_root import IMAGE_MISSING
from medtemporal.sources.mimic_cxr import image_path
from medtemporal.sources.release_files import Table, read_table
from medtemporal.sources.release_schema import Field, Schema

QUESTIONS_FILE = "mimic_pair_questions.csv"
MIMIC_ALL_FILE = "mimic_all.csv"
TYPES: tuple[str, ...] = ("abnormality", "presence", "view", "location", "level", "type", "difference")
QUESTION_ROW = Schema("a Medical-Diff-VQA question", (
    Field("study_id", int), Field("subject_id", int), Field("ref_id", int), Field("question_type", choices=TYPES),
    Field("question"), Field("answer", strip=False), Field("split"),
))
"""A row of ``mimic_pair_questions.csv``; answers are kept as released (``difference`` answers end with a space)."""
STUDY_ROW = Schema("a Medical-Diff-VQA study", (
    Field("subject_id", int), Field("study_id", int), Field("dicom_id", non_empty=True), Field("view", empty=True),
    Field("split"), Field("study_date"), Field("study_order", float),
))
"""The columns of ``mimic_all.csv`` read here (it also holds the 14 CheXpert labels)."""
QUESTION_COLUMNS = QUESTION_ROW.names
MIMIC_ALL_COLUMNS = STUDY_ROW.names
SPLITS: dict[str, str] = {
    "release": "the release's test split (rows whose split column is 'test')",
    "ekaid": "EKAID's test set (the last 10% of the file's rows in file order, dataset_preparation.py L204-208)",
}
"""``--split`` value → the test set it names, as every table of the family says it."""
CLOSED_ANSWERS = ("yes", "no")
"""Answers of closed questions (EKAID ``evaluate_score.py`` ``acc``: ``gt_ans == 'yes' or gt_ans == 'no'``)."""


@dataclass(frozen=True)
class StudyImage:
    """One study of ``mimic_all.csv``: its subject, chosen image and date rank."""

    subject_id: int
    path: str
    """``files/pXX/pSUBJECT/sSTUDY/<dicom_id>.jpg`` under the MIMIC-CXR-JPG root."""
    view: str | None
    date: str | None
    """ISO date (``2180-05-06``) from ``study_date``."""
    order: float


@dataclass(frozen=True)
class Question:
    """One kept row of ``mimic_pair_questions.csv`` with its two images."""

    row: int
    subject_id: int
    study_id: int
    ref_id: int
    question_type: str
    question: str
    answer: str
    """As released (lower case; ``difference`` answers end with a space)."""
    split: str
    """The row's own ``split`` column (``train`` … in EKAID's cut)."""
    main: StudyImage
    reference: StudyImage

    @property
    def closed(self) -> bool:
        """A yes/no question (the release's closed questions)."""
        return self.answer.strip() in CLOSED_ANSWERS

    @property
    def reference_after_main(self) -> bool:
        return self.reference.order > self.main.order


@dataclass
class ReadCounts:
    """What reading found: rows per split, exclusions and notes."""

    rows: int = 0
    splits: dict[str, int] = field(default_factory=dict)
    excluded: Counter[str] = field(default_factory=Counter)
    reference_after_main_kept: Counter[str] = field(default_factory=Counter)
    """Non-difference rows kept although their reference study is the later one, by question type."""


def _csv(path: Path, columns: tuple[str, ...]) -> Table:
    """A released CSV checked whole (`medtemporal.sources.release_files.read_table`), cells as strings."""
    return read_table(path, columns=columns, what=f"the released {path.name} of Medical-Diff-VQA 1.0.1")


def _iso(date: str) -> str | None:
    text = date.strip()
    return f"{text[:4]}-{text[4:6]}-{text[6:8]}" if re.fullmatch(r"\d{8}", text) else None


def ekaid_test_start(total: int) -> int:
    """The first row of EKAID's test set in a file of ``total`` rows: ``ceil(0.9 * total)``
    (``dataset_preparation.py`` L204–208; its ``np.ceil`` of the same float).

    >>> ekaid_test_start(700_703), 700_703 - ekaid_test_start(700_703)
    (630633, 70070)
    """
    return int(math.ceil(0.9 * total))


def split_label(config: dict[str, Any]) -> str:
    """The test set a benchmark's manifest ``config`` was built from, in words (`SPLITS`; a build from before
    ``--split release|ekaid`` recorded the split column's value)."""
    split = str(config.get("split", "release"))
    split = "release" if split == "test" else split
    return SPLITS.get(split, f"the release's {split!r} split (rows whose split column is {split!r})")


def read_studies(path: str | Path) -> dict[int, StudyImage]:
    """Study id → its image, from ``mimic_all.csv``."""
    path = Path(path)
    table = _csv(path, MIMIC_ALL_COLUMNS)
    studies: dict[int, StudyImage] = {}
    lines: dict[int, int] = {}
    for row, rec in STUDY_ROW.rows(table):
        subject, study = rec["subject_id"], rec["study_id"]
        image = StudyImage(subject, image_path(subject, study, rec["dicom_id"]), rec["view"], _iso(rec["study_date"]),
                           rec["study_order"])
        first = lines.setdefault(study, row)
        if first != row and studies[study] != image:
            raise InvalidInputError(f"{table.where(row)} gives study_id {study} another image or date than "
                                    f"{table.where(first)}; "
                                    f"use the released {MIMIC_ALL_FILE}, which has one row per study.")
        studies[study] = image
    return studies


def read_questions(folder: str | Path, split: str = "release", *, image_root: Path | None = None,
                   verify_images: bool = True) -> tuple[list[Question], ReadCounts]:
    """The kept rows of the test set ``split`` (`SPLITS`) in file order, and what the rules counted (module doc)."""
    if split not in SPLITS:
        raise InvalidInputError(f"--split {split!r} names no test set; use one of {', '.join(SPLITS)}.")
    folder = Path(folder)
    studies = read_studies(folder / MIMIC_ALL_FILE)
    path = folder / QUESTIONS_FILE
    table = _csv(path, QUESTION_COLUMNS)
    df = table.frame
    counts = ReadCounts(rows=len(df), splits=dict(sorted(Counter(df["split"].str.strip()).items())))
    if split == "release" and "test" not in counts.splits:
        raise InvalidInputError(f"{path} has no row whose split is 'test' (it has {', '.join(counts.splits) or 'none'}); "
                                "use the released file, or --split ekaid for EKAID's file-order cut.")
    if split == "ekaid":
        positions: Iterable[int] = range(ekaid_test_start(len(df)), len(df))
    else:
        positions = (df["split"].str.strip() == "test").to_numpy().nonzero()[0].tolist()
    questions = []
    for row, rec in QUESTION_ROW.rows(table, positions):
        ids = {c: rec[c] for c in ("study_id", "subject_id", "ref_id")}
        why = _unusable(rec, ids, studies, verify_images, image_root)
        if why:
            counts.excluded[why] += 1
            continue
        q = Question(row, ids["subject_id"], ids["study_id"], ids["ref_id"], rec["question_type"], rec["question"],
                     rec["answer"], rec["split"], studies[ids["study_id"]], studies[ids["ref_id"]])
        if q.reference_after_main:
            if q.question_type == "difference":
                counts.excluded["difference_reference_after_main"] += 1
                continue
            counts.reference_after_main_kept[q.question_type] += 1
        questions.append(q)
    return questions, counts


def _unusable(rec: dict[str, Any], ids: dict[str, int], studies: dict[int, StudyImage], verify: bool,
              root: Path | None) -> str | None:
    """Why a row cannot be used (an exclusion key), or None (rule 3 and 5)."""
    if not rec["question"] or not rec["answer"].strip():
        return "question_or_answer_empty"
    main, ref = studies.get(ids["study_id"]), studies.get(ids["ref_id"])
    if main is None or ref is None:
        return "study_not_in_mimic_all"
    if main.subject_id != ids["subject_id"] or ref.subject_id != ids["subject_id"]:
        return "study_of_another_subject"
    if ids["study_id"] == ids["ref_id"]:
        return "reference_is_main"
    if verify and root is not None and not ((root / main.path).is_file() and (root / ref.path).is_file()):
        return IMAGE_MISSING
    return None
