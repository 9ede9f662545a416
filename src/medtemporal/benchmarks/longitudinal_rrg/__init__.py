"""Longitudinal radiology report generation (the ``longitudinal-rrg`` benchmark): today's chest X-ray report with
the prior study in view, on MIMIC-CXR's official test split.

The field's main temporal task (Libra, MLRG, HERGen, CXRMate, Longitudinal-MIMIC, MAIRA-2 evaluate it, each
with its own split, prior rule and metric code; FACTS §6.1). One item per study of the official
test split whose report has a findings section (2,347 studies on the release, 289 patients), task
``findings``, and the same studies with an impression for task ``impression`` (1,624); subtype
``with_prior`` or ``no_prior``, each task's two columns (`PRIOR_COLUMNS`) beside its score over all its
items; ``Overall`` is the findings task, the field's headline. Where each rule lives:

* `medtemporal.sources.mimic_cxr_studies` / `medtemporal.sources.mimic_cxr_reports` — the release's
  metadata, split file and report sections (the readers every MIMIC family may use).
* `studies` — which studies are items and each one's prior (the immediately preceding study by StudyDate
  then StudyTime).
* `items` — one item per study and section; captions naming each image's visit and interval.
* `nearest` — the nearest training report by image retrieval (the third baseline), found at build time.
* `command` — ``medtemporal build longitudinal-rrg`` options and manifest.
* `protocols` — ``rrg-current``, ``rrg-prior-images``, ``rrg-prior-report`` (MAIRA-2's layout, the default).
* `baselines` — ``longitudinal_rrg:copy-prior`` (the reports' reference row), ``:normal-report``,
  ``:nearest-report``.
* `extract` — ``longitudinal_rrg_section``: the asked section of an output that writes a whole report.
* `report` — every metric on all, with-prior and no-prior items, copy-prior the reference row, each run minus
  copy-prior; `exports` — each run's reports in CXRMate's and MLRG's CSV shapes; `viewer` — the side-by-side
  per-item page.
* ``prompts/`` — MAIRA-2's reporting instruction and ``PRIOR_REPORT`` layout, cited in each header.

Generation follows the MAIRA-2 example in Libra's README (``temperature=0.0``, ``max_new_tokens=300``;
Libra@0d6c56a README.md §MAIRA-2): greedy, at most 300 new tokens. Libra's own README uses beam search
(beam 10, length penalty 2, 1,024 tokens), which an OpenAI-compatible server does not offer in general.

Metrics (`METRICS`, each per item, so intervals and paired comparisons work as everywhere): BLEU-1..4, METEOR,
ROUGE-L and CIDEr by pycocoevalcap on R2Gen-cleaned text and on the text as written, Libra's Temporal Entity F1,
and on request CheXbert F1, SembScore, RadGraph F1, RaTEScore, Libra's BERTScore, 1/RadCliQ-v1 and GREEN
(`medtemporal.scoring.clinical`).
"""

from __future__ import annotations

from pathlib import Path

from medtemporal.benchmarks.longitudinal_rrg.published import TABLES, run_conditions
from medtemporal.family import (
    AuditRules, BenchmarkSpec, DemoSection, DemoSteps, Published, RunDefaults, ScoreGroups, Variant, cxr_phantoms, register,
)
from medtemporal.benchmarks.longitudinal_rrg import baselines, extract, protocols  # noqa: F401  (register them)
from medtemporal.benchmarks.longitudinal_rrg.baselines import URIS
from medtemporal.benchmarks.longitudinal_rrg.command import VERSION, add_arguments, build
from medtemporal.benchmarks.longitudinal_rrg.glossary import GLOSSARY
from medtemporal.benchmarks.longitudinal_rrg.items import BENCHMARK, SECTIONS
from medtemporal.scoring.clinical import CXR_CLINICAL, LEXICAL_R2GEN, LEXICAL_RAW, TEMPORAL

METRICS = (*LEXICAL_R2GEN, *TEMPORAL, *LEXICAL_RAW, *CXR_CLINICAL)
"""The field's report metrics (`medtemporal.scoring.clinical`): lexical on R2Gen-cleaned text (the R2Gen
lineage's numbers), Temporal Entity F1, lexical on the text as written; the model-based clinical ones are scored
when ``medtemporal score RUN --metrics ...`` asks for them (``--green URI`` for GREEN)."""
DEMO_ITEMS = 80
"""Items each demo run answers (a sample spread over both tasks and both subtypes): scoring is per item."""
HEADLINE_METRICS = ("r2gen_bleu_1", "r2gen_bleu_4", "r2gen_meteor", "r2gen_rouge_l", "r2gen_cider",
                    "temporal_entity_f1", "chexbert_f1_14_micro", "chexbert_f1_5_micro", "radgraph_f1_partial",
                    "green_score")
