"""Phantom MIMIC-CXR-JPG, MIMIC-CXR reports and MIMIC-Ext-CXR-QBA data with exact ground truth.

`write_cxr_phantoms` writes what a user of the real datasets has on disk, so
that `medtemporal.sources.mimic_cxr.read_timelines` reads both the same way::

    OUT/mimic-cxr-jpg/mimic-cxr-2.0.0-metadata.csv.gz
    OUT/mimic-cxr-jpg/mimic-cxr-2.0.0-split.csv.gz                  (the official split's layout, by patient)
    OUT/mimic-cxr-jpg/files/p10/p10000032/s50414267/<dicom_id>.jpg   (not with images=False)
    OUT/mimic-cxr-jpg/files/p10/p10000032/s50414267.txt              (report, as mimic-cxr-reports unzips)
    OUT/mimic-ext-cxr-qba/scene_data/p10/p10000032/s50414267.scene_graph.json
    OUT/mimic-ext-cxr-qba/metadata/{study,patient}_metadata.{parquet,csv.gz}
    OUT/mimic-ext-cxr-qba/quality_mappings.csv
    OUT/phantom_truth.jsonl   (not in the real datasets: the truth, one line per study)
    OUT/phantom_manifest.json (written last: the checksum of every file, `medtemporal.provenance`; marks the data synthetic)

Ids are random like the real ones (subjects ``1xxxxxxx``, studies ``5xxxxxxx``
not in time order, DICOM ids of five 8-hex groups); dates are shifted into the
2100s. Each patient follows `trajectory.simulate_patient` and every frontal and
lateral image renders its visit's truth (`render.render_cxr`).

Messy cases real data has, each seeded and rare: patients with fewer than
five visits, uncertain observations, low-quality observations, observations
missing for an absent finding, bilateral findings split into a left and a
right observation, studies with two frontal images, two studies of a patient
at the same time, lateral-only studies and one truncated (corrupt) JPEG. The
truth file flags each (``messy`` per study; ``annotated``/``certain``/
``quality_ok`` per finding). Reports are laid out in the header shapes real
reports use, some without a findings section (`cxr_text.LAYOUTS`; the truth's
``report_layout``), each holding the same findings-then-impression words.

The split file puts whole patients in ``train``, ``validate`` and ``test``
(`SPLIT_SHARES` of the patients, by a seeded draw per patient; at least one
test patient, and one training patient from two patients on; the truth's
``split``). Split and layouts come from seeded streams of their own
(``[seed, patient, 3]`` and ``[seed, patient, 4]``), so every other file is
what it was before they were added.

Details of the QBA files that could not be checked against the release are
written as the reader documents them (`medtemporal.sources.mimic_cxr`):
quality levels 0-5 for D..A++, ``timestamp_since_first`` as a duration,
laterality ``unspecified`` for unsided findings, and the entity names in
`QBA_NAMES`. Observations carry bounding boxes for positive findings only.
The per-study ``sNNNNNNNN.metadata.json`` copies of the study metadata that the
release also has are not written (nothing reads them; a MIMIC-scale cohort
would need 228,000 more files).
"""

from __future__ import annotations

import gzip
import io
import json
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from medtemporal.bounds import IMAGE_MAX, PATIENTS_MAX, check_range, check_seed
from medtemporal.errors import InvalidInputError
from medtemporal.phantoms import cxr_text
from medtemporal.phantoms.out import prepare_out
from medtemporal.provenance import PHANTOM_TRUTH, write_phantom_manifest
from medtemporal.phantoms.render import region_boxes, render_cxr
from medtemporal.phantoms.trajectory import (
    ENTITIES,
    UNGRADED,
    EntityState,
    PatientTruth,
    Visit,
    change_of,
    simulate_patient,
)
from medtemporal.sources.mimic_cxr import METADATA_COLUMNS, METADATA_CSV, image_path, report_path
from medtemporal.sources.mimic_cxr_studies import SPLIT_COLUMNS, SPLIT_CSV
from medtemporal.sources.mimic_qba import QUALITY_GRADES, STUDY_METADATA, scene_graph_path
from medtemporal.progress import progress_bar

