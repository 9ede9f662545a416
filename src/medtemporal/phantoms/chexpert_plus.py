"""Phantom CheXpert Plus: ``df_chexpert_plus_240401.csv`` and PNG images with exact ground truth.

Patients follow the same seeded trajectories as the CXR phantoms
(`trajectory.simulate_patient`) and their images are drawn by the same
renderer (`render.render_cxr`), so every report sentence agrees with both
images. A follow-up impression has one sentence per finding present at either
visit: a *condition-change sentence* (stable/unchanged/persistent/no change
in, increased/worsening/progression of, decreased/improving/improvement in,
resolved) for a finding seen before, and a *single-visit sentence* ("New small
right pleural effusion.") for a new one; device changes and an occasional
extra single-visit sentence keep some reports from being all-change, as in
real data. First visits are described without comparison.

Layout (as released): ``df_chexpert_plus_240401.csv`` (27 columns, one row per
image, ``path_to_image`` = ``train/patientNNNNN/studyN/view1_frontal.jpg``),
``PNG/train/.../view1_frontal.png`` (and some ``view2_lateral.png``),
``phantom_truth.jsonl`` (per study: states, changes and sentences) and, written
last, ``phantom_manifest.json`` (the checksums of all of it, which mark the
folder synthetic: `medtemporal.provenance`).

>>> import tempfile
>>> made = write_chexpert_plus(tempfile.mkdtemp(), patients=2, seed=0, image_size=64)
>>> made.patients, made.studies >= 4
(2, True)
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from medtemporal.bounds import IMAGE_MAX, PATIENTS_MAX, check_range, check_seed
from medtemporal.errors import InvalidInputError
from medtemporal.phantoms.out import prepare_out
from medtemporal.phantoms.cxr_text import DEVICE_TEXT, capitalised, phrase, severity_word
from medtemporal.provenance import PHANTOM_TRUTH, write_phantom_manifest
from medtemporal.phantoms.render import render_cxr
from medtemporal.phantoms.trajectory import ENTITIES, EntityState, Visit, change_of, simulate_patient
from medtemporal.sources.chexpert_plus import COLUMNS, CSV_NAME
from medtemporal.progress import progress_bar

GENERATOR = "medtemporal phantoms chexpert-plus"
REPORTED = tuple(e for e in ENTITIES if e not in ("bony structures intact", "normal cardiac silhouette"))
"""Findings the impressions talk about."""

_CHANGE_TEMPLATES: dict[str, tuple[str, ...]] = {
    "unchanged": ("Stable {name}.", "Unchanged {name}.", "Persistent {name}.", "No change in {name}."),
    "worsened": ("Increased {bare}, now {sev}.", "Worsening {name}.", "Progression of {bare}, now {sev}."),
    "improved": ("Decreased {bare}, now {sev}.", "Improving {name}.", "Interval improvement in {bare}, now {sev}."),
    "resolved": ("Resolved {bare}.", "The {bare} has resolved."),
}


@dataclass(frozen=True)
class ChexpertPlusPhantom:
    """What `write_chexpert_plus` wrote."""

    root: Path
    patients: int
    studies: int
    images: int
    csv: Path
    truth: Path


def sentence(
    entity: str, prev: EntityState | None, cur: EntityState, rng: np.random.Generator
) -> tuple[str, str | None] | None:
    """(sentence, change) for ``entity`` at a visit; None when it is absent at both visits."""
    change = change_of(prev, cur)
    if prev is None:
        return (f"{capitalised(phrase(entity, cur))}.", None) if cur.present else None
    if change is None:
        return None
    if change == "new":
        return f"New {phrase(entity, cur)}.", change
    shown = cur if cur.present else prev
    values = {"name": phrase(entity, shown), "bare": phrase(entity, shown, with_severity=False),
              "sev": severity_word(entity, shown.severity) or ""}
    if entity in ("cardiomegaly", "pulmonary edema", "vascular congestion") or not values["sev"]:
        options = tuple(t for t in _CHANGE_TEMPLATES[change] if "{sev}" not in t)
    else:
        options = _CHANGE_TEMPLATES[change]
    template = options[int(rng.integers(len(options)))]
    return template.format(**values), change


def impression(
    prev_visit: Visit | None, visit: Visit, rng: np.random.Generator
) -> list[tuple[str, str | None, str | None]]:
    """(sentence, entity, change) of one study's impression; ``prev_visit`` is None at the first."""
    out: list[tuple[str, str | None, str | None]] = []
    for entity in REPORTED:
        made = sentence(entity, prev_visit.states[entity] if prev_visit else None, visit.states[entity], rng)
        if made:
            out.append((made[0], entity, made[1]))
    if prev_visit is not None:
        before, now = set(prev_visit.devices), set(visit.devices)
        if now and now == before:
            out.append(("Lines and tubes unchanged in position.", None, "unchanged"))
        for device in sorted(now - before):
            out.append((f"Interval placement of {DEVICE_TEXT[device]}.", None, None))
        if rng.random() < 0.15:
            out.append(("No acute osseous abnormality.", None, None))
    if not out:
        quiet = prev_visit is None or rng.random() < 0.5
        text = "No acute cardiopulmonary process." if quiet else "Stable appearance of the chest."
        out.append((text, None, None if prev_visit is None else "unchanged"))
    return out


