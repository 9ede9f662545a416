"""3D-RAD (the ``3d-rad`` benchmark): six tasks over CT-RATE chest CT volumes.

Paper: ``seeds/004`` (3D-RAD); what the release really does: FACTS §1. Tasks
(release numbering): 1 Image Observation, 2 Anomaly Detection, 3 Medical
Computation (open); 4 Existence Detection (Yes/No as A/B), 5 Static and
6 Longitudinal Temporal Diagnosis (A–D). Where each rule lives:

* `labels` — the 18 CT-RATE labels, task ids, fixed choices, the temporal category rule.
* `text` — Task 4–6 question wording (the released CSVs' phrasings; Task 6's three parts).
* `open_questions` — open Tasks 1–3 from report text by rules.
* `pipeline` — CT-RATE timelines → items of the six tasks.
* `release` — the 41 released CSVs (33,910 rows), volume-name mapping; written back by
  ``medtemporal export BENCH --format 3drad --out DIR``.
* `command` — ``medtemporal build 3d-rad`` options and manifest.
* `scoring` — the released ``"X."`` rule beside strict extraction; open-task metrics as released.
* `baselines` — question-only baselines (``rad3d:history``).
* `volumes` — how a volume reaches a 2D model (protocol ``ct``: slices, montage, volume), cached.
* `report` — tables in the paper's layout, both scoring rules, macro and micro.
* ``prompts/`` — the answering prompts (``rad3d_open``, ``rad3d_closed``) and the QA-generation ones.

Deviations from the release are listed in ``docs/3d-rad.md``.
"""

from __future__ import annotations

from pathlib import Path

from medtemporal.benchmarks.rad3d.known_releases import RELEASES
from medtemporal.benchmarks.rad3d.published import TABLES
from medtemporal.family import AuditRules, Benchmark, BenchmarkSpec, DemoSection, DemoSteps, Published, RunDefaults, register
from medtemporal.benchmarks.rad3d.glossary import GLOSSARY
from medtemporal.benchmarks.rad3d import baselines, scoring, volumes  # noqa: F401  (register rules, metrics, backend, protocol)
from medtemporal.benchmarks.rad3d.command import add_arguments, build
from medtemporal.benchmarks.rad3d.labels import BENCHMARK, CLOSED_TASKS, OPEN_TASKS, VERSION
from medtemporal.benchmarks.rad3d.release import write_official
from medtemporal.benchmarks.rad3d.scoring import CLOSED_METRICS, OPEN_METRICS, RELEASED, TASK4_AS_TEXT
from medtemporal.scoring.clinical import CT_CLINICAL

DEMO_MODELS = ("baseline:constant-B", "baseline:constant-D", "rad3d:history", "baseline:random")
"""Reference rows: always-No (Task 4), always-D (Tasks 5–6), the Task 6 history rule, random."""


def export_official(bench: Benchmark, out: Path) -> int:
    """Write ``bench`` in the released layout (``OUT/<TaskN_Name>/<subtask>.csv``); return the rows written."""
    return write_official(bench.items, out)


def demo(out: Path, patients: int, seed: int) -> DemoSection:
    """CT-RATE phantoms (at most 40 patients, 64 × 64 × 32 volumes: quick), build, reference baselines, report."""
    steps = DemoSteps(out, BENCHMARK)
    data = steps.data("ct-rate")
    phantoms = ["ct-rate", "--patients", str(min(patients, 40)), "--seed", str(seed), "--shape", "64,64,32",
                "--out", str(data)]
    steps.build("--ct-rate", str(data), seed=seed)
    for model in DEMO_MODELS:
        steps.run(model, "--tasks", ",".join(CLOSED_TASKS), name=model.replace(":", "-"))
    return steps.section("3D-RAD", phantoms)


AUDIT_NOTES = {
    "task4/*": "Existence answers are the scan's CT-RATE label, 0 → No, 1 → Yes (as the 3D-RAD paper builds them), "
               "so each subtype carries its label's prevalence: always-No scores 82.01 macro on the released CSVs. "
               "Compare models with baseline:constant-B, not with chance.",
    "task5/*": "Temporal categories come from the labels of the patient's scans (as the 3D-RAD paper builds them), "
               "and most labels are absent throughout: always-D (No Abnormality) scores 46.09 macro on the "
               "released CSVs. Compare models with baseline:constant-D, not with chance.",
    "task6/*": "Each question states the label's history as [0/1, ...] by the paper's design (the 3D-RAD paper: "
               "'prior information is provided as a sequence of binary labels'), and the history decides "
               "Refractory/Resolved against New/No Abnormality: rad3d:history scores 75.92 macro on the release. "
               "Compare models with rad3d:history, not with chance.",
}
"""Subtypes the paper's own design makes answerable without the images (`AuditRules.notes`)."""

CITATION = r"""@misc{3drad,
  title        = {{3D-RAD}: A Comprehensive {3D} Radiology Med-{VQA} Dataset with Multi-Temporal Analysis and Diverse
                  Diagnostic Tasks},
  howpublished = {\url{https://github.com/Tang-xiaoxiao/M3D-RAD}},
}"""
"""The paper, as the dataset card of ``export --format hf`` cites it (only what the paper and its release state)."""


SPEC = register("benchmark", BENCHMARK, citation=CITATION)(BenchmarkSpec(
    glossary=GLOSSARY,
    name=BENCHMARK,
    version=VERSION,
    licence="credentialed",
    description="3D-RAD: six tasks over CT-RATE chest CT volumes (open Tasks 1-3; existence and temporal diagnosis 4-6)",
    add_arguments=add_arguments,
    build=build,
    prompts={**{t: "rad3d_open" for t in OPEN_TASKS}, **{t: "rad3d_closed" for t in CLOSED_TASKS}},
    extractors={**{t: "text" for t in OPEN_TASKS}, **{t: "letter" for t in CLOSED_TASKS}},
    metrics={**{t: OPEN_METRICS for t in OPEN_TASKS}, **{t: CLOSED_METRICS for t in CLOSED_TASKS}},
    extra_metrics={t: CT_CLINICAL for t in OPEN_TASKS},  # ours beside the release's (not in the paper)
    report="medtemporal.benchmarks.rad3d.report:write_rad3d_report",
    variants={"as released": RELEASED, "task 4 as the release computes it": TASK4_AS_TEXT},
    # volumes reach a 2D model as 32 axial slices unless the user picks another protocol; the release: greedy,
    # max_new_tokens 256 (eval_3DRAD.py 34-52)
    defaults=RunDefaults(protocol="ct", generation={"temperature": 0.0, "max_tokens": 256}),
    audit=AuditRules(notes=AUDIT_NOTES),
    demo=demo,
    published=Published(tables=TABLES, releases=RELEASES, exports={"3drad": export_official}),
))
