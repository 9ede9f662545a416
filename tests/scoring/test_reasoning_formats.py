"""Reasoning models' answer formats through every family's own extraction rule: the rule reads the final answer,
never the reasoning the model closed, and reasoning cut off by the token limit is no answer.

For one item of each task of every registered family, the true answer written plainly is the reference; the same
answer in R1 style (``<think>`` naming a wrong answer, then ``<answer>``), after a ``\\boxed{}`` or box tokens,
or followed by a leaked chat turn must extract to the same answer; an unclosed ``<think>`` that names the true
answer must extract to none.
"""

from __future__ import annotations

import json

import pytest
from helpers.families import FAMILIES, family_benches  # noqa: F401  (session fixture)

from medtemporal.benchmark import load
from medtemporal.scoring.extraction import extract


def _written(answer) -> str:  # noqa: ANN001
    return json.dumps(list(answer)) if isinstance(answer, (list, tuple)) else str(answer)


def _decoy(item) -> str:  # noqa: ANN001
    """A wrong answer of the item's kind."""
    if item.options:
        return next(k for k in item.options if k != item.answer)
    if isinstance(item.answer, (list, tuple)):
        return json.dumps(list(reversed(item.answer)))
    return {"Yes": "No", "No": "Yes"}.get(str(item.answer), "Something else entirely, a large effusion.")


@pytest.mark.parametrize("family", FAMILIES)
def test_reasoning_outputs_extract_to_the_final_answer(family, family_benches):  # noqa: F811
    items = {}
    for item in load(family_benches[family]).items:
        items.setdefault((item.task, item.answer_type), item)
    bad = []
    for item in items.values():
        answer, decoy = _written(item.answer), _decoy(item)
        # the answer as the family's prompt asks for it (TemMed's pairs: "My answer is X")
        answer = next((w for w in (answer, f"My answer is {answer}.") if extract(item, w).answer is not None), answer)
        plain = extract(item, answer)
        assert plain.answer is not None, (family, item.task, answer)
        shapes = {
            "r1": f"<think>\nFirst I thought {decoy}. Comparing the studies again.\n</think>\n<answer>{answer}</answer>",
            "leaked-turn": f"{answer}<|im_end|>\n<|im_start|>user\n{decoy}<|im_end|>",
            "box-tokens": f"<think>{decoy}?</think><|begin_of_box|>{answer}<|end_of_box|>",
        }
        if not answer.startswith("["):  # a JSON order inside \boxed{} is not a shape any paper reads
            shapes["boxed"] = f"<think>Not {decoy}.</think>\n\\boxed{{{answer}}}"
        for shape, text in shapes.items():
            got = extract(item, text)
            if got != plain:
                bad.append((family, item.task, shape, got.rule, str(got.answer)[:40]))
        cut = extract(item, f"<think>\nThe answer is {answer}. But let me check the prior study")
        if cut.answer is not None:
            bad.append((family, item.task, "cut", cut.rule, str(cut.answer)[:40]))
    assert not bad, bad