"""What a run's terminal table shows: the R2Gen lineage's lexical metrics, Temporal Entity F1 and, once scored,
the clinical ones MAIRA-2 reports (CheXbert F1, RadGraph F1 = RG_ER, GREEN); `runs show RUN` prints every one."""
PRIOR_COLUMNS = {"With prior": ("with_prior",), "No prior": ("no_prior",)}
"""Each task's with-prior and no-prior columns (score groups ``subtypes:<task>/With prior`` ...)."""


def demo(out: Path, patients: int, seed: int) -> DemoSection:
    """The CXR phantoms the CXR families share, build, the three baselines on `DEMO_ITEMS` items, report."""
    steps = DemoSteps(out, BENCHMARK)
    steps.build("--mimic-cxr-jpg", str(steps.data("cxr") / "mimic-cxr-jpg"), seed=seed)
    for model in URIS:
        steps.run(model, "--limit", str(DEMO_ITEMS))
    return steps.section("Longitudinal report generation", cxr_phantoms(steps, patients, seed))


FLOOR_BASELINES = URIS[:2]
"""The text-only floor of ``medtemporal audit`` (`medtemporal.audit.floor`): the prior report copied and the constant
normal report (the nearest report needs the build's training reports)."""
FLOOR_METRICS = ("temporal_entity_f1", "rouge_l_f1")
"""Model-free metrics the floor is scored with, cheap enough for every build: Libra's Temporal Entity F1 and
ROUGE-L F1 by rouge-score (no weights, no Java; the pycocoevalcap metrics start the METEOR jar)."""
FLOOR_DESCRIPTION = ("Open report generation has no chance level; the floor is what the item's text alone writes: "
                     "the prior report copied (nothing on no_prior items) and a constant normal report. Compare "
                     "models with these rows.")

AUDIT_NOTES = {
    "*/*": "Radiologists write stock sentences for normal and unchanged studies ('No acute cardiopulmonary "
           "process.', 'No significant interval change.'), so the commonest report of a section matches some "
           "references word for word; that is the reports' own design, not the build's. The family scores reports "
           "by overlap and clinical metrics: compare models with the text-only floor below (the prior report "
           "copied, a constant normal report) and with the copy-prior and normal-report runs.",
}
"""Exact repeats of stock reports (`AuditRules.notes`; measured on phantoms, whose unchanged studies say
'No significant interval change.': docs/longitudinal-rrg.md)."""

SPEC = register("benchmark", BENCHMARK)(BenchmarkSpec(
    name=BENCHMARK,
    glossary=GLOSSARY,
    version=VERSION,
    licence="credentialed",
    description="Longitudinal report generation on MIMIC-CXR's official test split: findings and impression "
    "with the prior study's images and report; copy-prior, normal and nearest-report baselines",
    add_arguments=add_arguments,
    build=build,
    prompts={"*": "longitudinal_rrg_direct"},
    extractors={"*": "longitudinal_rrg_section"},
    metrics={"*": METRICS},
    groups=ScoreGroups(subtypes={section: PRIOR_COLUMNS for section in SECTIONS}, overall_tasks=("findings",),
                       headline_metrics=HEADLINE_METRICS, headline_split=True),
    variants={"whole output": Variant(extractors={"*": "text"},
                                      description="the whole output scored, headers and all (the main scoring "
                                                  "takes the asked section of an output that writes several)")},
    report="medtemporal.benchmarks.longitudinal_rrg.report:write_longitudinal_rrg_report",
    demo=demo,
    audit=AuditRules(notes=AUDIT_NOTES, baselines=FLOOR_BASELINES, floor_metrics=FLOOR_METRICS,
                     floor_description=FLOOR_DESCRIPTION),
    defaults=RunDefaults(protocol="rrg-prior-report", generation={"temperature": 0.0, "max_tokens": 300}),
    published=Published(tables=TABLES, conditions=run_conditions),
))
