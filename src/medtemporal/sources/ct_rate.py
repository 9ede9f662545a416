"""CT-RATE as released: NIfTI volumes, predicted labels, reports and metadata.

Layout under the CT-RATE root (the folder holding ``dataset/``)::

    dataset/{train,valid}/<split>_N/<split>_N_x/<split>_N_x_k.nii.gz
    dataset/multi_abnormality_labels/{train,valid}_predicted_labels.csv
    dataset/radiology_text_reports/{train,validation}_reports.csv
    dataset/metadata/{train,validation}_metadata.csv

``N`` is the patient, the letter ``x`` the scan (a, b, … in time order: the
patient's timeline) and ``k`` the reconstruction; ``_1`` is the raw scan.
The labels CSV has ``VolumeName`` and the 18 label columns of `LABELS`; the
reports CSV ``VolumeName``, ``Findings_EN`` and ``Impressions_EN``; the
metadata CSV ``VolumeName``, ``RescaleSlope``, ``RescaleIntercept``,
``XYSpacing`` and ``ZSpacing`` (sources: FACTS §1.2).

>>> parse_volume_name("valid_12_b_1.nii.gz")
VolumeName(split='valid', patient='12', letter='b', reconstruction=1)
>>> volume_path("valid_12_b_1.nii.gz")
'dataset/valid/valid_12/valid_12_b/valid_12_b_1.nii.gz'
"""

from __future__ import annotations

import ast
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

from medtemporal.errors import InvalidInputError, require
from medtemporal.progress import progress_bar
from medtemporal.provenance import licence_of
from medtemporal.schema import Finding, ImageRef, Study, Timeline
from medtemporal.sources.release_files import Table, read_table

LABELS: tuple[str, ...] = (
    "Medical material", "Arterial wall calcification", "Cardiomegaly", "Pericardial effusion",
    "Coronary artery wall calcification", "Hiatal hernia", "Lymphadenopathy", "Emphysema", "Atelectasis",
    "Lung nodule", "Lung opacity", "Pulmonary fibrotic sequela", "Pleural effusion", "Mosaic attenuation pattern",
    "Peribronchial thickening", "Consolidation", "Bronchiectasis", "Interlobular septal thickening",
)
"""The 18 label columns of the labels CSV, in file order (after ``VolumeName``)."""
SPLITS = {"valid": ("valid", "validation"), "train": ("train", "train")}
"""Volume split → (label-file prefix, report/metadata-file prefix)."""
"""Written by ``medtemporal phantoms ct-rate`` beside ``dataset/``; makes the data ``synthetic``."""
_NAME = re.compile(r"^(?P<split>[a-z]+)_(?P<patient>\d+)_(?P<letter>[a-z])_(?P<recon>\d+)(?:\.nii\.gz|\.nii|\.npy)?$")


class VolumeName(NamedTuple):
    """The parts of a CT-RATE volume name."""

    split: str
    patient: str
    letter: str
    reconstruction: int


def parse_volume_name(name: str) -> VolumeName:
    """Split ``valid_N_x_k.nii.gz`` into its parts; one clear sentence when it is not such a name."""
    m = _NAME.match(Path(name).name)
    if not m:
        raise InvalidInputError(f"{name!r} is not a CT-RATE volume name (<split>_N_x_k.nii.gz); fix VolumeName.")
    return VolumeName(m["split"], m["patient"], m["letter"], int(m["recon"]))


def volume_path(name: str) -> str:
    """Relative path of volume ``name`` under the CT-RATE root."""
    v = parse_volume_name(name)
    stem = f"{v.split}_{v.patient}"
    return f"dataset/{v.split}/{stem}/{stem}_{v.letter}/{stem}_{v.letter}_{v.reconstruction}.nii.gz"


def check_root(root: str | Path) -> Path:
    """``root`` resolved, or one sentence when it does not hold ``dataset/``."""
    root = Path(root)
    if not (root / "dataset").is_dir():
        raise InvalidInputError(f"{root} does not hold a dataset/ folder; pass the CT-RATE root (--ct-rate).")
    return root.resolve()


def labels_file(root: Path, split: str = "valid") -> Path:
    return root / "dataset" / "multi_abnormality_labels" / f"{SPLITS[split][0]}_predicted_labels.csv"


