"""MI-CXR (the ``mi-cxr`` benchmark): multi-interval reasoning over five-visit chest X-ray windows.

Paper: ``seeds/000`` (MI-CXR). Five-way multiple choice over windows of five
consecutive MIMIC-CXR studies: Temporal Event Localization (TEL), Interval
Change Reasoning (ICR) and Global Temporal Summary (GTS), plus the ICR
variant (Table 2). Where each rule lives:

* `command` — ``medtemporal build mi-cxr``: options (quotas and mix the paper's, cap values ours),
  licence, source checksums, raw build or import of the released file.
* `windows` — windows and per-abnormality state tracks (appendix A.4, A.5.1).
* `tel` — TEL events and qtypes (appendix A.8.2).
* `summaries` — ICR, ICR variant and GTS options by change type (A.8.3–A.8.4).
* `text` — question and option wording (the released file; figures 10–19).
* `balance` — quotas, caps and letter balancing (appendix A.5.2).
* `pipeline` — timelines → windows → candidates → balanced items.
* `llm` — LLM-worded summary options (appendix A.6; the model never labels).
* `release` — the released ``micxr_test.jsonl`` layout, read and written
  (also ``medtemporal export --format micxr``).
* `demo_describer` — ``micxr-describer:noisy-truth``, the demo's stage-wise instrument (not a model).
* `overall` — the paper's Overall: a weighted mean of Table 1's six columns (``overall:paper``).
* `report` — temperature, stage-wise vs direct, ICR-V, error types (rules and judge: `error_judge`),
  source statistics; the spec's ``report`` hook.
* `error_judge` — the LLM judge's error types (appendix G) through ``medtemporal score RUN --judge URI``.
* `demo` — the MI-CXR section of ``medtemporal demo``.
* ``prompts/`` — the paper's prompts (summary wording, ICR-V distractors, error types) and the stage-wise
  guidelines per task (`STAGEWISE_GUIDELINES`).

Answers are extracted with the shared ``letter`` rule and scored by accuracy
(``medtemporal.scoring``); the stage-wise protocol is ``medtemporal.protocols.stagewise``, following
the guideline the spec names for each task.
"""

from __future__ import annotations

from pathlib import Path

from medtemporal.benchmarks.mi_cxr.known_releases import RELEASES
from medtemporal.benchmarks.mi_cxr.published import TABLES, run_conditions
from medtemporal.family import (
    Benchmark, BenchmarkSpec, DemoSection, DemoSteps, Published, RunDefaults, ScoreGroups, cxr_build, cxr_phantoms, register,
)
from medtemporal.benchmarks.mi_cxr.glossary import GLOSSARY
from medtemporal.benchmarks.mi_cxr import demo_describer  # noqa: F401  (registers the demo's describer backend)
from medtemporal.benchmarks.mi_cxr.error_judge import judge_pass
from medtemporal.benchmarks.mi_cxr.command import add_arguments, build
from medtemporal.benchmarks.mi_cxr.release import write_official
from medtemporal.benchmarks.mi_cxr.overall import PAPER_OVERALL_WEIGHTS
from medtemporal.benchmarks.mi_cxr.pipeline import BENCHMARK, VERSION

BASELINES = ("baseline:random", "baseline:constant-A", "baseline:majority")


def export_official(bench: Benchmark, out: Path) -> int:
    """Write ``bench`` in the released ``micxr_test.jsonl`` layout; return the number of lines."""
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_official(bench.items, out)


DESCRIBER = "micxr-describer:noisy-truth"
"""The demo's stage-wise instrument (`demo_describer`): stage-1 text from recorded truth, random answers; not a model."""


STAGEWISE_GUIDELINES = {"TEL": "mi_cxr_stagewise_guideline_tel", "ICR": "mi_cxr_stagewise_guideline_icr",
                        "ICR-V": "mi_cxr_stagewise_guideline_icr", "*": "mi_cxr_stagewise_guideline_gts"}
"""Task → stage-1 guideline of ``--protocol stagewise`` (appendix E.4; `prompts/mi_cxr_stagewise_guideline_*.txt`)."""


ERROR_JUDGE = "micxr-scripted-judge:errors"
"""The demo's error-type judge: a scripted stand-in (`error_judge.ScriptedErrorJudge`), not a model."""


def demo(out: Path, patients: int, seed: int) -> DemoSection:
    """CXR phantoms, a build with the ICR variant, three baselines, a T=0.7 repeat run, the describer under the
    direct and stage-wise protocols (Fig. 3 pairing), one report."""
    steps = DemoSteps(out, BENCHMARK)
    phantoms = cxr_phantoms(steps, patients, seed)
    cxr_build(steps, "--icr-variant", seed=seed)
    for model in BASELINES:
        steps.run(model)
    # temperature sensitivity: three seeded samples per item
    steps.run("baseline:random", "--temperature", "0.7", "--seed", str(seed), "--repeats", "3", name="random-t0.7")
    for protocol in ("direct", "stagewise"):
        run = steps.run(DESCRIBER, "--protocol", protocol, "--option", f"seed={seed}", name=f"describer-{protocol}")
    # error types by the judge (appendix G): the scripted stand-in, offline; a model judge takes its place by URI
    steps.then("score", str(run), "--judge", ERROR_JUDGE)
    return steps.section("MI-CXR", phantoms)


CITATION = r"""@misc{micxr,
  title        = {{MI-CXR}: A Benchmark for Longitudinal Reasoning over Multi-Interval Chest X-rays},
  note         = {Anonymous ACL submission},
  howpublished = {\url{https://github.com/anonymousetrap12/MI-CXR}},
}"""
"""The paper, as the dataset card of ``export --format hf`` cites it (only what the paper and its release state)."""


SPEC = register("benchmark", BENCHMARK, citation=CITATION)(
    BenchmarkSpec(
        glossary=GLOSSARY,
        name=BENCHMARK,
        version=VERSION,
        licence="credentialed",
        description="MI-CXR: five-visit chest X-ray windows; TEL, ICR and GTS multiple choice (A-E)",
        add_arguments=add_arguments,
        build=build,
        prompts={"*": "mcq_direct"},
        metrics={"*": ("accuracy",)},
        groups=ScoreGroups(
            subtypes={
            "TEL": {
                "Single (E/R)": ("single_emergence", "single_resolution"),
                "Multiple (E/R)": (
                    "multiple_emergence_1", "multiple_emergence_2", "multiple_resolution_1", "multiple_resolution_2",
                ),
                "E\u2192R / R\u2192E": ("emergence_to_resolution", "resolution_to_emergence"),
            },
            "GTS": {
                "Single Abnormality": ("single_entity_interval_summary",),
                "Multi Abnormality": ("multi_entity_interval_summary",),
            },
        },
            overall_tasks=("TEL", "ICR", "GTS"),  # Table 1's tasks (micro Overall); ICR-V is Table 2, scored on its own
            overall_weights=PAPER_OVERALL_WEIGHTS,  # Table 1's Overall: a weighted mean of its columns (`overall`)
        ),
        report="medtemporal.benchmarks.mi_cxr.report:write_mi_cxr_report",
        # §4.1: temperature 0, the provider's defaults otherwise
        defaults=RunDefaults(generation={"temperature": 0.0, "max_tokens": None},
                             protocol_options={"stagewise": {"guidelines": STAGEWISE_GUIDELINES}}),
        demo=demo,
        judge=judge_pass,  # `score --judge`: error types of wrong answers (appendix G), not the open-answer rubric
        published=Published(tables=TABLES, releases=RELEASES, conditions=run_conditions, exports={"micxr": export_official}),
    )
)
