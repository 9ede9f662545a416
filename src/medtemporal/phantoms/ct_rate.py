"""Synthetic CT-RATE: NIfTI chest CT volumes in Hounsfield units, labels, reports and metadata, in CT-RATE's layout.

Each patient has 1–8 scans (letters a, b, …); every scan has the raw
reconstruction ``_1`` and sometimes a smoothed ``_2``. Each of the 18 labels
follows a per-patient trajectory over the scans (``absent``, ``persist``,
``appear``, ``resolve``, ``fluctuate``) and, where present, is drawn in the
volume (`draw`): nodules as spheres of a stated diameter, pleural and
pericardial effusion as fluid of a stated thickness, cardiomegaly as a larger
heart, emphysema as near-air patches, consolidation, opacity and atelectasis
as denser lung, calcifications as bright spots on the aortic and coronary
walls, lymph nodes, a hiatal hernia, mosaic and septal patterns, dilated
airways and a catheter as medical material. Reports state sizes and
thicknesses in the sentence forms `medtemporal.benchmarks.rad3d.open_questions` reads.
Volumes are stored as int16 ``HU + 1024`` with ``RescaleIntercept = -1024``, as
scanners store them.

Messy cases (with four or more patients): a scan whose raw reconstruction is
missing (only ``_2``), a corrupt ``.nii.gz``, and a label row without a volume.
``phantom_truth.jsonl`` holds every volume's labels, measurements and patterns.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from medtemporal.bounds import PATIENTS_MAX, check_memory, check_range, check_seed
from medtemporal.errors import InvalidInputError, require
from medtemporal.phantoms.out import prepare_out
from medtemporal.provenance import PHANTOM_TRUTH, write_phantom_manifest
from medtemporal.sources.ct_rate import LABELS, volume_path
from medtemporal.progress import progress_bar

GENERATOR = "medtemporal phantoms ct-rate"
PATTERNS = ("absent", "persist", "appear", "resolve", "fluctuate")
PREVALENCE = 0.35
"""Share of (patient, label) trajectories that are not ``absent``."""
LOBES = ("right upper lobe", "right middle lobe", "right lower lobe", "left upper lobe", "left lower lobe")
FOV_MM = (350.0, 350.0, 300.0)
"""Field of view (x, y, z) in mm, whatever the voxel grid."""


@dataclass(frozen=True)
class CtRatePhantom:
    """What `write_ct_rate` wrote."""

    root: Path
    truth: Path
    patients: int
    scans: int
    volumes: int


def _presence(rng: np.random.Generator, pattern: str, n: int) -> list[int]:
    if pattern == "absent" or n == 1 and pattern in ("appear", "resolve"):
        return [0] * n if pattern == "absent" else [int(pattern == "resolve")] * n
    if pattern == "persist":
        return [1] * n
    if pattern in ("appear", "resolve"):
        k = int(rng.integers(1, n))
        on = [int(i >= k) for i in range(n)]
        return on if pattern == "appear" else [1 - v for v in on]
    return [int(v) for v in rng.integers(0, 2, n)]


def _measures(rng: np.random.Generator) -> dict[str, object]:
    return {"nodule_diameter_mm": int(rng.integers(8, 31)), "nodule_lobe": str(rng.choice(LOBES)),
            "node_size_mm": [int(rng.integers(12, 26)), int(rng.integers(8, 12))],
            "pleural_thickness_mm": int(rng.integers(10, 41)), "pleural_side": str(rng.choice(["right", "left"])),
            "pericardial_thickness_mm": int(rng.integers(8, 21)), "lobe": str(rng.choice(LOBES))}


def report(labels: dict[str, int], m: dict[str, object]) -> tuple[str, str]:
    """Findings and impression of one scan, sizes stated."""
    s = ["The trachea is patent.", "The heart is enlarged." if labels["Cardiomegaly"] else "The heart is normal."]
    lobe = m["lobe"]
    lines = {
        "Lung nodule": f"A nodule with a diameter of {m['nodule_diameter_mm']} mm is seen in the {m['nodule_lobe']}.",
        "Lymphadenopathy": "A lymph node measuring {}x{} mm is observed in the mediastinum.".format(*m["node_size_mm"]),
        "Pleural effusion": f"Pleural effusion with a thickness of {m['pleural_thickness_mm']} mm is seen in the "
                            f"{m['pleural_side']} hemithorax.",
        "Pericardial effusion": f"Pericardial effusion with a thickness of {m['pericardial_thickness_mm']} mm is noted.",
        "Consolidation": f"Consolidation is seen in the {lobe}.",
        "Lung opacity": f"Ground glass opacity is observed in the {lobe}.",
        "Atelectasis": "Atelectasis is seen in the lung bases.",
        "Emphysema": "Emphysema with bullous changes is observed in the upper lobes.",
        "Arterial wall calcification": "Calcification is seen in the aortic wall.",
        "Coronary artery wall calcification": "Calcification is noted in the coronary arteries.",
        "Medical material": "A central venous catheter is observed in the superior vena cava.",
        "Mosaic attenuation pattern": "Mosaic attenuation pattern is noted in both lungs.",
        "Peribronchial thickening": "Peribronchial thickening is seen in the lower lobes.",
        "Bronchiectasis": "Bronchiectasis is observed in the right lower lobe.",
        "Interlobular septal thickening": "Interlobular septal thickening is seen in the lung periphery.",
        "Pulmonary fibrotic sequela": "Fibrotic sequelae are observed in the left upper lobe.",
        "Hiatal hernia": "A hiatal hernia is seen in the distal esophagus.",
    }
    present = [label for label in LABELS if labels[label]]
    s += [lines[label] for label in present if label in lines]
    impression = f"{present[0]}." if present else "No acute abnormality."
    return " ".join(s), impression


def _grid(shape: tuple[int, int, int]) -> tuple[np.ndarray, ...]:
    """Voxel-centre coordinates in mm from the volume centre (x right-left, y anterior-posterior, z feet-head)."""
    axes = [(np.arange(n) + 0.5) * (f / n) - f / 2 for n, f in zip(shape, FOV_MM)]
    return np.meshgrid(*axes, indexing="ij", sparse=True)


def _ellipsoid(g, centre, radii) -> np.ndarray:
    x, y, z = g
    return ((x - centre[0]) / radii[0]) ** 2 + ((y - centre[1]) / radii[1]) ** 2 + ((z - centre[2]) / radii[2]) ** 2 <= 1


_LOBE_CENTRE = {"right upper lobe": (-65, 0, 60), "right middle lobe": (-70, -30, 0), "right lower lobe": (-65, 30, -55),
                "left upper lobe": (65, 0, 60), "left lower lobe": (65, 30, -55)}


def draw(shape: tuple[int, int, int], labels: dict[str, int], m: dict[str, object], rng: np.random.Generator) -> np.ndarray:
    """A chest volume in HU (float32, x × y × z) showing every present label."""
    g = _grid(shape)
    x, y, z = g
    vol = np.full(shape, -1000.0, np.float32)
    vol[_ellipsoid(g, (0, 0, 0), (160, 120, 200))] = 40  # body
    lungs = _ellipsoid(g, (-70, 5, 0), (55, 80, 120)) | _ellipsoid(g, (70, 5, 0), (55, 80, 120))
    vol[lungs] = -850
    vol[_ellipsoid(g, (-5, -10, 60), (30, 25, 45))] = -100  # mediastinal fat, where lymph nodes show
    right = x < 0
    heart_r = 62 if labels["Cardiomegaly"] else 45
    heart = _ellipsoid(g, (10, -35, -40), (heart_r, heart_r * 0.8, heart_r * 0.8))
    if labels["Pericardial effusion"]:
        t = float(m["pericardial_thickness_mm"])
        vol[_ellipsoid(g, (10, -35, -40), (heart_r + t, heart_r * 0.8 + t, heart_r * 0.8 + t))] = 10
    vol[heart] = 40
    aorta = (x - 25) ** 2 + (y - 40) ** 2 <= 12 ** 2
    vol[aorta & (np.abs(z) < 130)] = 40
    if labels["Arterial wall calcification"]:
        vol[aorta & ((x - 25) ** 2 + (y - 40) ** 2 >= 9 ** 2) & (np.abs(z) < 130)] = 600
    if labels["Coronary artery wall calcification"]:
        for c in ((10 - heart_r + 3, -35, -30), (10 + heart_r - 3, -40, -45)):
            vol[_ellipsoid(g, c, (6, 6, 6))] = 700
    if labels["Emphysema"]:
        vol[lungs & (z > 50) & (np.sin(x / 9.0) * np.sin(y / 9.0) > 0.5)] = -990
    if labels["Mosaic attenuation pattern"]:
        vol[lungs & (np.sin(x / 14.0) * np.sin(z / 14.0) > 0.3)] = -700
    if labels["Interlobular septal thickening"]:
        vol[lungs & ((np.abs(np.sin(y / 5.0)) < 0.12) | (np.abs(np.sin(z / 5.0)) < 0.12))] = 0
    if labels["Pulmonary fibrotic sequela"]:
        vol[lungs & ~right & (z > 40) & (np.abs(np.sin((x + z) / 6.0)) < 0.15)] = 20
    if labels["Lung opacity"]:
        vol[lungs & _ellipsoid(g, _LOBE_CENTRE[str(m["lobe"])], (30, 30, 30))] = -500
    if labels["Consolidation"]:
        vol[lungs & _ellipsoid(g, _LOBE_CENTRE[str(m["lobe"])], (22, 22, 22))] = 35
    if labels["Atelectasis"]:
        vol[lungs & (z < -90) & (y > 40)] = 50
    for tube_x in (-40, 40):
        tube = (x - tube_x) ** 2 + (y - 10) ** 2
        if labels["Peribronchial thickening"]:
            vol[lungs & (z < 0) & (tube <= 9 ** 2)] = 40
        if labels["Bronchiectasis"] and tube_x < 0:
            vol[lungs & (z < 0) & (tube <= 8 ** 2)] = 40
            vol[lungs & (z < 0) & (tube <= 6 ** 2)] = -1000
        elif labels["Peribronchial thickening"]:
            vol[lungs & (z < 0) & (tube <= 3 ** 2)] = -1000
    if labels["Pleural effusion"]:
        side = right if m["pleural_side"] == "right" else ~right
        vol[lungs & side & (y > 85 - float(m["pleural_thickness_mm"]))] = 15
    if labels["Lung nodule"]:
        cx, cy, cz = _LOBE_CENTRE[str(m["nodule_lobe"])]
        d = float(m["nodule_diameter_mm"])
        vol[_ellipsoid(g, (cx + 10, cy - 10, cz), (d / 2, d / 2, d / 2))] = 50
    if labels["Lymphadenopathy"]:
        a, b = m["node_size_mm"]
        vol[_ellipsoid(g, (-15, -5, 60), (a / 2, b / 2, b / 2))] = 45
    if labels["Hiatal hernia"]:
        vol[_ellipsoid(g, (15, 30, -140), (25, 20, 20))] = -300
    if labels["Medical material"]:
        vol[((x + 20) ** 2 + (y + 20) ** 2 <= 3 ** 2) & (z > 20)] = 3000
    vol += rng.normal(0, 8, shape).astype(np.float32)
    return vol


def _save(path: Path, hu: np.ndarray) -> None:
    nib = require("nibabel", "core")
    spacing = [f / n for f, n in zip(FOV_MM, hu.shape)]
    img = nib.Nifti1Image(np.clip(hu + 1024, -32768, 32767).astype(np.int16), np.diag([*spacing, 1.0]))
    path.parent.mkdir(parents=True, exist_ok=True)
    nib.save(img, str(path))


SCAN_PROFILES = {
    "longitudinal": (0.35, 0.3, 0.15, 0.08, 0.05, 0.03, 0.02, 0.02),
    "ct-rate": (0.87, 0.08, 0.02, 0.01, 0.01, 0.005, 0.0025, 0.0025),
}
"""Probabilities of 1..8 scans per patient: many follow-ups (tests, demos), or CT-RATE-like (about 1.2 scans
per patient and 13% with follow-ups, as the 1,304 validation patients with 169 in Tasks 5–6)."""


def _n_scans(rng: np.random.Generator, profile: str) -> int:
    return int(rng.choice(np.arange(1, 9), p=SCAN_PROFILES[profile]))


VOXEL_BYTES = 20
"""Bytes of memory per voxel while a phantom volume is drawn (`draw`, then written as int16)."""


def write_ct_rate(out: str | Path, *, patients: int, seed: int = 0, shape: tuple[int, int, int] = (96, 96, 64),
                  volumes: bool = True, profile: str = "longitudinal", overwrite: bool = False) -> CtRatePhantom:
    """Write a phantom CT-RATE validation split under ``out`` (which must be absent or empty, or hold one to replace
    with ``overwrite``).

    Args:
        out: Folder to create; it becomes the CT-RATE root (holds ``dataset/``).
        patients: Number of patients (validation patients ``valid_1`` … ``valid_N``).
        seed: Random seed; the same seed writes the same files.
        shape: Voxel grid (x, y, z) of every volume.
        volumes: False writes the CSVs and truth only (no NIfTI files).
        profile: Scans per patient, a key of `SCAN_PROFILES`.
    """
    out = Path(out)
    check_range(patients, "--patients", 1, PATIENTS_MAX)
    check_seed(seed)
    if volumes:  # the float volume, its float64 noise, the clipped copy and the int16 one, at once
        check_memory(VOXEL_BYTES * math.prod(shape), f"--shape {','.join(map(str, shape))}",
                     "pass a smaller --shape (CT-RATE volumes are about 512,512,300), or --no-volumes")
    if profile not in SCAN_PROFILES:
        raise InvalidInputError(f"--profile {profile!r} is unknown; use one of {', '.join(SCAN_PROFILES)}.")
    prepare_out(out, overwrite, GENERATOR)
    rng = np.random.default_rng(seed)
    label_rows, report_rows, meta_rows, truth = [], [], [], []
    messy = {"missing_raw": patients - 1, "corrupt": patients - 2, "no_volume": patients - 3} if patients >= 4 else {}
    n_scans = n_volumes = 0
    for p in progress_bar(range(1, patients + 1), desc="ct-rate phantoms", unit="patient", leave=False):
        n = _n_scans(rng, profile)
        patterns = {label: (str(rng.choice(PATTERNS[1:])) if rng.random() < PREVALENCE else "absent") for label in LABELS}
        track = {label: _presence(rng, patterns[label], n) for label in LABELS}
        measures = _measures(rng)
        for k in range(n):
            letter = "abcdefgh"[k]
            labels = {label: track[label][k] for label in LABELS}
            findings, impression = report(labels, measures)
            recons = [1, 2] if rng.random() < 0.3 else [1]
            case = next((c for c, q in messy.items() if q == p - 1 and k == n - 1), None)
            if case == "missing_raw":
                recons = [2]
            n_scans += 1
            hu = draw(shape, labels, measures, rng) if volumes else None
            for r in recons:
                name = f"valid_{p}_{letter}_{r}.nii.gz"
                path = out / volume_path(name)
                written = volumes and case != "no_volume"
                if written:
                    _save(path, hu if r == 1 else (hu + np.roll(hu, 1, 0)) / 2)
                    n_volumes += 1
                    if case == "corrupt":
                        path.write_bytes(path.read_bytes()[: max(64, path.stat().st_size // 3)])
                label_rows.append({"VolumeName": name, **labels})
                report_rows.append({"VolumeName": name, "ClinicalInformation_EN": "", "Technique_EN": "",
                                    "Findings_EN": findings, "Impressions_EN": impression})
                meta_rows.append({"VolumeName": name, "RescaleSlope": 1, "RescaleIntercept": -1024,
                                  "XYSpacing": f"[{FOV_MM[0] / shape[0]}, {FOV_MM[1] / shape[1]}]",
                                  "ZSpacing": FOV_MM[2] / shape[2]})
                truth.append({"VolumeName": name, "patient": f"valid_{p}", "letter": letter, "reconstruction": r,
                              "labels": labels, "measurements": measures, "patterns": patterns,
                              "messy": case, "volume_written": bool(written)})
    ds = out / "dataset"
    for folder, name, rows in (("multi_abnormality_labels", "valid_predicted_labels.csv", label_rows),
                               ("radiology_text_reports", "validation_reports.csv", report_rows),
                               ("metadata", "validation_metadata.csv", meta_rows)):
        (ds / folder).mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(ds / folder / name, index=False)
    truth_path = out / PHANTOM_TRUTH
    truth_path.write_text("".join(json.dumps(t, sort_keys=True) + "\n" for t in truth), encoding="utf-8")
    write_phantom_manifest(out, GENERATOR, patients=patients, seed=seed, shape=list(shape))
    return CtRatePhantom(out, truth_path, patients, n_scans, n_volumes)
