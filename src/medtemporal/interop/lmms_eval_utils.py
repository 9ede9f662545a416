"""lmms-eval hooks of a task exported by ``medtemporal export --format lmms-eval`` (copied as ``utils.py``).

The YAML beside this file names these functions with ``!function utils.<name>``.
Prompts are medtemporal's (the benchmark's own template, with a sentence saying
which image is which visit, since lmms-eval shows the images before the text), and
answers are extracted by the benchmark's released rule, so accuracy here matches
``medtemporal score``. For patient-clustered confidence intervals and the paper's
tables, import the sample log: ``medtemporal import-predictions BENCH --lmms-eval LOG``.
Needs ``medtemporal`` installed in the lmms-eval environment.
"""

from __future__ import annotations

import functools
from typing import Any

from medtemporal.export import item_from_row, visit_framing
from medtemporal.protocols.direct import question_prompt
from medtemporal.scoring import extract


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The item's images as RGB PIL images, in visit order."""
    return [image.convert("RGB") for image in doc["images"]]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """The visit framing, then the benchmark's prompt for the item (with its options and answer format)."""
    kwargs = lmms_eval_specific_kwargs or {}
    item = item_from_row(doc)
    _, prompt = question_prompt(item, _prompts())
    text = "\n".join(part for part in (visit_framing(item), prompt) if part)
    return f"{kwargs.get('pre_prompt', '')}{text}{kwargs.get('post_prompt', '')}"


def doc_to_target(doc: dict[str, Any]) -> str:
    """The answer (letter, Yes/No, or text)."""
    return doc["answer"]


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """``accuracy``: 1 when the benchmark's extraction rule reads the right answer from the output."""
    item = item_from_row(doc)
    extraction = extract(item, results[0] if results else "")
    return {"accuracy": float(extraction.answer is not None and extraction.answer == item.answer)}


@functools.cache
def _prompts() -> Any:
    """medtemporal's prompt templates (made once)."""
    from medtemporal.prompts import PromptSet

    return PromptSet()
