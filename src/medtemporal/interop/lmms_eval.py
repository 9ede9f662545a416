"""An lmms-eval task folder for a benchmark of any family: one task per benchmark task, grouped.

``medtemporal export BENCH --format lmms-eval --out DIR`` writes

- ``DIR/<task>.yaml`` per benchmark task (``medtemporal_<benchmark>_<task>``): ``dataset_path: parquet``
  over ``DIR/<task>.parquet``, ``generate_until`` with the paper's generation settings as ``medtemporal
  run`` resolves them, ``cluster_key: patient_id`` (lmms-eval's clustered standard errors: one
  patient's items are correlated), and the task's metrics as the family scores them (`BenchmarkSpec.metrics`:
  accuracy; TemMed's BLEU-1, ROUGE-L, METEOR; SkillQA's ordering metrics, rationale BERTScore and overall;
  ELTLM's ROUGE-L; 3D-RAD's strict and as-released scores), each computed by ``process_results`` and
  ``aggregation`` in ``utils.py``. Judge metrics (ELTLM's Accuracy and Completeness) are left to
  ``medtemporal score RUN --judge URI`` after importing the samples.
- ``DIR/_medtemporal_<benchmark>.yaml``: the group ``medtemporal_<benchmark>`` of those tasks.
- ``DIR/<task>.parquet``: per item the images our protocol sends (3D-RAD: its 32 axial slices), in order, as
  ``datasets.Image``; ``prompt`` (the framing sentence, then our prompt: see `medtemporal.interop.views`);
  ``answer``; ``patient_id``; ``sent_images`` (which of the item's images these are: positions in its
  ``images``, `medtemporal.interop.views.sent_images`); and ``item`` (the item record, for extraction and scoring).
- ``DIR/utils.py``: `medtemporal.interop.lmms_eval_utils` (needs medtemporal in lmms-eval's environment).
- ``DIR/requirements.txt``: what lmms-eval's environment needs to score the tasks (`requirements`), and
  ``DIR/probes.jsonl``, one item per task, on which ``utils.py`` computes every metric when lmms-eval loads the
  task, so that a missing package or nltk data stops it in one sentence before any request.
- ``DIR/context.jsonl``, where a task has a corpus metric (`Metric.corpus`: Medical-Diff-VQA's CIDEr): every item
  of the benchmark, so that ``aggregation`` scores the task's answers among all the items a ``medtemporal run``
  scores together (CIDEr's document frequencies come from all their references).

The folder is written under ``DIR.partial`` and renamed at the end: a killed export leaves no ``DIR``,
and the next export removes the partial folder and starts again. Run it with
``lmms-eval --include_path DIR --tasks medtemporal_<benchmark> --log_samples ...`` and bring the
samples back with ``medtemporal import-predictions BENCH DIR/*_samples_*.jsonl --from lmms-eval --out RUN``.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from medtemporal.backends.base import LOCAL_MAX_TOKENS
from medtemporal.benchmark import Benchmark
from medtemporal.contract import spec
from medtemporal.errors import require
from medtemporal.interop.files import folder_atomically
from medtemporal.interop.parquet import answer_text, read_bytes, write_table
from medtemporal.interop.views import ToolView, protocol_name, tool_views
from medtemporal.registry import lookup
from medtemporal.scoring.metrics import metric


CONTEXT = "context.jsonl"
"""The items of every task, for the metrics whose items are scored together (`Metric.corpus`)."""


def _name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", text)


def group_name(bench: Benchmark) -> str:
    """``medtemporal_<benchmark>`` with characters lmms-eval task names avoid replaced by ``_``."""
    return "medtemporal_" + _name(bench.manifest.benchmark)


def task_name(bench: Benchmark, task: str) -> str:
    """The lmms-eval task of one benchmark task: ``medtemporal_<benchmark>_<task>``."""
    return f"{group_name(bench)}_{_name(task)}"


def scored_metrics(benchmark: str, task: str) -> list[str]:
    """The metrics ``medtemporal score`` computes for ``task`` by default (the paper's and ours), less those that
    need an LLM judge or model weights (``on_request``)."""
    names = spec(benchmark).listed_metrics(task)
    return [m for m in names if not (lookup("metric", m).info.get("needs_judge") or lookup("metric", m).info.get("on_request"))]


def generation_kwargs(benchmark: str) -> dict[str, Any]:
    """lmms-eval ``generation_kwargs`` for the settings ``medtemporal run`` resolves (`RunOptions.resolve`: the
    paper's, the one place they are applied).

    lmms-eval's models need an output cap and decode greedily when no temperature is given, where a medtemporal
    run leaves both to the provider: no cap becomes `LOCAL_MAX_TOKENS`, the cap of a local (``hf:``) run, and no
    temperature is left out (the lmms-eval model's greedy default), as ``docs/scaling.md`` says.
    """
    from medtemporal.runner.options import RunOptions

    config = RunOptions().resolve(spec(benchmark)).generation
    kwargs: dict[str, Any] = {"max_new_tokens": config.max_tokens or LOCAL_MAX_TOKENS}
    if config.temperature is not None:
        kwargs.update(temperature=config.temperature, do_sample=config.temperature > 0)
    return kwargs


def requirements(bench: Benchmark) -> str:
    """``requirements.txt`` of an exported task folder: medtemporal with the extras its metrics need (``bertscore``
    where a metric encodes with BERTScore), and the nltk data of the text metrics as a comment (pip cannot install
    it)."""
    from medtemporal import __version__

    names = {m for task in dict.fromkeys(item.task for item in bench.items)
             for m in scored_metrics(bench.manifest.benchmark, task)}
    extras = ["interop", *(["bertscore"] if any(_uses_bertscore(m) for m in names) else [])]
    return (f"# What scoring these tasks needs where the tool runs: pip install -r requirements.txt\n"
            f"medtemporal[{','.join(extras)}]>={__version__}\n"
            "# nltk data of the text metrics (punkt_tab, WordNet 3.0), which pip cannot install: medtemporal nltk-data\n")


def _uses_bertscore(name: str) -> bool:
    settings = lookup("metric", name).info.get("settings")
    return "bertscore_model" in (settings() if callable(settings) else settings or {})


def task_yaml(bench: Benchmark, task: str, data_file: Path) -> str:
    """One task's YAML (``!function`` tags as lmms-eval reads them)."""
    metrics = "".join(
        f"  - metric: {m}\n    aggregation: !function utils.aggregate\n"
        f"    higher_is_better: {'true' if lookup('metric', m).info['higher_is_better'] else 'false'}\n"
        for m in scored_metrics(bench.manifest.benchmark, task)
    )
    generation = "".join(f"  {k}: {json.dumps(v)}\n" for k, v in generation_kwargs(bench.manifest.benchmark).items())
    return f"""# Exported by medtemporal from {bench.manifest.benchmark} (version {bench.manifest.version}), task {task};
# prompts as protocol {protocol_name(bench)!r} sends them; see utils.py.
task: {task_name(bench, task)}
dataset_path: parquet
dataset_kwargs:
  data_files:
    test: {json.dumps(str(data_file))}
test_split: test
output_type: generate_until
cluster_key: patient_id
doc_to_visual: !function utils.doc_to_visual
doc_to_text: !function utils.doc_to_text
doc_to_target: !function utils.doc_to_target
generation_kwargs:
{generation}process_results: !function utils.process_results
metric_list:
{metrics}lmms_eval_specific_kwargs:
  default:
    pre_prompt: ""
    post_prompt: ""
metadata:
  version: {json.dumps(bench.manifest.version)}
  medtemporal_task: {json.dumps(task)}
"""


def features() -> Any:
    """``datasets.Features`` of a task's data file."""
    datasets = require("datasets", "interop")
    text = datasets.Value("string")
    return datasets.Features({
        "id": text, "task": text, "subtype": text, "patient_id": text, "images": datasets.List(datasets.Image()),
        "prompt": text, "answer": text, "answer_type": text, "sent_images": datasets.List(datasets.Value("int32")),
        "item": text,
    })


def _row(view: ToolView, embed: bool) -> dict[str, Any]:
    item = view.item
    images = [{"bytes": read_bytes(p), "path": p.name} if embed else {"bytes": None, "path": str(p)}
              for p in view.images]
    return {"id": item.id, "task": item.task, "subtype": item.subtype, "patient_id": item.cluster, "images": images,
            "prompt": view.prompt, "answer": answer_text(item), "answer_type": item.answer_type,
            "sent_images": list(view.sent), "item": item.model_dump_json()}


def write_task(bench: Benchmark, out: Path, *, embed_images: bool = False, overwrite: bool = False) -> list[Path]:
    """Write the task folder ``out`` for ``bench``; return ``[out]``."""
    by_task: dict[str, list[ToolView]] = {}
    for view in tool_views(bench):
        by_task.setdefault(view.item.task, []).append(view)
    final = out.resolve()
    group = group_name(bench)
    with folder_atomically(out, overwrite=overwrite) as tmp:
        schema = features()
        for task, views in by_task.items():
            name = task_name(bench, task)
            write_table([_row(v, embed_images) for v in views], schema, tmp / f"{name}.parquet", {})
            (tmp / f"{name}.yaml").write_text(task_yaml(bench, task, final / f"{name}.parquet"), encoding="utf-8")
        if any(metric(m).corpus for t in by_task for m in scored_metrics(bench.manifest.benchmark, t)):
            # a corpus metric of one task needs every item scored with it: `lmms_eval_utils.aggregate` reads them
            (tmp / CONTEXT).write_text("".join(item.model_dump_json() + "\n" for item in bench.items),
                                       encoding="utf-8")
        (tmp / "requirements.txt").write_text(requirements(bench), encoding="utf-8")
        (tmp / "probes.jsonl").write_text("".join(views[0].item.model_dump_json() + "\n" for views in by_task.values()),
                                          encoding="utf-8")
        tasks = "".join(f"- {task_name(bench, t)}\n" for t in by_task)
        (tmp / f"_{group}.yaml").write_text(f"group: {group}\ntask:\n{tasks}", encoding="utf-8")
        shutil.copyfile(Path(__file__).with_name("lmms_eval_utils.py"), tmp / "utils.py")
    return [out]
