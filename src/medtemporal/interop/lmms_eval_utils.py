"""lmms-eval hooks of a task exported by ``medtemporal export --format lmms-eval`` (copied as ``utils.py``).

The YAML beside this file names these functions with ``!function utils.<name>``. The images and
prompt are the ones ``medtemporal run`` sends (stored in the data file by the export); answers are
extracted by the benchmark's released rule and scored by medtemporal's own metrics, so each metric
here matches ``medtemporal score``. For patient-clustered confidence intervals, the judge metrics and the
paper's tables, import the sample logs (written with ``--log_samples``):
``medtemporal import-predictions BENCH OUTPUT/*_samples_*.jsonl --from lmms-eval --out RUN``.
Needs what ``requirements.txt`` beside this file names, in the lmms-eval environment: lmms-eval imports this
file when it loads the task, and the import computes every metric once on one item of each task
(``probes.jsonl``), so a missing package or nltk data stops it in one sentence before any request. A metric that
fails on an item later keeps the item's output (lmms-eval logs it; the metric's value is NaN).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medtemporal.interop.tool_scoring import aggregate as _aggregate
from medtemporal.interop.tool_scoring import check_requirements, per_item
from medtemporal.schema import Item

_HERE = Path(__file__).resolve().parent


def _items(name: str) -> list[Item]:
    path = _HERE / name
    return [Item.model_validate_json(line) for line in path.read_text("utf-8").splitlines()] if path.is_file() else []


check_requirements(_items("probes.jsonl"), f"The lmms-eval task folder {_HERE}")


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
    output and the extracted answer), the item's own value (``score``; NaN with ``error`` when the metric failed
    on it) and its patient.

    ``score`` and ``patient_id`` feed lmms-eval's clustered standard error (``cluster_key``); the metric itself
    is computed in ``aggregate`` over all the items at once, as ``medtemporal score`` does: a corpus metric
    (CIDEr's document frequencies, corpus BLEU) scored one item at a time is another number.
    """
    item = Item.model_validate_json(doc["item"])
    output = results[0] if results else ""
    answer, values = per_item(item, output)
    return {name: {"metric": name, "item": doc["item"], "output": output, "answer": answer, "score": own,
                   "patient_id": doc["patient_id"], "id": doc["id"], **({"error": error} if error else {})}
            for name, (own, error) in values.items()}


def aggregate(results: list[dict[str, Any]]) -> float:
    """A metric over the items, as ``medtemporal score`` computes it (`medtemporal.interop.tool_scoring.aggregate`);
    a corpus metric among every exported item whose task has it (``context.jsonl`` beside this file). NaN when
    it failed on an item: score those outputs with ``import-predictions`` and ``score``."""
    if not results or any("error" in r for r in results):
        return float("nan")
    items = [Item.model_validate_json(r["item"]) for r in results]
    return _aggregate(results[0]["metric"], items, [r["answer"] for r in results], [r["output"] for r in results],
                      _items("context.jsonl"))
