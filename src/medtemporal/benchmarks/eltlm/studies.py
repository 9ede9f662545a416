"""MIMIC-CXR-JPG studies by id: subject, time and the frontal image that shows the study.

ELTLM names studies by id only (``Picture number``). A study's time is its
``StudyDate`` + ``StudyTime`` and its image the frontal view chosen by MI-CXR's
rule (`medtemporal.sources.mimic_cxr`: ``PA`` over ``AP``, then the smallest
``dicom_id``), both read from ``mimic-cxr-2.0.0-metadata.csv.gz``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from medtemporal.sources.mimic_cxr import (
    FRONTAL_VIEWS,
    _check_jpg_root,
    _views_by_study,
    image_path,
    read_image_metadata,
)

if TYPE_CHECKING:
    import pandas as pd



@dataclass(frozen=True)
class StudyInfo:
    """One MIMIC-CXR study as the metadata describes it."""

    subject: str
    """``p``-prefixed subject id."""
    study: str
    """``s``-prefixed study id."""
    time: pd.Timestamp | None
    """``StudyDate`` + ``StudyTime``; None when the metadata's values are invalid."""
    frontal: str | None
    """Path of the chosen frontal JPEG relative to the root; None for a lateral-only study."""
    view: str | None


def read_studies(mimic_cxr_jpg: str | Path) -> dict[str, StudyInfo]:
    """Study id (``s5…``) → `StudyInfo` from the metadata CSV of a MIMIC-CXR-JPG root.

    Raises:
        InvalidInputError: the root or its metadata file is missing or malformed.
    """
    import pandas as pd
    images = read_image_metadata(_check_jpg_root(Path(mimic_cxr_jpg)))
    views = _views_by_study(images)
    firsts = images.groupby("study_id", sort=False).agg(subject_id=("subject_id", "first"), dt=("dt", "min"))
    studies: dict[str, StudyInfo] = {}
    for study_id, subject_id, dt in firsts.itertuples():
        dicom, view = views[int(study_id)][0]
        frontal = image_path(subject_id, study_id, dicom) if view in FRONTAL_VIEWS else None
        time = None if pd.isna(dt) else dt
        studies[f"s{study_id}"] = StudyInfo(f"p{subject_id}", f"s{study_id}", time, frontal, view if frontal else None)
    return studies
