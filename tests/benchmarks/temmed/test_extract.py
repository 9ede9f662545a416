"""TemMed's released extraction rules on tricky outputs (through `extract`, as the runner calls them)."""

from __future__ import annotations

import pytest

from medtemporal.schema import Item
from medtemporal.scoring import extract

VQA = Item.create(benchmark="temmed", task="vqa", subtype="vqa", images=[], question="?", answer_type="yesno",
                  answer="Yes")
PAIR = Item.create(benchmark="temmed", task="image_pair", subtype="pair", images=[], question="stable edema",
                   options={"A": "image pair A", "B": "image pair B", "C": "image pair C"}, answer_type="choice",
                   answer="B")
REPORT = Item.create(benchmark="temmed", task="report", subtype="report", images=[], question="Write.",
                     answer_type="open", answer="Stable.", reference="Stable.")


@pytest.mark.parametrize(("text", "want"), [
    ("Yes", "Yes"), ("yes.", "Yes"), ("YES, it has", "Yes"), ("Yes\n\nThe effusion grew.", "Yes"),
    ("No", "No"), ("no.", "No"), ("NO", "No"),
    ("Nope", "No"),            # first two characters "No": the release reads No
    ("Not sure", "No"),        # likewise
    ("Noted: yes", "No"),      # likewise
    (" Yes", None),            # nothing is stripped first
    ("**Yes**", None), ("The answer is yes", None), ("yEs", None), ("Y", None), ("", None), (None, None),
])
def test_vqa_first_characters(text: str | None, want: str | None) -> None:
    got = extract(VQA, text)
    assert got.answer == want
    assert got.rule == "temmed_yesno@2"


@pytest.mark.parametrize(("text", "want"), [
    ("Pair B shows it. My answer is B", "B"),
    ("My answer is **C**", "C"),
    ("MY ANSWER IS **A.**", "A"),
    ("my answer is c.", "C"),
    ("My answer is actually C", "A"),          # substring "my answer is a" is tested first, as released
    ("My answer is B, not A", "B"),
    ("I think my answer is b and my answer is a", "A"),  # letters are tried in order A, B, C
    ("My answer is: B", None), ("My answer is [B]", None), ("The answer is B", None), ("B", None),
    ("My answer is (B)", None), ("My answer is D", None),
])
def test_image_pair_my_answer_is(text: str, want: str | None) -> None:
    got = extract(PAIR, text)
    assert got.answer == want
    assert got.rule == "temmed_pair@2"


def test_report_output_is_kept_verbatim_but_for_closed_reasoning() -> None:
    got = extract(REPORT, "  Stable.\n")
    assert got.answer == "  Stable.\n"  # the metrics strip and lowercase it themselves, as released
    assert got.rule == "raw_text@2"
    assert extract(REPORT, "  <think>x</think> Stable.\n").answer == "Stable."