JPG_DIR, QBA_DIR = "mimic-cxr-jpg", "mimic-ext-cxr-qba"
PROFILES = ("longitudinal", "mimic")
GENERATOR = "medtemporal phantoms cxr"
"""Visit-count profiles: most patients with 5-15 visits, or MIMIC-like (mean 3.5 studies per patient)."""

QBA_NAMES: dict[str, str] = {
    **{e: e for e in ENTITIES},
    "sub-diaphragmatic air": "subdiaphragmatic air",
    "vascular congestion": "pulmonary vascular congestion",
}
"""Our entity name → the ``obs_entities`` name written (unverified against the release)."""

_CATEGORIES: dict[str, list[str]] = {
    e: ["ANATOMICAL_FINDING", "DISEASE"]
    for e in ("pleural effusion", "pneumothorax", "cardiomegaly", "pulmonary edema", "consolidation", "atelectasis")
}
_SUBCATEGORIES = {
    "pleural effusion": ["PLEURA"], "pneumothorax": ["PLEURA"], "cardiomegaly": ["CARDIAC"],
    "normal cardiac silhouette": ["CARDIAC"], "bony structures intact": ["BONES"],
}
_BILATERAL_ONLY = frozenset({"pulmonary edema", "vascular congestion"})
_TECHNIQUE = {"CHEST (PA AND LAT)": "Chest PA and lateral", "CHEST (PORTABLE AP)": "Portable AP chest radiograph"}
_ALWAYS_ANNOTATED = frozenset(
    {"pleural effusion", "pneumothorax", "cardiomegaly", "pulmonary edema", "consolidation", "bony structures intact"}
)
"""Entities every report mentions (negative defaults); others are left unmentioned now and then when absent."""
_QUALITY_KEYS = (
    "region_quality", "entity_quality", "sentence_name_quality", "change_quality", "issue_level",
    "localization_quality",
)
_P_UNCERTAIN, _P_LOW_QUALITY, _P_UNANNOTATED, _P_SPLIT = 0.03, 0.025, 0.03, 0.5
SPLIT_SHARES: Mapping[str, float] = {"test": 0.3, "validate": 0.1, "train": 0.6}
"""Share of the patients in each split of the phantom split file (the real test split holds 0.4% of them: a
phantom needs enough test patients to score)."""
_INDICATIONS = ("___ with shortness of breath.", "___ with chest pain, evaluate for acute process.",
                "___ year old with fever and cough.", "History: ___ with hypoxia.", "___ status post line placement.")


@dataclass(frozen=True)
class CxrPhantom:
    """Where a phantom cohort was written and what it holds."""

    root: Path
    mimic_cxr_jpg: Path
    qba: Path
    truth: Path
    patients: int
    studies: int
    images: int
    """Image rows in the metadata CSV (files written only with images)."""
    corrupt_image: str | None
    """Path (relative to ``mimic_cxr_jpg``) of the truncated JPEG, if any."""


@dataclass
class _Roles:
    short: set[int]
    equal_time: set[int]
    lateral_only: set[int]
    corrupt: int | None


