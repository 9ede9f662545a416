"""CheXpert Plus as released: ``df_chexpert_plus_240401.csv`` plus the PNG images.

The CSV has one row per image and 27 columns (`COLUMNS`, in this order).
``path_to_image`` reads ``train/patientX/studyY/view1_frontal.jpg`` while the
released PNGs lie at ``PNG/train/patientX/studyY/view1_frontal.png``; `resolve_image`
finds either. A patient's studies are ordered by the integer
``patient_report_date_order``: the release has no dates.

>>> COLUMNS[:3]
('path_to_image', 'path_to_dcm', 'frontal_lateral')
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from medtemporal.errors import InvalidInputError
from medtemporal.progress import progress_bar
from medtemporal.provenance import licence_of
from medtemporal.schema import ImageRef, Study, Timeline
from medtemporal.sources.release_files import read_table

if TYPE_CHECKING:
    import pandas as pd


CSV_NAME = "df_chexpert_plus_240401.csv"
COLUMNS: tuple[str, ...] = (
    "path_to_image", "path_to_dcm", "frontal_lateral", "ap_pa", "deid_patient_id",
    "patient_report_date_order", "report", "section_narrative", "section_clinical_history",
    "section_history", "section_comparison", "section_technique", "section_procedure_comments",
    "section_findings", "section_impression", "section_end_of_impression", "section_summary",
    "section_accession_number", "age", "sex", "race", "ethnicity", "interpreter_needed",
    "insurance_type", "recent_bmi", "deceased", "split",
)
SPLITS = ("train", "valid", "test")
"""Top-level folders of ``path_to_image``."""


def find_csv(root: str | Path) -> Path:
    """The CSV inside dataset folder ``root`` (or ``root`` itself when it is the CSV)."""
    root = Path(root)
    path = root if root.is_file() else root / CSV_NAME
    if not path.is_file():
        raise InvalidInputError(f"{path} does not exist; point --chexpert-plus at the folder holding {CSV_NAME}.")
    return path


def read_csv(path: str | Path) -> pd.DataFrame:
    """Read the CSV as strings (missing values as ""), checking its 27 columns and their order, and that every row
    reaches the last column (a file cut short ends in a row that does not)."""
    path = Path(path)
    table = read_table(path, what=f"CheXpert Plus's {CSV_NAME} as released")
    df = table.frame
    cols = tuple(df.columns)
    if cols != COLUMNS:
        missing = [c for c in COLUMNS if c not in cols]
        what = f"lacks column(s) {', '.join(missing)}" if missing else "has its columns in another order"
        raise InvalidInputError(f"{path} {what}; it must be CheXpert Plus's {CSV_NAME} as released.")
    cut = df.index[~df["split"].isin(SPLITS)]  # the last column: empty or partial in a row cut short
    if len(cut):
        n = int(cut[0])
        where = f"its last record (line {table.line(n)})" if n == len(df) - 1 else f"line {table.line(n)}"
        raise InvalidInputError(
            f"{path}: {where} ends before its last column (split is {df.at[cut[0], 'split']!r}, not train, valid or "
            "test), so the file is cut short or damaged; download it again."
        )
    bad = df.index[~df["patient_report_date_order"].str.fullmatch(r"\d+")]
    if len(bad):
        raise InvalidInputError(
            f"{path}, line {table.line(int(bad[0]))}: patient_report_date_order "
            f"{df.at[bad[0], 'patient_report_date_order']!r} is not an integer; fix that row."
        )
    return df


def image_candidates(path_to_image: str) -> tuple[str, ...]:
    """Relative paths where an image of ``path_to_image`` may lie: the PNG release first.

    Anything before the split folder (``train``/``valid``) is dropped, so released paths
    such as ``/data/CheXpertPlus/PNG/train/...png`` resolve too.

    >>> image_candidates("train/patient1/study2/view1_frontal.jpg")
    ('PNG/train/patient1/study2/view1_frontal.png', 'train/patient1/study2/view1_frontal.png', 'train/patient1/study2/view1_frontal.jpg')
    """
    p = PurePosixPath(path_to_image.replace("\\", "/"))
    splits = [i for i, part in enumerate(p.parts) if part in SPLITS]
    if splits:  # drop any prefix (an absolute path, "PNG/") before the split folder
        p = PurePosixPath(*p.parts[splits[-1] :])
    png = p.with_suffix(".png")
    return (str("PNG" / png), str(png), str(p))


def resolve_image(root: str | Path, path_to_image: str) -> str:
    """The relative path under ``root`` of an existing file for ``path_to_image``.

    Raises:
        InvalidInputError: none of `image_candidates` exists.
    """
    root = Path(root)
    for rel in image_candidates(path_to_image):
        if (root / rel).is_file():
            return rel
    raise InvalidInputError(
        f"No image for {path_to_image} under {root} (looked for {', '.join(image_candidates(path_to_image))}); "
        "check the image root (it holds PNG/)."
    )


def study_key(path_to_image: str) -> tuple[str, str]:
    """(patient folder, study folder) of an image path such as ``train/patient1/study2/view1.jpg``."""
    parts = PurePosixPath(path_to_image.replace("\\", "/")).parts
    if len(parts) < 3:
        raise InvalidInputError(f"path_to_image {path_to_image!r} is not split/patient/study/file; fix the CSV.")
    return parts[-3], parts[-2]


def load_timelines(root: str | Path) -> list[Timeline]:
    """Every patient's studies, ordered by ``patient_report_date_order`` (then study folder).

    A study's images keep the CSV's ``path_to_image`` (resolve with `resolve_image`); its
    ``frontal`` is the first frontal image by path; its ``report`` holds the non-empty
    ``section_*`` columns (without the prefix) and the full ``report``.
    """
    csv = find_csv(root)
    df = read_csv(csv)
    licence = licence_of(csv)
    rows: dict[str, dict[str, list[dict[str, str]]]] = defaultdict(lambda: defaultdict(list))
    for row in df.to_dict("records"):
        patient, study = study_key(row["path_to_image"])
        rows[row["deid_patient_id"] or patient][study].append(row)
    timelines = []
    for patient in progress_bar(sorted(rows), desc="CheXpert Plus patients", unit="patient", leave=False):
        studies = []
        for study_id, images in rows[patient].items():
            orders = {int(r["patient_report_date_order"]) for r in images}
            if len(orders) > 1:
                raise InvalidInputError(
                    f"{csv}: study {patient}/{study_id} has several patient_report_date_order values "
                    f"({sorted(orders)}); fix the CSV."
                )
            images = sorted(images, key=lambda r: r["path_to_image"])
            refs = tuple(
                ImageRef(path=r["path_to_image"], visit=None, role="visit",
                         view=r["ap_pa"] or r["frontal_lateral"] or None)
                for r in images
            )
            frontal = next((r["path_to_image"] for r in images if r["frontal_lateral"] == "Frontal"), None)
            first = images[0]
            report = {k[len("section_"):]: first[k] for k in COLUMNS if k.startswith("section_") and first[k].strip()}
            if first["report"].strip():
                report["report"] = first["report"]
            studies.append(Study(patient_id=patient, study_id=study_id, order=orders.pop(), images=refs,
                                 frontal=frontal, report=report))
        studies.sort(key=lambda s: (s.order, s.study_id))
        timelines.append(Timeline(patient_id=patient, source="chexpert-plus", licence=licence, studies=tuple(studies)))
    return timelines
