"""TemMed-Bench (the ``temmed`` benchmark): condition changes between two chest X-ray visits.

Paper: ``seeds/001`` (TemMed-Bench). Three tasks over a historical and a
current CheXpert Plus image: ``vqa`` (yes/no), ``report`` (condition-change
report generation) and ``image_pair`` (choose the pair a statement describes,
A/B/C), with a 17k-instance knowledge corpus for retrieval augmentation.
Where each rule lives:

* `command` — ``medtemporal build temmed``: options (defaults are the paper's),
  licence, raw build or import of the released JSON files.
* `text` — condition-change keywords, sentences and statements (§2.2, appendix A.1).
* `pipeline` — instances, split, corpus and the three tasks (§2.2–2.3).
* `vqa` — balanced yes/no questions, answer fixed before wording (§2.3).
* `refs` — retrieved references and ablation images stored per item (§3, appendix C).
* `release` — readers of the released JSON files.
* `extract` — the released answer-extraction rules (``temmed_yesno``, ``temmed_pair``).
* `rag` — the protocols ``rag-text``, ``rag-multimodal``, ``retrieval-top1``,
  ``random-historical`` and ``random-current`` (§3, Tables 4, 8, 9).
* `metrics` — the released report metrics (``temmed_bleu_1``, ``temmed_rouge_l``, ``temmed_meteor``,
  ``temmed_report_avg``).
* `report` — Tables 3 and 4 and the top-k figure.
* `demo` — the TemMed-Bench section of ``medtemporal demo``.
* ``prompts/`` — the release's prompts, cited line by line in each template's header.
"""

from __future__ import annotations

from pathlib import Path

from medtemporal.benchmarks.temmed.known_releases import RELEASES
from medtemporal.benchmarks.temmed.published import TABLES
from medtemporal.family import BenchmarkSpec, DemoSection, DemoSteps, Published, RunDefaults, register
from medtemporal.benchmarks.temmed.glossary import GLOSSARY
from medtemporal.benchmarks.temmed import extract, metrics, rag  # noqa: F401  (register rules, metrics, protocols)
from medtemporal.benchmarks.temmed.command import add_arguments, build
from medtemporal.benchmarks.temmed.pipeline import BENCHMARK, VERSION
from medtemporal.scoring.clinical import CXR_CLINICAL, TEMPORAL

CLOSED = "vqa,image_pair"
DEMO_RUNS = (
    ("direct", (), CLOSED),
    *((p, (f"k={k}",), CLOSED) for p in ("rag-text", "rag-multimodal") for k in (1, 3, 5)),
    ("rag-multimodal", ("k=1", "retriever=image"), "vqa"),
    ("retrieval-top1", (), "report"),
)
"""(protocol, protocol options, tasks): closed-book, RAG at k = 1, 3, 5, the retriever ablation (Table 5:
image-to-image retrieval against each item's own pairwise one; image-to-text needs an --embedder build) and the top-1 report hack."""


def demo(out: Path, patients: int, seed: int) -> DemoSection:
    """CheXpert Plus phantoms, build, random baseline closed-book and RAG, top-1 hack, report."""
    steps = DemoSteps(out, BENCHMARK)
    data = steps.data("chexpert-plus")
    phantoms = ["chexpert-plus", "--patients", str(patients), "--seed", str(seed), "--image-size", "128", "--out", str(data)]
    steps.build("--chexpert-plus", str(data), "--test-size", str(max(10, patients // 3)), "--vqa-items", "100",
                seed=seed)
    for protocol, options, tasks in DEMO_RUNS:
        steps.run("baseline:random", "--protocol", protocol, "--tasks", tasks,
                  *(a for o in options for a in ("--protocol-option", o)),
                  name="-".join([protocol, *(o.replace("=", "") for o in options)]))
    return steps.section("TemMed-Bench", phantoms)


CITATION = r"""@misc{temmedbench,
  title        = {{TemMed-Bench}: Evaluating Temporal Medical Image Reasoning in Vision-Language Models},
  howpublished = {\url{https://github.com/Levi-ZJY/TemMed-Bench}},
}"""
"""The paper, as the dataset card of ``export --format hf`` cites it (only what the paper and its release state)."""


SPEC = register("benchmark", BENCHMARK, citation=CITATION)(BenchmarkSpec(
    glossary=GLOSSARY,
    name=BENCHMARK,
    version=VERSION,
    licence="credentialed",
    description="TemMed-Bench: VQA, report generation and image-pair selection over two CheXpert Plus visits",
    add_arguments=add_arguments,
    build=build,
    prompts={"vqa": "temmed_vqa", "report": "temmed_report", "image_pair": "temmed_pair"},
    answer_formats={"image_pair": "My answer is {}."},
    extractors={"vqa": "temmed_yesno", "report": "raw_text", "image_pair": "temmed_pair"},
    metrics={"vqa": ("accuracy", "yesno_macro_f1"),
             "report": ("temmed_bleu_1", "temmed_rouge_l", "temmed_meteor", "temmed_report_avg"),
             "image_pair": ("accuracy",)},
    extra_metrics={"report": (*TEMPORAL, *CXR_CLINICAL)},  # ours beside the release's (not in the paper)
    report="medtemporal.benchmarks.temmed.report:write_temmed_report",
    demo=demo,
    defaults=RunDefaults(generation={"temperature": None, "max_tokens": None}),  # the release's calls set neither (Eval/*_GPT_*.py)
    published=Published(tables=TABLES, releases=RELEASES),
))