def write_cxr_phantoms(
    out: str | Path,
    *,
    patients: int,
    seed: int = 0,
    images: bool = True,
    image_size: int = 320,
    profile: str = "longitudinal",
    overwrite: bool = False,
) -> CxrPhantom:
    """Write a phantom cohort under ``out`` (which must not exist or be empty, or hold a cohort to replace with
    ``overwrite``).

    Args:
        out: Output folder.
        patients: Number of patients.
        seed: Random seed; the same seed writes byte-identical files.
        images: Render and write the JPEGs (metadata, reports and scene graphs are always written).
        image_size: Image width and height in pixels.
        profile: ``longitudinal`` or ``mimic`` (see `PROFILES`).
        overwrite: replace a cohort already in ``out`` (`medtemporal.phantoms.out.prepare_out`).

    Returns:
        The paths and counts of what was written.
    """
    out = Path(out)
    check_range(patients, "--patients", 1, PATIENTS_MAX)
    check_range(image_size, "--image-size", 64, IMAGE_MAX)
    check_seed(seed)
    if profile not in PROFILES:
        raise InvalidInputError(f"profile must be one of {', '.join(PROFILES)} (got {profile!r}).")
    prepare_out(out, overwrite, GENERATOR)
    jpg, qba = out / JPG_DIR, out / QBA_DIR
    (qba / "metadata").mkdir(parents=True)
    (jpg / "files").mkdir(parents=True)
    (qba / "scene_data").mkdir()

    root = np.random.default_rng(seed)
    n_visits, roles = _plan(root, patients, profile, images)
    subjects = np.sort(_unique_ids(root, patients, 10_000_000, 20_000_000))
    study_ids = _unique_ids(root, int(n_visits.sum()), 50_000_000, 60_000_000)
    csv_rows: list[tuple[Any, ...]] = []
    study_rows: list[dict[str, Any]] = []
    corrupt: str | None = None
    first = 0
    splits = patient_splits(seed, patients)
    with (out / PHANTOM_TRUTH).open("w", encoding="utf-8", newline="\n") as truth_fh:
        for i in progress_bar(range(patients), desc="phantom patients", unit="patient"):
            ids = study_ids[first : first + n_visits[i]].tolist()
            first += int(n_visits[i])
            writer = _PatientWriter(int(subjects[i]), ids, seed, i, jpg, qba, images, image_size, roles, splits[i])
            corrupt = writer.write(truth_fh, csv_rows, study_rows) or corrupt
    _write_tables(jpg, qba, csv_rows, study_rows)
    _write_split(jpg, csv_rows, dict(zip(subjects.tolist(), splits)))
    write_phantom_manifest(out, GENERATOR, seed=seed, patients=patients, images=images,
                           image_size=image_size, profile=profile)
    return CxrPhantom(out, jpg, qba, out / PHANTOM_TRUTH, patients, len(study_rows), len(csv_rows), corrupt)


def _plan(root: np.random.Generator, patients: int, profile: str, images: bool) -> tuple[np.ndarray, _Roles]:
    """Visit counts per patient and which patients carry the per-patient messy cases."""
    order = root.permutation(patients)
    if profile == "mimic":
        n = np.minimum(root.geometric(0.285, size=patients), 60)
        short: set[int] = set()
    else:
        n = np.minimum(4 + root.geometric(0.35, size=patients), 15)
        n_short = max(1, round(0.12 * patients)) if patients >= 4 else 0
        short = {int(p) for p in order[:n_short]}
        for p in short:
            n[p] = int(root.integers(2, 5))
    eligible = [int(p) for p in order if int(p) not in short and n[p] >= 5] or [int(p) for p in order if n[p] >= 2]
    k = max(1, round(0.03 * patients))
    equal, lateral = set(eligible[:k]), set(eligible[k : 2 * k])
    corrupt = (eligible[2 * k :] or eligible or [None])[0] if images else None
    return n.astype(int), _Roles(short, equal, lateral, corrupt)


def patient_splits(seed: int, patients: int) -> list[str]:
    """The split of each patient: ranked by a draw from the patient's own stream ``[seed, patient, 3]``, the
    lowest `SPLIT_SHARES` ["test"] of them in test (at least one), the next in validate, the rest in train (at
    least one from two patients on)."""
    draws = [float(np.random.default_rng([seed, i, 3]).random()) for i in range(patients)]
    n_test = max(1, round(SPLIT_SHARES["test"] * patients))
    n_validate = min(round(SPLIT_SHARES["validate"] * patients), max(0, patients - n_test - 1))
    out = ["train"] * patients
    for rank, i in enumerate(sorted(range(patients), key=lambda k: draws[k])):
        out[i] = "test" if rank < n_test else "validate" if rank < n_test + n_validate else "train"
    return out