def reports_file(root: Path, split: str = "valid") -> Path:
    return root / "dataset" / "radiology_text_reports" / f"{SPLITS[split][1]}_reports.csv"


def metadata_file(root: Path, split: str = "valid") -> Path:
    return root / "dataset" / "metadata" / f"{SPLITS[split][1]}_metadata.csv"


def _read(path: Path, columns: tuple[str, ...], what: str) -> Table:
    """A CT-RATE CSV checked whole (`medtemporal.sources.release_files.read_table`), cells as strings."""
    return read_table(path, columns=columns, what=f"CT-RATE's {what} ({path.name}) as released")


def read_labels(path: Path) -> dict[str, tuple[int, ...]]:
    """``VolumeName`` → the 18 labels (0/1) in `LABELS` order."""
    table = _read(path, ("VolumeName", *LABELS), "labels file")
    df = table.frame
    values = df[list(LABELS)]
    bad = ~values.isin(["0", "1", "0.0", "1.0"])
    if bad.to_numpy().any():
        row, col = np.argwhere(bad.to_numpy())[0]
        raise InvalidInputError(f"{table.where(row)}: {LABELS[col]} is {values.iat[row, col]!r}, not 0 or 1; "
                                "fix that row.")
    flags = values.to_numpy().astype(float).astype(int)
    return {name: tuple(int(v) for v in row) for name, row in zip(df["VolumeName"], flags)}


def read_reports(path: Path) -> dict[str, dict[str, str]]:
    """``VolumeName`` → ``{"findings": ..., "impression": ...}``."""
    df = _read(path, ("VolumeName", "Findings_EN", "Impressions_EN"), "reports file").frame
    return {n: {"findings": f, "impression": i} for n, f, i in zip(df["VolumeName"], df["Findings_EN"], df["Impressions_EN"])}


@dataclass(frozen=True)
class Scan:
    """What the metadata says about one volume."""

    slope: float = 1.0
    intercept: float = 0.0
    xy_spacing: tuple[float, float] | None = None
    z_spacing: float | None = None


def _spacing(text: str) -> tuple[float, float] | None:
    try:
        value = ast.literal_eval(text) if text else None
    except (ValueError, SyntaxError):
        return None
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return float(value[0]), float(value[1])
    return None


def read_metadata(path: Path) -> dict[str, Scan]:
    """``VolumeName`` → rescale slope/intercept and spacing."""
    df = _read(path, ("VolumeName", "RescaleSlope", "RescaleIntercept", "XYSpacing", "ZSpacing"), "metadata file").frame
    out = {}
    for row in df.itertuples(index=False):
        try:
            out[row.VolumeName] = Scan(float(row.RescaleSlope or 1), float(row.RescaleIntercept or 0),
                                       _spacing(row.XYSpacing), float(row.ZSpacing) if row.ZSpacing else None)
        except ValueError:
            raise InvalidInputError(f"{path}: the rescale values of {row.VolumeName} are not numbers; fix that row.") from None
    return out


def load_volume(path: str | Path, scan: Scan | None = None,
                pick: Callable[[int], np.ndarray] | None = None) -> np.ndarray:
    """A volume in Hounsfield units (float32, x × y × z), rescaled by the metadata's slope and intercept.

    Args:
        path: a ``.nii`` or ``.nii.gz`` file.
        scan: its metadata row (slope 1, intercept 0 when None).
        pick: given the number of axial slices, the indices of those to keep (all when None); only
            those are converted to floats, so memory stays near the stored volume's size.

    Raises:
        InvalidInputError: the file is missing, not a readable NIfTI, or not 3-D.
    """
    nib = require("nibabel", "core")
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"{path} does not exist; check the CT-RATE root.")
    try:
        data = np.asanyarray(nib.load(str(path)).dataobj)
    except Exception as exc:  # nibabel raises many types for a corrupt file (gzip, EOF, header)
        raise InvalidInputError(f"{path} is not a readable NIfTI volume ({type(exc).__name__}); download it again.") from None
    if data.ndim != 3:
        raise InvalidInputError(f"{path} holds a {data.ndim}-D array; a CT volume must be 3-D (x, y, z).")
    scan = scan or Scan()
    picked = data if pick is None else data[:, :, pick(data.shape[2])]
    return picked.astype(np.float32) * np.float32(scan.slope) + np.float32(scan.intercept)


