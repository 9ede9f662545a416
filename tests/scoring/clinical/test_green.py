"""GREEN's reply parsing and prompt, on replies shaped as the GREEN model writes them."""

from __future__ import annotations

import pytest

from medtemporal.backends.base import GenerateConfig
from medtemporal.prompts import PromptSet
from medtemporal.schema import Item
from medtemporal.scoring.clinical.green import CHAT_TEMPLATE, MAX_WORDS, RUBRIC, green_value, parse_green

FULL = """[Explanation]:
The candidate report misses the pleural effusion and invents a comparison.

[Clinically Significant Errors]:
(a) False report of a finding in the candidate: 0.
(b) Missing a finding present in the reference: 1. Small left pleural effusion.
(c) Misidentification of a finding's anatomic location/position: 0.
(d) Misassessment of the severity of a finding: 0.
(e) Mentioning a comparison that isn't in the reference: 1. "Unchanged from prior".
(f) Omitting a comparison detailing a change from a prior study: 0.

[Clinically Insignificant Errors]:
(a) False report of a finding in the candidate: 1. Mild degenerative changes.

[Matched Findings]:
3. Cardiomegaly; Pulmonary edema; Right PICC line.
"""

CASES = [
    ("a full reply: significant errors b and e, 3 matched", FULL, (3, 0, 1, 0, 0, 1, 0), 0.6),
    ("insignificant errors do not count", FULL.replace("(b) Missing a finding present in the reference: 1.",
                                                       "(b) Missing a finding present in the reference: 0."),
     (3, 0, 0, 0, 0, 1, 0), 0.75),
    ("'No errors' sections and nothing matched: 0", "[Clinically Significant Errors]:\nNo clinically significant "
     "errors.\n\n[Matched Findings]:\n0. None.\n", (0, 0, 0, 0, 0, 0, 0), 0.0),
    ("numbered sub-categories (1)-(6)", "[Clinically Significant Errors]:\n(1) False report: 2. a; b\n(6) Omitting"
     " a comparison: 1. c\n\n[Matched Findings]:\n1. effusion\n", (1, 2, 0, 0, 0, 0, 1), 0.25),
    ("a chat echo before the explanation is dropped", "<|user|> prompt [Explanation]: ignored <|assistant|>\n"
     "[Explanation]:\nok\n\n[Clinically Significant Errors]:\nNo errors.\n\n[Matched Findings]:\n2. a; b</s>",
     (2, 0, 0, 0, 0, 0, 0), 1.0),
]


@pytest.mark.parametrize(("case", "reply", "counts", "value"), CASES, ids=[c[0] for c in CASES])
def test_green_reads_replies_as_greens_parser(case: str, reply: str, counts: tuple[int, ...], value: float) -> None:
    parsed = parse_green(reply)
    assert parsed == counts
    assert green_value(dict(zip(RUBRIC.criteria, parsed))) == pytest.approx(value)


@pytest.mark.parametrize("reply", [None, "", "I cannot evaluate these reports.", "[Explanation]:\nno sections"])
def test_a_reply_without_matched_findings_is_unparseable(reply: str | None) -> None:
    assert parse_green(reply) is None


def test_the_prompt_is_greens_with_both_reports_cut_to_300_words() -> None:
    long_reference = " ".join(f"ref{k}" for k in range(400))
    item = Item.create(benchmark="x", task="report", subtype="s", images=[], question="Write.", answer_type="open",
                       answer=long_reference, reference=long_reference)
    request = RUBRIC.request(item, "xq " * 350, GenerateConfig(temperature=0.0, max_tokens=1024), PromptSet())
    text = request.messages[-1].parts[0].text
    assert text.startswith("Objective: Evaluate the accuracy of a candidate radiology report")
    assert f"ref{MAX_WORDS - 1}\n" in text and f"ref{MAX_WORDS} " not in text
    assert text.count("xq") == MAX_WORDS
    assert "e) Mentioning a comparison that isn't in the reference." in text
    assert CHAT_TEMPLATE.is_file() and "<|assistant|>" in CHAT_TEMPLATE.read_text()
