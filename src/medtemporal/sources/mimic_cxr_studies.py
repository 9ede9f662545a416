"""MIMIC-CXR studies without MIMIC-Ext-CXR-QBA: every study of the metadata with its time, images and split.

`read_study_table` reads, as the releases lay them out:

* ``<mimic_cxr_jpg>/mimic-cxr-2.0.0-metadata.csv.gz`` (`medtemporal.sources.mimic_cxr.METADATA_COLUMNS`): a
  study's images, their ``ViewPosition`` and its ``StudyDate`` + ``StudyTime`` (the earliest over its rows);
* ``<mimic_cxr_jpg>/mimic-cxr-2.0.0-split.csv.gz`` (`SPLIT_COLUMNS`): the official split of every image
  (``train``, ``validate``, ``test``; patients do not cross splits).

Reports are read separately (`medtemporal.sources.mimic_cxr_reports.read_sections` on
`medtemporal.sources.mimic_cxr.report_path`), only for the studies a builder needs.

A study's images are listed frontal first (``PA`` over ``AP``, then by ``dicom_id``), then the other views
by ``dicom_id`` (MI-CXR's choice of the frontal image, `medtemporal.sources.mimic_cxr`). Left out and counted:
a study whose images the split file does not list (``study_not_in_split``) or puts in more than one split
(``study_split_inconsistent``). A study whose date or time cannot be parsed is kept with ``time`` None: a
builder decides what an unordered study may be used for.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from medtemporal.errors import InvalidInputError
from medtemporal.sources.mimic_cxr import (
    FRONTAL_VIEWS,
    _check_jpg_root,
    _views_by_study,
    image_path,
    read_image_metadata,
)
from medtemporal.sources.release_files import read_table

if TYPE_CHECKING:
    import pandas as pd

SPLIT_CSV = "mimic-cxr-2.0.0-split.csv.gz"
SPLIT_COLUMNS: tuple[str, ...] = ("dicom_id", "study_id", "subject_id", "split")
"""Columns of the MIMIC-CXR-JPG 2.0.0 split file, in order."""
SPLITS: tuple[str, ...] = ("train", "validate", "test")


@dataclass(frozen=True)
class StudyRecord:
    """One study of the metadata."""

    subject_id: int
    study_id: int
    time: pd.Timestamp | None
    """``StudyDate`` + ``StudyTime``; None when the metadata's values cannot be parsed."""
    split: str
    images: tuple[tuple[str, str], ...]
    """``(path relative to the MIMIC-CXR-JPG root, ViewPosition)`` per image, frontal first (module doc)."""

    @property
    def patient(self) -> str:
        """``p``-prefixed subject id, as the other MIMIC readers write it."""
        return f"p{self.subject_id}"

    @property
    def study(self) -> str:
        """``s``-prefixed study id."""
        return f"s{self.study_id}"

    @property
    def frontal(self) -> str | None:
        """Path of the study's first frontal image, None when it has none."""
        return next((p for p, v in self.images if v in FRONTAL_VIEWS), None)


def split_path(mimic_cxr_jpg: Path, split_file: Path | None = None) -> Path:
    """``split_file``, else the split file at the root (gzipped or not), with one sentence when it is missing."""
    if split_file is not None:
        if not split_file.is_file():
            raise InvalidInputError(f"The split file {split_file} does not exist; pass the {SPLIT_CSV} of the "
                                    "MIMIC-CXR-JPG release.")
        return split_file
    for name in (SPLIT_CSV, SPLIT_CSV.removesuffix(".gz")):
        if (mimic_cxr_jpg / name).is_file():
            return mimic_cxr_jpg / name
    raise InvalidInputError(f"{mimic_cxr_jpg} has no {SPLIT_CSV}; put the split file of the MIMIC-CXR-JPG release "
                            "there, or name it with --split-file.")


def read_split(path: str | Path) -> pd.DataFrame:
    """The split file as a frame of `SPLIT_COLUMNS` (ids as integers, ``dicom_id`` and ``split`` as text), read
    whole by the one reader of released files (`medtemporal.sources.release_files.read_table`).

    Raises:
        InvalidInputError: the file is missing, cut short or lacks a column, or a row holds an id that is not an
            integer or a split other than `SPLITS` (naming its line).
    """
    table = read_table(path, usecols=SPLIT_COLUMNS, what="the split file of the MIMIC-CXR-JPG 2.0.0 release")
    table.integers(("study_id", "subject_id"), "use the split file of the MIMIC-CXR-JPG release unchanged")
    df = table.frame[list(SPLIT_COLUMNS)]
    odd = ~df["split"].isin(SPLITS)
    if odd.any():
        row = int(odd.to_numpy().nonzero()[0][0])
        raise InvalidInputError(f"{table.where(row)}: split {df['split'].iat[row]!r} is not one of the release's "
                                f"({', '.join(SPLITS)}); use the split file of the MIMIC-CXR-JPG release unchanged.")
    return df


def read_study_table(mimic_cxr_jpg: str | Path, split_file: str | Path | None = None,
                     ) -> tuple[dict[int, list[StudyRecord]], Counter[str]]:
    """Every study of the metadata with its split, grouped by subject (module doc).

    Args:
        mimic_cxr_jpg: The MIMIC-CXR-JPG root (holds ``files/``, the metadata and, by default, the split file).
        split_file: The split file, when it is not at the root.

    Returns:
        Subject id → the subject's studies ordered by time (``StudyDate`` then ``StudyTime``; unparsable times
        last), then by study id; and the exclusion counts.
    """
    import pandas as pd

    jpg = Path(mimic_cxr_jpg)
    images = read_image_metadata(_check_jpg_root(jpg))
    split = read_split(split_path(jpg, Path(split_file) if split_file is not None else None))
    per_study = split.groupby("study_id")["split"].agg(lambda s: tuple(sorted(set(s))))
    views = _views_by_study(images)
    firsts = images.groupby("study_id", sort=False).agg(subject_id=("subject_id", "first"), dt=("dt", "min"))
    excluded: Counter[str] = Counter()
    by_subject: dict[int, list[StudyRecord]] = defaultdict(list)
    for study_id, subject_id, dt in firsts.itertuples():
        splits = per_study.get(study_id)
        if splits is None:
            excluded["study_not_in_split"] += 1
            continue
        if len(splits) > 1:
            excluded["study_split_inconsistent"] += 1
            continue
        refs = tuple((image_path(subject_id, study_id, d), v) for d, v in views[int(study_id)])
        by_subject[int(subject_id)].append(StudyRecord(int(subject_id), int(study_id),
                                                       None if pd.isna(dt) else dt, splits[0], refs))
    for studies in by_subject.values():
        studies.sort(key=lambda s: (s.time is None, s.time if s.time is not None else 0, s.study_id))
    return dict(sorted(by_subject.items())), excluded