def readable(path: Path) -> bool:
    """Whether ``path`` opens as NIfTI and, when gzipped, is whole, without decompressing it.

    The header must read, and a ``.gz`` file's trailer (uncompressed size modulo 2**32, RFC 1952)
    must equal the header's data offset plus the voxel bytes: a truncated download fails this.
    """
    nib = require("nibabel", "core")
    try:
        header = nib.load(str(path)).header
        offset = int(header.get_data_offset()) or (
            int(getattr(header, "single_vox_offset", 352)) + header.extensions.get_sizeondisk())
        expected = offset + int(np.prod(header.get_data_shape())) * header.get_data_dtype().itemsize
        if path.name.endswith(".gz"):
            with open(path, "rb") as fh:
                fh.seek(-4, 2)
                return int.from_bytes(fh.read(4), "little") == expected % 2**32
        return path.stat().st_size >= expected
    except Exception:  # nibabel raises many types for a corrupt file (gzip, EOF, header)
        return False


@dataclass
class Loaded:
    """Timelines read from a CT-RATE root, with what was left out and why."""

    timelines: list[Timeline]
    exclusions: Counter[str] = field(default_factory=Counter)
    sources: dict[str, Path] = field(default_factory=dict)


def load_timelines(root: str | Path, split: str = "valid", *, check_volumes: bool = True) -> Loaded:
    """One `Timeline` per patient, scans in letter order, labels and reports of each scan.

    A scan is a `Study` whose ``images`` are its reconstructions on disk (``_1`` first), whose
    ``findings`` are the labels of its raw reconstruction ``_1`` and whose report is that of ``_1``.
    Left out and counted: label rows whose volume is not on disk (``label_row_without_volume``,
    only when ``check_volumes``), unreadable volumes (``unreadable_volume``), scans without a
    labelled raw reconstruction (``scan_without_raw_reconstruction``). Counted and kept: scans whose raw
    reconstruction has no row in the reports file (``scan_without_report``; their report is empty).
    """
    root = check_root(root)
    if split not in SPLITS:
        raise InvalidInputError(f"CT-RATE split {split!r} is unknown; use valid or train.")
    lpath, rpath, mpath = labels_file(root, split), reports_file(root, split), metadata_file(root, split)
    labels = read_labels(lpath)
    reports = read_reports(rpath) if rpath.is_file() else {}
    sources = {"labels": lpath, **({"reports": rpath} if rpath.is_file() else {})}
    if mpath.is_file():
        sources["metadata"] = mpath
    excluded: Counter[str] = Counter()
    scans: dict[str, dict[str, dict[int, str]]] = defaultdict(lambda: defaultdict(dict))
    for name in progress_bar(labels, desc="CT-RATE volumes", unit="volume", leave=False):
        v = parse_volume_name(name)
        rel = volume_path(name)
        if check_volumes:
            if not (root / rel).is_file():
                excluded["label_row_without_volume"] += 1
                continue
            if not readable(root / rel):
                excluded["unreadable_volume"] += 1
                continue
        scans[v.patient][v.letter][v.reconstruction] = name
    timelines = []
    licence = licence_of(root)
    for patient in sorted(scans, key=int):
        studies = []
        for order, letter in enumerate(sorted(scans[patient]), 1):
            recons = scans[patient][letter]
            if 1 not in recons:
                excluded["scan_without_raw_reconstruction"] += 1
                continue
            raw = recons[1]
            images = tuple(ImageRef(path=volume_path(recons[k]), role="volume", label=f"scan {letter}, reconstruction {k}")
                           for k in sorted(recons))
            findings = tuple(Finding(entity=label, present=bool(v)) for label, v in zip(LABELS, labels[raw]))
            if "reports" in sources and raw not in reports:
                excluded["scan_without_report"] += 1
            studies.append(Study(patient_id=f"{split}_{patient}", study_id=f"{split}_{patient}_{letter}", order=order,
                                 images=images, report=reports.get(raw, {}), findings=findings))
        if studies:
            timelines.append(Timeline(patient_id=f"{split}_{patient}", source="ct-rate", licence=licence,
                                      studies=tuple(studies)))
    return Loaded(timelines, excluded, sources)
