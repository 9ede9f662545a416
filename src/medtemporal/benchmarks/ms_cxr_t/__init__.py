"""MS-CXR-T (the ``ms-cxr-t`` benchmark): how five findings progressed between two chest X-rays.

Release: Bannur et al., "Learning to Exploit Temporal Structure for Biomedical Vision-Language Processing"
(BioViL-T, CVPR 2023); PhysioNet ``ms-cxr-t`` 1.0.0 (credentialed, DOI 10.13026/pg10-j984). Facts with
sources: ``FACTS.md`` §5.1. No image is released: prior and current images come from MIMIC-CXR-JPG.
Where each rule lives:

* `release` — readers of ``MS_CXR_T_temporal_image_classification_v1.0.0.csv`` (15 columns; one item per
  labelled image pair and finding, 1,326 on the release) and ``…_sentence_similarity_v1.0.0.csv``.
* `command` — ``medtemporal build ms-cxr-t``: items (task ``progression``, subtype the finding; task
  ``sentence_similarity`` for text models, subtype the subset), images through the MIMIC-CXR-JPG root.
* `metrics` — accuracy and macro accuracy (mean per-class recall), per finding and averaged over findings.
* `chexbench` — ``--protocol chexbench`` (CheXbench's evaluation prompt) and the ``CheXbench`` variant (its
  parse: first "(X)", else a seeded random letter; plain accuracy).
* `similarity` — ``--protocol text-embedding`` (any Hugging Face text encoder, ``--model encoder:NAME``) and
  the ``text embedding`` variant: ROC-AUC and accuracy at MedST's threshold of the sentence pairs' cosines.
* `phantom` — ``medtemporal phantoms ms-cxr-t``: both files over a ``phantoms cxr`` cohort, exact truth.
* `report` — the per-finding table with the text-only levels and the audit, the sentence table, the figure.
* ``prompts/`` — CheXinstruct's templates for both tasks (the paper publishes none; CheXagent's, cited: our
  default), CheXbench's evaluation prompt.

Generation: greedy with at most 512 new tokens, as CheXbench runs CheXagent (``models/chexagent.py``
L40–48). The paper's own model is an embedding model; its metric wording was not found.
"""

from __future__ import annotations

from pathlib import Path

from medtemporal.benchmarks.ms_cxr_t.published import TABLES, run_conditions
from medtemporal.family import AuditRules, BenchmarkSpec, DemoSection, DemoSteps, Published, RunDefaults, ScoreGroups, register
from medtemporal.benchmarks.ms_cxr_t import chexbench, metrics, phantom, similarity  # noqa: F401  (registrations)
from medtemporal.benchmarks.ms_cxr_t.glossary import GLOSSARY
from medtemporal.benchmarks.ms_cxr_t.command import BENCHMARK, VERSION, add_arguments, build

PROGRESSION_METRICS = ("accuracy", "mscxrt_macro_accuracy", "mscxrt_accuracy_mean", "mscxrt_macro_accuracy_mean")
DEMO_MODELS = ("baseline:random", "baseline:majority")
DEMO_PAIRS = 150


def demo(out: Path, patients: int, seed: int) -> DemoSection:
    """The MS-CXR-T phantom over the CXR cohort the CXR families share (written first when absent), build, two
    baselines (random; majority, whose accuracy is the class prior and whose macro accuracy is 1/3), report."""
    steps = DemoSteps(out, BENCHMARK)
    cxr, data = steps.data("cxr"), steps.data(BENCHMARK)
    phantoms = [BENCHMARK, "--cxr", str(cxr), "--patients", str(patients), "--seed", str(seed), "--pairs",
                str(DEMO_PAIRS), "--out", str(data)]  # writes the shared CXR cohort first when it is not there
    steps.build("--ms-cxr-t", str(data), "--mimic-cxr-jpg", str(cxr / "mimic-cxr-jpg"), seed=seed)
    for model in DEMO_MODELS:
        steps.run(model)
    return steps.section("MS-CXR-T", phantoms)


AUDIT_NOTES = {
    "progression/*": "Every item offers the same three options (improving / stable / worsening), so a reader of "
                     "the text alone can only learn each finding's label prior: on the release 'always worsening' "
                     "scores 41.9% on the released CSVs. Macro accuracy, which the report shows beside plain accuracy, keeps "
                     "any text-only reader at 33.3; compare plain accuracy with the commonest-label row.",
}
"""The label prior is the release's own design (`AuditRules.notes`)."""

SPEC = register("benchmark", BENCHMARK)(BenchmarkSpec(
    glossary=GLOSSARY,
    name=BENCHMARK,
    audit=AuditRules(notes=AUDIT_NOTES),
    version=VERSION,
    licence="credentialed",
    description="MS-CXR-T: progression of five findings between two chest X-rays (improving / stable / "
    "worsening), and temporal sentence similarity",
    add_arguments=add_arguments,
    build=build,
    prompts={"progression": "ms_cxr_t_progression", "sentence_similarity": "ms_cxr_t_sentence_similarity"},
    metrics={"progression": PROGRESSION_METRICS, "sentence_similarity": ("accuracy", "mscxrt_macro_accuracy")},
    report="medtemporal.benchmarks.ms_cxr_t.report:write_ms_cxr_t_report",
    demo=demo,
    groups=ScoreGroups(overall_tasks=("progression",)),
    defaults=RunDefaults(generation={"temperature": 0.0, "max_tokens": 512}),
    variants={chexbench.NAME: chexbench.VARIANT, similarity.NAME: similarity.VARIANT},
    published=Published(tables=TABLES, conditions=run_conditions),
))
