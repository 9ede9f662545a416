"""The ``ordering`` extraction rule on realistic outputs, and micro pairwise accuracy."""

from __future__ import annotations

import numpy as np
import pytest

from medtemporal.schema import Item
from medtemporal.scoring import extract
from medtemporal.scoring.ordering import (
    adjacent_pairs_correct,
    pairwise_accuracy,
    pairwise_accuracy_partial,
    split_ordering,
)


def _item(ids: str | list[str] = "ABCD", answer: list[str] | None = None) -> Item:
    ids = list(ids)
    return Item.create(benchmark="skillqa", task="ordering", subtype="CPR_4", images=[], question="?",
                       options={k: f"Frame {k}" for k in ids}, answer_type="ordering",
                       answer=answer or ids[::-1])


DBAC = ["D", "B", "A", "C"]
INVALID = None

# (output, expected order or None for invalid); identifiers A-D.
CASES = [
    ('["D","B","A","C"]', DBAC),
    ('["D", "B", "A", "C"]\nFrame D shows the closed AED.', DBAC),
    ('{"order": ["D","B","A","C"], "explanation": "The AED is closed first."}', DBAC),
    ('```json\n{\n  "order": ["D", "B", "A", "C"],\n  "explanation": "Pads, then analysis."\n}\n```', DBAC),
    ('Here is my answer:\n```json\n{"ordering": ["D","B","A","C"], "rationale": "x"}\n```', DBAC),
    ('{"order": "D → B → A → C", "explanation": "..."}', DBAC),
    ('{"order": "D, B, A, C", "reasoning": "..."}', DBAC),
    ('{"Order": ["Frame D", "Frame B", "Frame A", "Frame C"], "Explanation": "..."}', DBAC),
    ('{"order": ["D.jpg", "B.jpg", "A.jpg", "C.jpg"], "explanation": "..."}', DBAC),
    ('{"order": ["d", "b", "a", "c"], "explanation": "lower case"}', DBAC),
    ('{"order": ["D","B","A","D"], "explanation": "a duplicate"}', INVALID),
    ('{"order": ["D","B","A"], "explanation": "one missing"}', INVALID),
    ('{"order": ["D","B","A","E"], "explanation": "an unknown identifier"}', INVALID),
    ('{"order": [4, 2, 1, 3], "explanation": "positions, not identifiers"}', INVALID),
    ('{"explanation": "no order at all"}\nD, B, A, C', DBAC),
    ("D, B, A, C", DBAC),
    ("D,B,A,C", DBAC),
    ("D B A C", DBAC),
    ("D → B → A → C", DBAC),
    ("D -> B -> A -> C", DBAC),
    ("D > B > A > C", DBAC),
    ("D - B - A - C", DBAC),
    ("[D, B, A, C]", DBAC),
    ("(D, B, A, C)", DBAC),
    ("Order: DBAC", DBAC),
    ("Order: D, B, A, C\nExplanation: the device arrives closed.", DBAC),
    ("**Order:** D → B → A → C\n\n**Explanation:** First the AED is closed.", DBAC),
    ("## Final order\nD, B, A, C", DBAC),
    ("The correct order is D, B, A, C because the pads precede the shock.", DBAC),
    ("The correct sequence is Frame D, Frame B, Frame A, Frame C.", DBAC),
    ("The chronological order of the frames is D then B then A then C.", DBAC),
    ("Answer: d, b, a, c", DBAC),
    ("Frame D shows the closed device, so it comes first.\nFinal order: D → B → A → C", DBAC),
    ("I first thought the order is A, B, C, D. Final answer: D, B, A, C.", DBAC),
    ("<think>Maybe A, B, C, D?</think>\nOrder: D, B, A, C", DBAC),
    ("D, B, A, C. Frame D shows the closed AED; frame B the pads.", DBAC),
    ("1. Frame D: the AED is closed.\n2. Frame B: pads on the chest.\n3. Frame A: analysing.\n4. Frame C: shock.", DBAC),
    ("Step 1: D\nStep 2: B\nStep 3: A\nStep 4: C", DBAC),
    ("- D\n- B\n- A\n- C", INVALID),  # four one-element lines, no sequence: nothing committed
    ("Order: D, B, A, D", INVALID),
    ("Order: D, B, A", INVALID),
    ("Order: D, B, E, C", INVALID),
    ("Order: D, B, A, C, E", INVALID),
    ("The order is D, B, A, C or maybe D, A, B, C.", INVALID),
    ("Order: D, B, A, C\n\nFinal order: D, A, B, C", ["D", "A", "B", "C"]),
    ("I cannot determine the order from these frames.", INVALID),
    ("A frame shows compressions and another shows the pads.", INVALID),
    ("", INVALID),
]


