"""ELTLM (the ``eltlm`` benchmark): open-ended questions over 2–5 sequential chest X-rays.

Paper: ``seeds/003`` (ELTLM, ACL 2026 Findings). Temporal Perception
(released type ``g``) and Temporal Reasoning (``t``), answered in free text,
scored by ROUGE-L F1 and an LLM judge's binary Accuracy and Completeness
(Table 2). Where each rule lives:

* `release` — the released ``test.json``: dedup, malformed ids, g/t → tasks,
  sequence-length subtypes; `studies` — time order and frontal image per study
  from the MIMIC-CXR-JPG metadata (MI-CXR's view rule).
* `build` — items by rule from MIMIC-CXR + MIMIC-Ext-CXR-QBA or phantoms
  (appendix C selection; templated questions of both types).
* `command` — ``medtemporal build eltlm`` options and manifest.
* `metrics` — ROUGE-L F1 (``rouge_l_f1``) with its settings.
* `rubric` — the LLM judge's rubric (appendix A, Table 3), its strict parser, the metrics
  ``judge_accuracy`` / ``judge_completeness`` and the offline ``scripted-judge:overlap``.
* `report` — the main table (Table 2 layout), the sequence-length figure
  (Fig. 3) and ablation deltas with paired, patient-clustered CIs.
* ``prompts/`` — the answering prompt ``eltlm_direct.txt`` (Table 7, general MLLMs) and the builder's
  question wording.

Shared parts it uses: the judge engine (`medtemporal.scoring.judge`) and the ablation protocols ``shuffled-timestamps`` (§4.3.2) and
``caption-then-reason`` (§4.3.3) in `medtemporal.protocols`.
"""

from __future__ import annotations

from pathlib import Path

from medtemporal.benchmarks.eltlm.known_releases import RELEASES
from medtemporal.benchmarks.eltlm.published import TABLES
from medtemporal.family import BenchmarkSpec, DemoSection, DemoSteps, Published, ScoreGroups, cxr_build, cxr_phantoms, register
from medtemporal.benchmarks.eltlm.glossary import GLOSSARY
from medtemporal.benchmarks.eltlm import metrics  # noqa: F401  (registers rouge_l_f1)
from medtemporal.benchmarks.eltlm.rubric import RUBRIC
from medtemporal.benchmarks.eltlm.command import VERSION, add_arguments, build
from medtemporal.benchmarks.eltlm.build import LENGTHS
from medtemporal.benchmarks.eltlm.release import BENCHMARK, subtype_of
from medtemporal.scoring.clinical import CXR_LABELS, TEMPORAL

DEMO_MODEL = "baseline:constant-No significant interval change."
"""An offline answerer for the demo: the release's most common perception answer, whatever the question."""
DEMO_JUDGE = "scripted-judge:overlap"
DEMO_PROTOCOLS = ("direct", "shuffled-timestamps", "caption-then-reason")
DEMO_OPTIONS = {"shuffled-timestamps": ["--protocol-option", "dates=real"]}
"""The demo's constant answerer writes no dates, so its shuffled run shows the recorded ones (the paper's invented
dates, the protocol's default, need a model that writes them)."""
METRICS = ("rouge_l_f1", "judge_accuracy", "judge_completeness", "judge_unparseable_rate")
LENGTH_COLUMNS = {f"{n} studies": (subtype_of(n),) for n in LENGTHS}
"""Sequence-length columns in order (Fig. 3 strata), for both tasks."""


def demo(out: Path, patients: int, seed: int) -> DemoSection:
    """CXR phantoms, build, a constant answer under three protocols judged by the scripted judge, report."""
    steps = DemoSteps(out, BENCHMARK)
    phantoms = cxr_phantoms(steps, patients, seed)
    cxr_build(steps, seed=seed)
    for protocol in DEMO_PROTOCOLS:
        steps.run(DEMO_MODEL, "--protocol", protocol, *DEMO_OPTIONS.get(protocol, []), "--judge", DEMO_JUDGE,
                  name=protocol)
    return steps.section("ELTLM", phantoms)


CITATION = r"""@inproceedings{eltlm,
  title     = {{ELTLM}: Evaluation of Longitudinal Temporal Large Multimodal Models in Clinical Scenarios},
  author    = {Hu, Gengyuan and Liu, Haoxiang and Cao, Chenhong and Tan, Shilei and Gong, Wei},
  booktitle = {Findings of the Association for Computational Linguistics: ACL 2026},
  year      = {2026},
}"""
"""The paper, as the dataset card of ``export --format hf`` cites it (only what the paper and its release state)."""


SPEC = register("benchmark", BENCHMARK, citation=CITATION)(BenchmarkSpec(
    glossary=GLOSSARY,
    name=BENCHMARK,
    version=VERSION,
    licence="credentialed",
    description="ELTLM: open questions over 2-5 sequential chest X-rays; ROUGE-L and LLM-judged perception/reasoning",
    add_arguments=add_arguments,
    build=build,
    prompts={"*": "eltlm_direct"},
    extractors={"*": "text"},
    metrics={"*": METRICS},
    extra_metrics={"*": (*TEMPORAL, *CXR_LABELS)},  # ours beside the paper's (not in the paper)
    groups=ScoreGroups(subtypes={"perception": LENGTH_COLUMNS, "reasoning": LENGTH_COLUMNS}),
    report="medtemporal.benchmarks.eltlm.report:write_eltlm_report",
    demo=demo,
    judge=RUBRIC,
    published=Published(tables=TABLES, releases=RELEASES),
))
