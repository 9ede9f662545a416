"""Readers of the two MS-CXR-T 1.0.0 files (PhysioNet ``ms-cxr-t``) in their released schemas (FACTS §5.1).

``MS_CXR_T_temporal_image_classification_v1.0.0.csv`` has the 15 columns of `IMAGE_COLUMNS`, in that
order: ``dicom_id, previous_dicom_id, previous_study_id, study_id, subject_id``, then
``<finding>_progression`` and ``<finding>_label_quality`` for each of `FINDINGS`. The two dicom columns
are MIMIC-CXR-JPG paths without prefix or suffix (``p10/p10002428/s55758034/<dicom>``): the image is
``files/<id>.jpg`` under the MIMIC-CXR-JPG root (CheXagent ``ms_cxr_t.py`` L33). Rules, each counted:

1. Every row needs the five ids: integer ``study_id``, ``previous_study_id``, ``subject_id`` and both dicom
   paths in that form, else `InvalidInputError` naming the row. A path whose subject or study disagrees
   with the row's ids leaves the row out (``ids_disagree_with_dicom_path``).
2. ``<finding>_progression`` is ``improving``, ``stable`` or ``worsening`` (case and surrounding space
   ignored) or empty (NaN: not annotated); any other value is refused. ``<finding>_label_quality`` is
   ``one_expert``, ``multiple_experts`` or ``disagreement``, empty exactly when the progression is; a label
   without one is kept (``label_quality_missing``), a quality without a label is counted
   (``label_quality_without_label``). A row without any label is left out (``row_without_labels``).
3. Each label is one `Label`: the prior image (``previous_dicom_id``) and the current one (``dicom_id``).

``MS_CXR_T_temporal_sentence_similarity_v1.0.0.csv``: ``subset_name, sentence_1, sentence_2, category``
(MedST ``temporal_test.py`` L223–235 reads them by these positions), ``category`` ∈ ``paraphrase``,
``contradiction``; other values are refused, empty sentences leave the pair out (``sentence_empty``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from medtemporal.sources.release_files import Table, read_table
from medtemporal.sources.release_schema import Field, Schema

IMAGE_FILE = "MS_CXR_T_temporal_image_classification_v1.0.0.csv"
SENTENCE_FILE = "MS_CXR_T_temporal_sentence_similarity_v1.0.0.csv"
FINDINGS: tuple[str, ...] = ("consolidation", "edema", "pleural_effusion", "pneumonia", "pneumothorax")
"""The five findings, as the column prefixes spell them (CheXagent ``ms_cxr_t.py`` L25)."""
PROGRESSIONS: tuple[str, ...] = ("improving", "stable", "worsening")
QUALITIES: tuple[str, ...] = ("one_expert", "multiple_experts", "disagreement")
CATEGORIES: tuple[str, ...] = ("paraphrase", "contradiction")
DICOM_PATH = re.compile(r"p(\d{2})/p(\d{8})/s(\d{8})/([0-9A-Za-z][0-9A-Za-z-]*)")
_DICOM = {"pattern": DICOM_PATH.pattern, "like": "a MIMIC-CXR-JPG path like p10/p10002428/s55758034/<dicom_id>"}
IMAGE_ROW = Schema("an MS-CXR-T image pair", (
    Field("dicom_id", **_DICOM), Field("previous_dicom_id", **_DICOM), Field("previous_study_id", int),
    Field("study_id", int), Field("subject_id", int),
    *(Field(f"{f}_{part}", choices=choices, fold=str.lower, empty=True)
      for f in FINDINGS for part, choices in (("progression", PROGRESSIONS), ("label_quality", QUALITIES))),
))
"""A row of the image-classification file, its 15 columns in the release's order."""
SENTENCE_ROW = Schema("an MS-CXR-T sentence pair", (
    Field("subset_name", empty=True), Field("sentence_1", empty=True), Field("sentence_2", empty=True),
    Field("category", choices=CATEGORIES, fold=str.lower),
))
"""A row of the sentence-similarity file."""
IMAGE_COLUMNS = IMAGE_ROW.names
SENTENCE_COLUMNS = SENTENCE_ROW.names


@dataclass(frozen=True)
class Label:
    """One annotated (image pair, finding): an item of the image task."""

    row: int
    """0-based data row of the file."""
    subject_id: int
    study_id: int
    previous_study_id: int
    current: str
    """Path of the current image relative to the MIMIC-CXR-JPG root (``files/<dicom_id>.jpg``)."""
    prior: str
    finding: str
    progression: str
    label_quality: str | None


@dataclass(frozen=True)
class SentencePair:
    """One row of the sentence-similarity file."""

    row: int
    subset: str
    sentence_1: str
    sentence_2: str
    category: str


def _read(path: Path, columns: tuple[str, ...], what: str) -> Table:
    """The released CSV checked whole (`medtemporal.sources.release_files.read_table`), cells as strings."""
    return read_table(path, columns=columns, what=f"the released {what} (MS-CXR-T 1.0.0)")


def read_labels(path: str | Path) -> tuple[list[Label], Counter[str]]:
    """The labels of the image-classification file in file order (row, then `FINDINGS` order), and what
    the rules left out or noticed (module doc)."""
    path = Path(path)
    table = _read(path, IMAGE_COLUMNS, IMAGE_FILE)
    counts: Counter[str] = Counter()
    labels: list[Label] = []
    for row, rec in IMAGE_ROW.rows(table):
        current, prior = (cast(re.Match[str], DICOM_PATH.fullmatch(rec[c])) for c in ("dicom_id", "previous_dicom_id"))
        found = []
        for finding in FINDINGS:
            value, quality = rec[f"{finding}_progression"], rec[f"{finding}_label_quality"]
            if value is None:
                counts["label_quality_without_label"] += quality is not None
                continue
            counts["label_quality_missing"] += quality is None
            found.append((finding, value, quality))
        if not found:
            counts["row_without_labels"] += 1
            continue
        ids = {c: rec[c] for c in ("study_id", "previous_study_id", "subject_id")}
        subject, study = ids["subject_id"], ids["study_id"]
        if (int(current[2]), int(current[3])) != (subject, study) or (int(prior[2]), int(prior[3])) != (
                subject, ids["previous_study_id"]):
            counts["ids_disagree_with_dicom_path"] += 1
            continue
        for finding, progression, quality in found:
            labels.append(Label(row, subject, study, ids["previous_study_id"], f"files/{current[0]}.jpg",
                                f"files/{prior[0]}.jpg", finding, progression, quality))
    return labels, +counts


def read_sentence_pairs(path: str | Path) -> tuple[list[SentencePair], Counter[str]]:
    """The sentence-similarity pairs in file order, and what was left out (module doc)."""
    path = Path(path)
    table = _read(path, SENTENCE_COLUMNS, SENTENCE_FILE)
    counts: Counter[str] = Counter()
    pairs = []
    for row, rec in SENTENCE_ROW.rows(table):
        first, second = rec["sentence_1"], rec["sentence_2"]
        if first is None or second is None:
            counts["sentence_empty"] += 1
            continue
        pairs.append(SentencePair(row, rec["subset_name"] or "unnamed", first, second, rec["category"]))
    return pairs, +counts