def write_chexpert_plus(
    out: str | Path,
    *,
    patients: int,
    seed: int = 0,
    image_size: int = 256,
    visits: tuple[int, int] = (2, 6),
    images: bool = True,
    overwrite: bool = False,
) -> ChexpertPlusPhantom:
    """Write a phantom CheXpert Plus folder at ``out`` (which must not exist or be empty, or hold one to replace
    with ``overwrite``).

    Args:
        out: Output folder.
        patients: Number of patients.
        seed: Random seed; the same seed gives byte-identical files.
        image_size: Width and height of the PNGs in pixels.
        visits: Fewest and most studies per patient.
        images: Write the PNGs (False lists them in the CSV only).
    """
    root = Path(out)
    check_range(patients, "--patients", 1, PATIENTS_MAX)
    check_range(image_size, "--image-size", 16, IMAGE_MAX)
    check_seed(seed)
    if not 1 <= visits[0] <= visits[1]:
        raise InvalidInputError(f"visits {visits} must be (fewest, most) with 1 <= fewest <= most.")
    prepare_out(root, overwrite, GENERATOR)
    rows: list[dict[str, str]] = []
    truth_lines: list[str] = []
    n_studies = n_images = 0
    for p in progress_bar(range(patients), desc="phantom patients", unit="patient"):
        rng = np.random.default_rng([seed, p])
        pid = f"patient{p + 1:05d}"
        truth = simulate_patient(rng, int(rng.integers(visits[0], visits[1] + 1)))
        age, sex = int(rng.integers(25, 90)), str(rng.choice(["Male", "Female"]))
        split = "valid" if rng.random() < 0.05 else "train"
        for v, visit in enumerate(truth.visits):
            prev = truth.visits[v - 1] if v else None
            study = f"{split}/{pid}/study{v + 1}"
            sentences = impression(prev, visit, rng)
            imp = " ".join(s for s, _, _ in sentences)
            findings = "Comparison with the prior study." if prev else "No prior studies for comparison."
            views = [("view1_frontal", "Frontal", str(rng.choice(["AP", "PA"])))]
            if rng.random() < 0.3:
                views.append(("view2_lateral", "Lateral", "LL"))
            for name, fl, ap in views:
                rel = f"{study}/{name}"
                if images:
                    png = root / "PNG" / f"{rel}.png"
                    png.parent.mkdir(parents=True, exist_ok=True)
                    render_cxr(visit.states, ap if fl == "Frontal" else "LATERAL", image_size, rng,
                               anatomy=truth.anatomy, devices=visit.devices).save(png, optimize=False)
                n_images += 1
                rows.append(_row(rel, fl, ap, pid, v + 1, imp, findings, age, sex, split))
            truth_lines.append(json.dumps({
                "patient": pid, "study": study, "order": v + 1, "frontal": f"{study}/view1_frontal.jpg",
                "states": {e: {"present": s.present, "severity": s.severity, "laterality": s.laterality}
                           for e, s in visit.states.items()},
                "devices": list(visit.devices),
                "sentences": [{"text": s, "entity": e, "change": c} for s, e, c in sentences],
            }, sort_keys=True))
            n_studies += 1
    csv_path = root / CSV_NAME
    with csv_path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    truth_path = root / PHANTOM_TRUTH
    truth_path.write_text("\n".join(truth_lines) + "\n", encoding="utf-8")
    write_phantom_manifest(root, GENERATOR, seed=seed, patients=patients,
                           studies=n_studies, images=n_images, image_size=image_size)
    return ChexpertPlusPhantom(root, patients, n_studies, n_images, csv_path, truth_path)


def _row(rel: str, frontal_lateral: str, ap_pa: str, pid: str, order: int, imp: str, findings: str,
         age: int, sex: str, split: str) -> dict[str, str]:
    report = f"NARRATIVE:\nCHEST RADIOGRAPH.\n\nFINDINGS:\n{findings}\n\nIMPRESSION:\n{imp}\n"
    row = {c: "" for c in COLUMNS}
    row.update({
        "path_to_image": f"{rel}.jpg", "path_to_dcm": f"{rel}.dcm", "frontal_lateral": frontal_lateral,
        "ap_pa": ap_pa if frontal_lateral == "Frontal" else "", "deid_patient_id": pid,
        "patient_report_date_order": str(order), "report": report, "section_narrative": "CHEST RADIOGRAPH.",
        "section_findings": findings, "section_impression": imp, "age": str(age), "sex": sex,
        "race": "Unknown", "ethnicity": "Unknown", "interpreter_needed": "No", "insurance_type": "Unknown",
        "recent_bmi": "", "deceased": "No", "split": split,
    })
    return row
