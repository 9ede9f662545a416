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
    """Per metric of the task: the item's statistics (``stats``), its own value (``score``) and its patient.

    ``aggregation`` sums the statistics over the items and reduces them as medtemporal does (a mean, corpus
    BLEU, macro F1 …); ``score`` and ``patient_id`` feed lmms-eval's clustered standard error (``cluster_key``).
    """
    item = Item.model_validate_json(doc["item"])
    output = results[0] if results else ""
    answer = extract(item, output).answer
    out = {}
    for name in _metric_names(item):
        m = metric(name)
        stats = m.per_sample([item], [answer], [output])[0].reshape(-1)
        own = float(m.reduce(stats[None], np.ones(1))[0])
        out[name] = {"metric": name, "stats": stats.tolist(), "score": own, "patient_id": doc["patient_id"],
                     "id": doc["id"]}
    return out


def aggregate(results: list[dict[str, Any]]) -> float:
    """A metric over the items, reduced from the summed per-item statistics as ``medtemporal score`` does."""
    if not results:
        return float("nan")
    m = metric(results[0]["metric"])
    sums = np.sum([r["stats"] for r in results], axis=0)
    return float(m.reduce(np.asarray(sums, dtype=float)[None], np.asarray([len(results)], dtype=float))[0])


def _metric_names(item: Item) -> list[str]:
    """The metrics of the item's task as the export listed them (`medtemporal.interop.lmms_eval.scored_metrics`)."""
    from medtemporal.interop.lmms_eval import scored_metrics

    return scored_metrics(item.benchmark, item.task)
