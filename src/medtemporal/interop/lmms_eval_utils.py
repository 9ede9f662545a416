"""lmms-eval hooks of a task exported by ``medtemporal export --format lmms-eval`` (copied as ``utils.py``).

The YAML beside this file names these functions with ``!function utils.<name>``. The images and
prompt are the ones ``medtemporal run`` sends (stored in the data file by the export); answers are
extracted by the benchmark's released rule and scored by medtemporal's own metrics, so each metric
here matches ``medtemporal score``. For patient-clustered confidence intervals, the judge metrics and the
paper's tables, import the sample logs (written with ``--log_samples``):
``medtemporal import-predictions BENCH OUTPUT/*_samples_*.jsonl --from lmms-eval --out RUN``.
Needs ``medtemporal`` installed in the lmms-eval environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from medtemporal.schema import Item
from medtemporal.scoring import extract, metric


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The item's images as RGB PIL images, in the order medtemporal sends them."""
    return [image.convert("RGB") for image in doc["images"]]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """Which image is which, then the benchmark's prompt for the item (instruction, question, options)."""
    kwargs = lmms_eval_specific_kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{doc['prompt']}{kwargs.get('post_prompt', '')}"


def doc_to_target(doc: dict[str, Any]) -> str:
    """The answer (letter, Yes/No, text, or an ordering as a JSON list)."""
    return doc["answer"]


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, dict[str, Any]]:
    """Per metric of the task: what ``aggregate`` needs to score the item with all the others (the item, the
    output and the extracted answer), the item's own value (``score``) and its patient.

    ``score`` and ``patient_id`` feed lmms-eval's clustered standard error (``cluster_key``); the metric itself
    is computed in ``aggregate`` over all the items at once, as ``medtemporal score`` does: a corpus metric
    (CIDEr's document frequencies, corpus BLEU) scored one item at a time is another number.
    """
    item = Item.model_validate_json(doc["item"])
    output = results[0] if results else ""
    answer = extract(item, output).answer
    out = {}
    for name in _metric_names(item):
        m = metric(name)
        stats = m.per_sample([item], [answer], [output]).reshape(1, -1)
        own = float(m.reduce(stats, np.ones(1))[0])
        out[name] = {"metric": name, "item": doc["item"], "output": output, "answer": answer, "score": own,
                     "patient_id": doc["patient_id"], "id": doc["id"]}
    return out


def aggregate(results: list[dict[str, Any]]) -> float:
    """A metric over the items, as ``medtemporal score`` computes it: every item's statistics computed together,
    summed and reduced. A corpus metric (`Metric.corpus`) is computed among every exported item whose task has it
    (``context.jsonl`` beside this file), as a whole ``medtemporal run`` is scored."""
    if not results:
        return float("nan")
    m = metric(results[0]["metric"])
    items = [Item.model_validate_json(r["item"]) for r in results]
    answers = [r["answer"] for r in results]
    outputs = [r["output"] for r in results]
    rows = np.arange(len(results))
    context = Path(__file__).with_name("context.jsonl")
    if m.corpus and context.is_file():
        mine = {item.id: k for k, item in enumerate(items)}
        others = [item for item in (Item.model_validate_json(line) for line in context.read_text("utf-8").splitlines())
                  if item.id not in mine and m.name in _metric_names(item)]
        rows = np.arange(len(others), len(others) + len(items))
        items, answers, outputs = [*others, *items], [None] * len(others) + answers, [None] * len(others) + outputs
    stats = np.asarray(m.per_sample(items, answers, outputs), dtype=float).reshape(len(items), -1)[rows]
    return float(m.reduce(stats.sum(axis=0)[None], np.asarray([len(rows)], dtype=float))[0])


def _metric_names(item: Item) -> list[str]:
    """The metrics of the item's task as the export listed them (`medtemporal.interop.lmms_eval.scored_metrics`)."""
    from medtemporal.interop.lmms_eval import scored_metrics

    return scored_metrics(item.benchmark, item.task)
