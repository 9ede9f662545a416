"""MS-CXR-T's image task as CheXbench evaluates it: ``--protocol chexbench`` and the ``CheXbench`` variant.

CheXbench (Chen et al., CheXagent; ``Stanford-AIMI/CheXagent`` e4f31e6, ``evaluation_chexbench/``) runs its
"Temporal Classification" task (MS-CXR-T) through ``axis_1_image_perception/run_generation.py``:

* the prompt is the model class's ``get_prompt`` (``models/chexagent.py`` L21–27): the question, a line
  ``Options: (A) improving, (B) stable, (C) worsening`` and ``Directly answer the question by choosing one
  option: (A), (B), (C).`` (template ``ms_cxr_t_chexbench``); the model gets the image paths, prior first, and
  the prompt, greedy (``do_sample=False``);
* the answer is ``models/baseLM.py`` L27–33 ``parse_response``: the first ``(X)`` in the response, else **a
  random letter** among the options (unseeded there; here drawn from the item's id, so a run scores the
  same every time: rule ``chexbench``); right when it equals the target letter, case-insensitively;
* the score is plain accuracy over the task's items (``correct / total``, L79–86).

The protocol sends that prompt; the variant scores its runs with that parse, reporting the share of answers
the random fallback decided (``mscxrt_chexbench_guessed``), so a number called CheXbench's is CheXbench's
prompt, parse and accuracy together. The main scores of the same run keep the family's strict letter rule.
CheXbench's question sentence (in its ``data.json`` on the Hugging Face hub) is not in the repository: the
question is CheXinstruct's, as in the family's own prompt.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection
from pathlib import Path
from typing import Sequence

import numpy as np

from medtemporal.backends.base import GenerateConfig, ImagePart, TextPart
from medtemporal.family import (
    Answer, BenchmarkSpec, Generate, InvalidInputError, Item, Solution, Solver, Variant, answer_request, register,
)

NAME = "CheXbench"
"""The variant's name in ``scores.json`` and the report."""
PROTOCOL = "chexbench"
TEMPLATE = "ms_cxr_t_chexbench"
FIRST = re.compile(r"\(([A-Z])\)")
"""``re.findall("\\(([A-Z])\\)", response)``: a capital letter in parentheses (baseLM.py L30)."""


def render_options(options: dict[str, str]) -> tuple[str, str]:
    """(``(A) improving, (B) stable, …``, ``(A), (B), …``) as ``get_prompt`` writes them.

    >>> render_options({"A": "improving", "B": "stable"})
    ('(A) improving, (B) stable', '(A), (B)')
    """
    return ", ".join(f"({k}) {v}" for k, v in options.items()), ", ".join(f"({k})" for k in options)


def guessed_letter(item: Item) -> str:
    """The random fallback's letter for ``item``: uniform over its options, seeded by its id."""
    letters = list(item.options)
    return letters[random.Random(f"chexbench:{item.id}").randrange(len(letters))]


@register("extractor", "chexbench", version="1", answer_types=("choice",),
          description="CheXbench's parse: the first '(X)' in the output, else a random option letter (seeded by item)")
def chexbench_parse(item: Item, text: str) -> str:
    """The first ``(X)`` of ``text``, else `guessed_letter` (never invalid, as CheXbench's)."""
    found = FIRST.findall(text)
    return found[0] if found else guessed_letter(item)


@register("metric", "mscxrt_chexbench_guessed", higher_is_better=False, aggregation="mean", percent=True,
          reads_output=True, description="share of answers CheXbench's random fallback decided (no '(X)' in the "
          "output)")
def guessed(items: Sequence[Item], answers: Sequence[Answer], outputs: Sequence[str | None]) -> np.ndarray:
    """1 where the output holds no ``(X)`` (its letter was drawn at random), 0 otherwise or when missing."""
    return np.array([float(out is not None and not FIRST.search(out)) for out in outputs])


@register("protocol", PROTOCOL, description="MS-CXR-T as CheXbench asks it: its prompt, the two images uncaptioned")
class CheXbench(Solver):
    """One call: the prior and current images, then CheXbench's prompt (module doc)."""

    name = PROTOCOL
    templates = (TEMPLATE,)

    def templates_for(self, bench: BenchmarkSpec, tasks: Collection[str]) -> tuple[str, ...]:
        if bench.name != "ms-cxr-t" or set(tasks) - {"progression"}:
            raise InvalidInputError("--protocol chexbench asks MS-CXR-T's image task as CheXbench does; run it on an "
                                    "ms-cxr-t benchmark with --tasks progression.")
        return ()

    async def solve(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig) -> Solution:
        options, notations = render_options(item.options)
        text = self.prompts.render(TEMPLATE, question=item.question, options=options, notations=notations)
        parts = (*(ImagePart(image_root / ref.path) for ref in item.images), TextPart(text))
        response = await generate(answer_request(item, parts, config))
        return Solution(response.text, [{"template": TEMPLATE, "output": response.text}])


VARIANT = Variant(
    extractors={"progression": "chexbench"},
    metrics={"progression": ("accuracy", "mscxrt_accuracy_mean", "mscxrt_chexbench_guessed")},
    protocols=(PROTOCOL,),
    description="as CheXbench scores it (evaluation_chexbench/models/baseLM.py parse_response): the first '(X)' in the "
                "output, else a random option letter (seeded by the item here); plain accuracy; runs of --protocol "
                "chexbench only",
)
"""CheXbench's parse and accuracy, scored for runs of its prompt (`BenchmarkSpec.variants`)."""
