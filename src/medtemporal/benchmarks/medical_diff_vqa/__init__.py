"""Medical-Diff-VQA (the ``medical-diff-vqa`` benchmark): questions about a main chest X-ray and what changed
since a reference one.

Release: Hu et al., "Expert Knowledge-Aware Image Difference Graph Representation Learning for
Difference-Aware Medical Visual Question Answering" (KDD 2023; dataset first named MIMIC-Diff-VQA);
PhysioNet ``medical-diff-vqa`` 1.0.1 (credentialed; the authors refuse re-hosting). Generator:
``Holipori/MIMIC-Diff-VQA``; the paper's model and evaluation: ``Holipori/EKAID``. Facts with sources:
``FACTS.md`` §5.2. Where each rule lives:

* `release` — readers of ``mimic_pair_questions.csv`` and ``mimic_all.csv`` (one image per study, as
  ``get_mimic_all.py`` chose it), the two test sets (``--split release``: the ``split`` column's test rows;
  ``--split ekaid``: EKAID's last 10% of rows in file order), the 1.0.0 order check.
* `command` — ``medtemporal build medical-diff-vqa``: tasks ``closed`` (yes/no), ``open`` and
  ``difference``, subtype the question type; the reference image first, then the main one.
* `metrics` — BLEU-1…4, METEOR, ROUGE-L and CIDEr by pycocoevalcap as EKAID's ``evaluation.py`` (Java);
  accuracy is the shared exact match of the extracted answer, over closed and open questions.
* `ekaid` — the variant ``EKAID`` scored beside ours: the raw output, exact-string accuracy with ``acc``'s
  open/closed rule and exclusions, per-type metrics on each type's questions alone (CIDEr included).
* `phantom` — ``medtemporal phantoms medical-diff-vqa``: both files over a ``phantoms cxr`` cohort, every
  question type worded as the release's generator, answers from the cohort's truth.
* `report` — EKAID's tables (all questions, per type, difference on its own, accuracy total / open /
  closed) with the text-only levels of the audit, and the per-type figure.
* ``prompts/`` — ours: the paper publishes none for generative models (its model reads question tokens).

No LLM judge is offered (``score --judge`` refuses): the paper scores answers by n-gram overlap and exact
match, and a judge rubric without a published protocol would make numbers no one else can compare.
Generation settings are ours: greedy, at most 256 tokens (answers are phrases or a few template sentences).
"""

from __future__ import annotations

from pathlib import Path

from medtemporal.benchmarks.medical_diff_vqa.published import TABLES, run_conditions
from medtemporal.family import AuditRules, BenchmarkSpec, DemoSection, DemoSteps, Published, RunDefaults, register
from medtemporal.benchmarks.medical_diff_vqa.glossary import GLOSSARY
from medtemporal.benchmarks.medical_diff_vqa import metrics, phantom  # noqa: F401  (register metrics, phantom kind)
from medtemporal.benchmarks.medical_diff_vqa.command import BENCHMARK, VERSION, add_arguments, build
from medtemporal.benchmarks.medical_diff_vqa.ekaid import NAME as EKAID
from medtemporal.benchmarks.medical_diff_vqa.ekaid import VARIANT as EKAID_VARIANT
from medtemporal.scoring.clinical import CXR_LABELS, TEMPORAL

TEXT_METRICS = ("diffvqa_bleu_1", "diffvqa_bleu_2", "diffvqa_bleu_3", "diffvqa_bleu_4", "diffvqa_meteor",
                "diffvqa_rouge_l", "diffvqa_cider")
DEMO_MODELS = ("baseline:oracle", "baseline:constant-no")
"""Baselines that answer every question: the oracle (the metrics' ceiling) and a constant "no"."""
DEMO_PAIRS = 120


def demo(out: Path, patients: int, seed: int) -> DemoSection:
    """The Medical-Diff-VQA phantom over the CXR cohort the CXR families share (written first when absent),
    build, the oracle and a constant "no", report."""
    steps = DemoSteps(out, BENCHMARK)
    cxr, data = steps.data("cxr"), steps.data(BENCHMARK)
    phantoms = [BENCHMARK, "--cxr", str(cxr), "--patients", str(patients), "--seed", str(seed), "--pairs",
                str(DEMO_PAIRS), "--out", str(data)]  # writes the shared CXR cohort first when it is not there
    steps.build("--diff-vqa", str(data), "--mimic-cxr-jpg", str(cxr / "mimic-cxr-jpg"), seed=seed)
    for model in DEMO_MODELS:
        steps.run(model)
    return steps.section("Medical-Diff-VQA", phantoms)


COMPARE = "compare models with the report's 'Text alone' row, not with chance."
AUDIT_NOTES = {
    "*/view": "The release's generator asks about AP studies only 5% of the time (question_gen.py view_ques), so "
              "'is this PA view?' is mostly yes and 'which view is this image taken?' mostly 'PA view' whatever the "
              "image; " + COMPARE,
    "closed/presence": "The release's generator asks 'is the X bilateral?' only when the answer is yes and words "
                       "its 'no' questions differently ('... in the right area?' without 'lung'), so the wording "
                       "tells part of the answer (question_gen.py L645-1099); " + COMPARE,
    "open/location": "The generator's location questions name the finding ('where is the pneumothorax?'), and a "
                     "finding lies in few places (a pneumothorax is apical), so the question narrows the answer "
                     "to a side (question_gen.py location_ques); " + COMPARE,
    "open/level": "The generator's level questions name the finding ('what level is the pleural effusion?'), and "
                  "each finding takes few of the level library's words (an effusion is small, a cardiomegaly "
                  "mild), so the question narrows the answer (question_gen.py level_ques); " + COMPARE,
    "difference/difference": "The generator's area questions name the area ('what has changed in the left apical "
                             "area?'), which names the finding there, and 'nothing has changed.' answers every "
                             "pair without a change (question_gen.py difference questions, get_caption); "
                             + COMPARE,
}
"""Question types the release's own generator makes partly answerable from their text
(`AuditRules.notes`; measured on phantoms written by the same templates: docs/medical-diff-vqa.md)."""

SPEC = register("benchmark", BENCHMARK)(BenchmarkSpec(
    glossary=GLOSSARY,
    name=BENCHMARK,
    audit=AuditRules(notes=AUDIT_NOTES),
    version=VERSION,
    licence="credentialed",
    description="Medical-Diff-VQA: questions about a main chest X-ray and its differences from a reference one; "
    "BLEU/METEOR/ROUGE-L/CIDEr and exact-match accuracy",
    add_arguments=add_arguments,
    build=build,
    prompts={"closed": "medical_diff_vqa_closed", "open": "medical_diff_vqa_open", "difference": "medical_diff_vqa_difference"},
    metrics={"closed": ("accuracy", *TEXT_METRICS), "open": ("accuracy", *TEXT_METRICS), "difference": TEXT_METRICS},
    extra_metrics={"difference": (*TEMPORAL, *CXR_LABELS)},  # ours beside EKAID's (not in the paper)
    report="medtemporal.benchmarks.medical_diff_vqa.report:write_medical_diff_vqa_report",
    demo=demo,
    defaults=RunDefaults(generation={"temperature": 0.0, "max_tokens": 256}),
    variants={EKAID: EKAID_VARIANT},
    published=Published(tables=TABLES, conditions=run_conditions),
))