def _unique_ids(rng: np.random.Generator, n: int, low: int, high: int) -> np.ndarray:
    seen: dict[int, None] = {}
    while len(seen) < n:
        for v in rng.integers(low, high, size=n - len(seen) + 16).tolist():
            seen.setdefault(v, None)
    return np.array(list(seen)[:n], dtype=np.int64)


class _PatientWriter:
    """Writes one patient's images, reports, scene graphs and truth lines."""

    def __init__(self, subject: int, study_ids: list[int], seed: int, index: int, jpg: Path, qba: Path,
                 images: bool, size: int, roles: _Roles, split: str) -> None:
        self.subject, self.study_ids, self.jpg, self.qba = subject, study_ids, jpg, qba
        self.images, self.size, self.index = images, size, index
        self.truth: PatientTruth = simulate_patient(np.random.default_rng([seed, index, 0]), len(study_ids))
        self.meta = np.random.default_rng([seed, index, 1])
        self.render_rng = np.random.default_rng([seed, index, 2])
        self.layout_rng = np.random.default_rng([seed, index, 4])
        self.split = split
        self.roles = roles
        self.silhouette = bool(self.meta.random() < 0.5)
        self.boxes = region_boxes(self.truth.anatomy, size)
        (jpg / report_path(subject, 0)).parent.mkdir(parents=True, exist_ok=True)
        (qba / scene_graph_path(subject, 0)).parent.mkdir(parents=True, exist_ok=True)

    def write(self, truth_fh: Any, csv_rows: list[tuple[Any, ...]], study_rows: list[dict[str, Any]]) -> str | None:
        """Write every visit; return the corrupt image path when this patient carries it."""
        n = len(self.study_ids)
        visits = list(self.truth.visits)
        messy_visit: dict[int, str] = {}
        if self.index in self.roles.equal_time:
            k = int(self.meta.integers(1, n))
            visits[k] = replace(visits[k], days_since_first=visits[k - 1].days_since_first)
            messy_visit[k] = "equal_timestamp"
        for role, tag in ((self.roles.lateral_only, "lateral_only"), ({self.roles.corrupt}, "corrupt_image")):
            if self.index in role:
                free = [v for v in range(1, n) if v not in messy_visit] or [0]
                messy_visit[int(self.meta.choice(free))] = tag
        days, ms = int(self.meta.integers(0, 80 * 365)), int(self.meta.integers(0, 86_400_000))
        start = datetime(2110, 1, 1) + timedelta(days=days, milliseconds=ms)
        times = [start + timedelta(milliseconds=round(v.days_since_first * 86_400_000)) for v in visits]
        corrupt = None
        prev: dict[str, EntityState] | None = None
        prev_devices: tuple[str, ...] = ()
        for k, (visit, study, when) in enumerate(zip(visits, self.study_ids, times)):
            tag = messy_visit.get(k)
            views = self._views(tag)
            dicoms = [_dicom_id(self.meta) for _ in views]
            frontal = _chosen_frontal(views, dicoms)
            frontal_path = image_path(self.subject, study, frontal) if frontal else None
            annotations = self._annotate(visit.states)
            layout = str(self.layout_rng.choice(list(cxr_text.LAYOUTS), p=list(cxr_text.LAYOUTS.values())))
            graph, report, num_obs, quality = self._scene_and_report(
                study, visit.states, prev, visit.devices, prev_devices, annotations, views, dicoms, k, layout, when
            )
            self._write_text(study, graph, report)
            if self.images:
                truncate = frontal if tag == "corrupt_image" else None
                self._write_images(study, visit, views, dicoms, truncate)
                if tag == "corrupt_image" and frontal_path:
                    corrupt = frontal_path
            procedure = _procedure(views)
            for view, dicom in zip(views, dicoms):
                csv_rows.append(_csv_row(dicom, self.subject, study, view, self.size, when, procedure, self.meta))
            study_rows.append({
                "patient_id": f"p{self.subject}", "study_id": f"s{study}", "quality": quality,
                "num_observations": num_obs, "procedure": procedure,
                "timestamp_since_first": pd.Timedelta(when - times[0]),
                "timespan_since_prev": pd.Timedelta(when - times[k - 1]) if k else pd.NaT,
            })
            messy = [tag] if tag else []
            messy += ["short_timeline"] if n < 5 else []
            messy += ["two_frontal"] if sum(v in ("PA", "AP") for v in views) > 1 else []
            line = {
                "patient_id": f"p{self.subject}", "study_id": f"s{study}", "visit": k + 1,
                "days_since_first": round((when - times[0]).total_seconds() / 86400, 6),
                "timestamp": when.isoformat(timespec="milliseconds"), "views": views, "frontal": frontal_path,
                "messy": messy, "devices": list(visit.devices), "split": self.split, "report_layout": layout,
                "findings": {
                    e: {
                        "present": s.present, "severity": cxr_text.severity_word(e, s.severity),
                        "severity_level": s.severity, "laterality": s.laterality,
                        **{f: annotations[e][f] for f in ("change", "annotated", "certain", "quality_ok")},
                    }
                    for e, s in visit.states.items()
                },
            }
            truth_fh.write(json.dumps(line, separators=(",", ":")) + "\n")
            prev, prev_devices = dict(visit.states), visit.devices
        return corrupt

    def _views(self, tag: str | None) -> list[str]:
        if tag == "lateral_only":
            return ["LATERAL"]
        r = self.meta.random()
        lateral = "LL" if self.meta.random() < 0.2 else "LATERAL"
        if tag == "corrupt_image" or r < 0.50:
            return ["AP"]
        if r < 0.83:
            return ["PA", lateral]
        if r < 0.92:
            return ["AP", lateral]
        return ["PA", "AP", lateral] if r < 0.96 else ["AP", "AP"]

    def _annotate(self, states: Mapping[str, EntityState]) -> dict[str, dict[str, Any]]:
        """Per entity: annotated at all, certain, of sufficient quality (the messy observation cases)."""
        u = self.meta.random((len(states), 3)).tolist()
        out = {}
        for (e, s), (a, c, q) in zip(states.items(), u):
            if e == "normal cardiac silhouette":
                annotated = self.silhouette
            else:
                annotated = s.present or e in _ALWAYS_ANNOTATED or a >= _P_UNANNOTATED
            out[e] = {
                "annotated": annotated, "certain": c >= _P_UNCERTAIN, "quality_ok": q >= _P_LOW_QUALITY, "change": None,
            }
        return out

    def _scene_and_report(
        self, study: int, states: Mapping[str, EntityState], prev: Mapping[str, EntityState] | None,
        devices: tuple[str, ...], prev_devices: tuple[str, ...], annotations: dict[str, dict[str, Any]],
        views: list[str], dicoms: list[str], k: int, layout: str, when: datetime,
    ) -> tuple[dict[str, Any], str, int, int]:
        """The scene graph and report of one study, their observation count and study quality level."""
        frontal_ids = [d for v, d in zip(views, dicoms) if v in ("PA", "AP")]
        sentences: dict[str, dict[str, str]] = {}
        observations: dict[str, dict[str, Any]] = {}
        regions: dict[str, dict[str, Any]] = {}
        located: list[dict[str, Any]] = []
        obs_sent: list[dict[str, str]] = []
        impression: list[str] = []

        def sentence(section: str, text: str) -> str:
            sid = f"S{len(sentences) + 1:02d}"
            sentences[sid] = {"sent_id": sid, "section": section, "section_type": section, "sentence": text}
            return sid

        def observe(sid: str, obs: dict[str, Any]) -> None:
            oid = f"O{len(observations) + 1:02d}"
            observations[oid] = {"obs_id": oid, **obs}
            obs_sent.append({"observation_id": oid, "sentence_id": sid})
            for r in obs["regions"]:
                name = r["region"]
                side = name.split()[0] if name.split()[0] in ("left", "right") else "unspecified"
                regions.setdefault(name, {"region": name, "laterality": side, "region_localization_quality": 5})
                located.append({"region": name, "observation_id": oid, "distances": [], "where_specified": "direct"})

        findings: list[str] = []
        for e in ENTITIES:
            s, p, ann = states[e], (prev[e] if prev else None), annotations[e]
            d = cxr_text.describe(e, p, s, certain=ann["certain"])
            ann["change"] = change_of(p, s)
            if not ann["annotated"]:
                continue
            findings.append(d.text)
            sid = sentence("FINDINGS", d.text)
            if d.change in ("new", "worsened", "improved", "resolved") or (k == 0 and s.present and ann["certain"]):
                impression.append(d.text)
            parts = [s]
            if s.present and s.laterality == "bilateral" and e not in _BILATERAL_ONLY and self.meta.random() < _P_SPLIT:
                parts = [EntityState(True, s.severity, "right"), EntityState(True, s.severity, "left")]
            for part in parts:
                summary = d.summary if part is s else cxr_text.describe(e, None, part).summary
                observe(sid, self._observation(e, part, d, summary, ann, frontal_ids))
        for device in sorted(set(devices) | set(prev_devices)):
            text = cxr_text.device_sentence(device, device in prev_devices, device in devices)
            if text:
                findings.append(text)
                sid = sentence("FINDINGS", text)
                if device in devices:
                    observe(sid, self._device(device))
        if not impression:
            abnormal = any(s.present for e, s in states.items() if e not in UNGRADED)
            impression = ["No significant interval change." if abnormal else "No acute cardiopulmonary process."]
        for text in impression:
            sentence("IMPRESSION", text)
        study_quality = {k: min((o["obs_quality"][k] for o in observations.values()), default=5) for k in _QUALITY_KEYS}
        indication = _INDICATIONS[int(self.meta.integers(len(_INDICATIONS)))]
        graph = {
            "patient_id": f"p{self.subject}",
            "study_id": f"s{study}",
            "sentences": sentences,
            "top_level_obs_ids": list(observations),
            "observations": observations,
            "indication": {
                "indication_summary": indication, "patient_info": "", "indication": indication, "evaluation": "",
                "associated_sentence_ids": [], "associated_obs_ids": [], "answer_for_indication": None,
            },
            "regions": regions,
            "located_at_relations": located,
            "obs_relations": [],
            "obs_sent_relations": obs_sent,
            "region_region_relations": [],
            "study_quality": study_quality,
            "study_img_localization_quality": {d: (5 if d in frontal_ids else 1) for d in dicoms},
        }
        procedure = _procedure(views)
        text = cxr_text.report(
            examination=procedure, indication=indication, technique=_TECHNIQUE[procedure],
            comparison="___." if k else "None.", findings=findings, impression=impression, layout=layout,
            wet_read_time=when.strftime("%I:%M %p").lstrip("0"),
        )
        return graph, text, len(observations), min(study_quality.values())

    def _observation(self, e: str, s: EntityState, d: cxr_text.Sentence, summary: str,
                     ann: dict[str, Any], frontal_ids: list[str]) -> dict[str, Any]:
        """One QBA observation node for entity ``e`` in state ``s`` worded as ``d``."""
        certain = ann["certain"]
        name = cxr_text.phrase(e, s) if s.present and e not in UNGRADED else d.name
        regions = _regions(e, s.laterality, s.present)
        levels = [3 if u < 0.2 else 4 if u < 0.5 else 5 for u in self.meta.random(len(_QUALITY_KEYS)).tolist()]
        quality = dict(zip(_QUALITY_KEYS, levels))
        if not ann["quality_ok"]:
            quality["issue_level"] = int(self.meta.integers(0, 2))
        localization = {}
        if s.present:
            boxes = [list(self.boxes[r]) for r in regions if r in self.boxes]
            missing = [r for r in regions if r not in self.boxes]
            localization = {
                i: {"image_id": i, "localization_reference_ids": regions, "bboxes": boxes, "instance_mask_ids": [],
                    "missing_localization": missing, "is_fallback": False, "localization_quality": 5}
                for i in frontal_ids
            }
        if certain:
            probability = "positive" if s.present else "negative"
        else:
            probability = "possible" if s.present else "unlikely"
        return _node(
            name=name, summary=summary, regions=regions, laterality=s.laterality or "unspecified", entity=QBA_NAMES[e],
            categories=_CATEGORIES.get(e, ["ANATOMICAL_FINDING"]), subcategories=_SUBCATEGORIES.get(e, ["LUNG_FIELD"]),
            probability=probability, certain=certain, positive=s.present, severity=d.severity,
            change=d.change if certain else None, change_sentence=d.text if certain and d.change else None,
            quality=quality, localization=localization,
        )

    def _device(self, device: str) -> dict[str, Any]:
        name = cxr_text.DEVICE_TEXT[device]
        return _node(
            name=name, summary=f"There is {cxr_text.article(name)} {name}.", regions=["mediastinum"],
            laterality="unspecified", entity=device, categories=["DEVICE"], subcategories=["TUBES_AND_LINES"],
            probability="positive", certain=True, positive=True, severity=None, change=None, change_sentence=None,
            quality=dict.fromkeys(_QUALITY_KEYS, 5), localization={},
        )

    def _write_text(self, study: int, graph: dict[str, Any], report: str) -> None:
        (self.jpg / report_path(self.subject, study)).write_text(report, encoding="utf-8")
        graph_text = json.dumps(graph, separators=(",", ":"))
        (self.qba / scene_graph_path(self.subject, study)).write_text(graph_text, encoding="utf-8")

    def _write_images(
        self, study: int, visit: Visit, views: list[str], dicoms: list[str], truncate: str | None
    ) -> None:
        """Render every image of a study; the image ``truncate`` names is cut short (the corrupt JPEG)."""
        folder = self.jpg / image_path(self.subject, study, "x")
        folder.parent.mkdir()
        for view, dicom in zip(views, dicoms):
            image = render_cxr(
                visit.states, view, self.size, self.render_rng, anatomy=self.truth.anatomy, devices=visit.devices
            )
            buf = io.BytesIO()
            image.save(buf, format="JPEG", quality=90)
            data = buf.getvalue()
            if dicom == truncate:
                data = data[: len(data) * 6 // 10]
            folder.with_name(f"{dicom}.jpg").write_bytes(data)


def _node(
    *, name: str, summary: str, regions: list[str], laterality: str, entity: str, categories: list[str],
    subcategories: list[str], probability: str, certain: bool, positive: bool, severity: str | None,
    change: str | None, change_sentence: str | None, quality: dict[str, int], localization: dict[str, Any],
) -> dict[str, Any]:
    """An observation node with the fields (and field order) of a MIMIC-Ext-CXR-QBA scene graph."""
    return {
        "name": name,
        "summary_sentence": summary,
        "child_type": None,
        "child_level": 0,
        "regions": [{"region": r, "distances": []} for r in regions],
        "non_resolved_regions": [],
        "laterality": laterality,
        "default_regions": [],
        "obs_entities": [entity],
        "obs_entities_parents": [],
        "non_resolved_obs_entities": [],
        "obs_categories": categories,
        "obs_subcategories": subcategories,
        "probability": probability,
        "certainty": "certain" if certain else "uncertain",
        "positiveness": "pos" if positive else "neg",
        "modifiers": {"temporal": [], "severity": [severity] if severity else [], "texture": [], "spread": []},
        "changes": [change] if change else [],
        "change_sentence": change_sentence,
        "from_report": True,
        "obs_quality": quality,
        "localization": localization,
    }


_FIXED_REGION = {
    "cardiomegaly": "heart", "normal cardiac silhouette": "heart", "bony structures intact": "bony thorax",
    "vascular congestion": "hilar structures", "pulmonary edema": "lungs",
}
_ZONE = {
    "pleural effusion": "costophrenic angle", "pneumothorax": "apical zone", "sub-diaphragmatic air": "hemidiaphragm",
    "elevated hemidiaphragm": "hemidiaphragm", "consolidation": "lower lung zone", "lung opacity": "mid lung zone",
    "atelectasis": "lower lung zone",
}


def _regions(e: str, side: str | None, present: bool) -> list[str]:
    """The scene-graph regions of an observation (region names as `render.region_boxes` knows them)."""
    if e in _FIXED_REGION:
        return [_FIXED_REGION[e]]
    zone = _ZONE[e]
    if not present and zone != "hemidiaphragm":
        return ["lungs"]
    return [f"{s} {zone}" for s in (("right", "left") if side in (None, "bilateral") else (side,))]


def _dicom_id(rng: np.random.Generator) -> str:
    return "-".join(f"{v:08x}" for v in rng.integers(0, 2**32, size=5, dtype=np.uint64).tolist())


def _chosen_frontal(views: list[str], dicoms: list[str]) -> str | None:
    """The documented choice: PA over AP, then the smallest dicom id."""
    for wanted in ("PA", "AP"):
        ids = sorted(d for v, d in zip(views, dicoms) if v == wanted)
        if ids:
            return ids[0]
    return None


def _procedure(views: list[str]) -> str:
    return "CHEST (PORTABLE AP)" if "PA" not in views and "AP" in views else "CHEST (PA AND LAT)"


_VIEW_MEANING = {"PA": "postero-anterior", "AP": "antero-posterior", "LATERAL": "lateral", "LL": "left lateral"}


def _csv_row(dicom: str, subject: int, study: int, view: str, size: int, when: datetime, procedure: str,
             rng: np.random.Generator) -> tuple[Any, ...]:
    orientation = "Recumbent" if view == "AP" and rng.random() < 0.3 else "Erect"
    hhmmss = when.hour * 10000 + when.minute * 100 + when.second
    return (dicom, subject, study, procedure, view, size, size, when.strftime("%Y%m%d"),
            f"{hhmmss}.{when.microsecond // 1000:03d}", procedure, _VIEW_MEANING[view], orientation)


def _gzip_csv(df: pd.DataFrame, path: Path) -> None:
    """CSV, gzip-compressed with a fixed header (no time stamp, no name) so that output is byte-identical."""
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
        gz.write(df.to_csv(index=False, lineterminator="\n").encode("utf-8"))


def _write_split(jpg: Path, csv_rows: list[tuple[Any, ...]], split_of: Mapping[int, str]) -> None:
    """The split file: one row per image of the metadata, the patient's split (`SPLIT_COLUMNS`)."""
    rows = [(r[0], r[2], r[1], split_of[r[1]]) for r in csv_rows]
    df = pd.DataFrame(rows, columns=list(SPLIT_COLUMNS)).sort_values(["subject_id", "study_id", "dicom_id"])
    _gzip_csv(df, jpg / SPLIT_CSV)


def _write_tables(jpg: Path, qba: Path, csv_rows: list[tuple[Any, ...]], study_rows: list[dict[str, Any]]) -> None:
    images = pd.DataFrame(csv_rows, columns=list(METADATA_COLUMNS)).sort_values(["subject_id", "study_id", "dicom_id"])
    _gzip_csv(images, jpg / METADATA_CSV)
    studies = pd.DataFrame(study_rows).sort_values(["patient_id", "study_id"], ignore_index=True)
    studies.to_parquet(qba / f"{STUDY_METADATA}.parquet", index=False)
    _gzip_csv(studies, qba / f"{STUDY_METADATA}.csv.gz")
    patients = studies.groupby("patient_id", sort=True).agg(
        total_studies=("study_id", "size"), total_study_timespan=("timestamp_since_first", "max")
    ).reset_index()
    patients.to_parquet(qba / "metadata/patient_metadata.parquet", index=False)
    _gzip_csv(patients, qba / "metadata/patient_metadata.csv.gz")
    mappings = pd.DataFrame({"quality_level": range(len(QUALITY_GRADES)), "grade": QUALITY_GRADES})
    mappings.to_csv(qba / "quality_mappings.csv", index=False, lineterminator="\n")