@pytest.mark.parametrize(("output", "expected"), CASES)
def test_ordering_extraction_table(output: str, expected: list[str] | None) -> None:
    assert len(CASES) >= 40
    got = extract(_item(), output)
    assert got.answer == expected
    assert got.rule == "ordering@2"


TOKENS = ["k7qz", "b2mx", "t9fd", "p3wh"]


@pytest.mark.parametrize(("output", "expected"), [
    ('{"order": ["t9fd", "k7qz", "p3wh", "b2mx"], "explanation": "..."}', ["t9fd", "k7qz", "p3wh", "b2mx"]),
    ("Order: t9fd → k7qz → p3wh → b2mx", ["t9fd", "k7qz", "p3wh", "b2mx"]),
    ("T9FD, K7QZ, P3WH, B2MX", ["t9fd", "k7qz", "p3wh", "b2mx"]),
    ("Order: t9fd, k7qz, p3wh", None),
    ("Order: t9fd, k7qz, p3wh, A", None),
])
def test_renamed_tokens_are_identifiers(output: str, expected: list[str] | None) -> None:
    assert extract(_item(TOKENS), output).answer == expected


def test_the_rationale_is_the_rest_of_the_output() -> None:
    item = _item()
    assert split_ordering(item, '{"order": ["D","B","A","C"], "explanation": "Pads first."}').rationale == "Pads first."
    assert split_ordering(item, "Order: D, B, A, C\nFrame D shows the box.").rationale == "Frame D shows the box"
    invalid = split_ordering(item, "No idea, the frames look alike.")
    assert invalid.order is None and invalid.rationale == "No idea, the frames look alike."


@pytest.mark.parametrize(("truth", "predicted", "right"), [
    ("ABCD", "ABCD", 3),
    ("ABCD", "DCBA", 0),
    ("ABCD", "BADC", 1),   # only (B, C) keeps its order
    ("ABCD", "ACBD", 2),   # pairs need not stay adjacent: (A, B) and (C, D) right, (B, C) wrong
    ("ABCD", "ABD", 1),    # C missing: (B, C) and (C, D) are wrong
    ("ABCDEF", "BACDFE", 3),
])
def test_adjacent_pairs(truth: str, predicted: str, right: int) -> None:
    assert adjacent_pairs_correct(list(truth), list(predicted)) == right


def test_pairwise_accuracy_is_micro_over_pairs() -> None:
    four, six = _item("ABCD", list("ABCD")), _item("ABCDEF", list("ABCDEF"))
    stats = pairwise_accuracy([four, six], [list("DCBA"), list("ABCDEF")])
    assert stats.tolist() == [[0, 3], [5, 5]]
    from medtemporal.scoring.ordering import reduce_pairwise

    assert reduce_pairwise(stats.sum(axis=0), np.array(2.0)) == pytest.approx(5 / 8)  # not (0 + 1) / 2
    assert pairwise_accuracy([four], [None]).tolist() == [[0, 3]]


def test_partial_reading_keeps_the_pairs_an_invalid_order_places_right() -> None:
    item = _item(answer=list("DBAC"))
    outputs = ["Order: D, B, A", "Order: D, B, A, D, C", '{"order": ["D", "B"]}', "no order", None, "D, B, A, C"]
    answers = [extract(item, o).answer if o else None for o in outputs]
    assert answers == [None, None, None, None, None, DBAC]
    partial = pairwise_accuracy_partial([item] * 6, answers, outputs)
    assert partial[:, 0].tolist() == [2, 3, 1, 0, 0, 3]  # missing C: (A, C) wrong; repeated D: first place
    assert pairwise_accuracy([item] * 6, answers)[:, 0].tolist() == [0, 0, 0, 0, 0, 3]
