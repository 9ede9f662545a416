import pytest

from medtemporal.benchmark import Manifest
from medtemporal.contract import BenchmarkSpec
from medtemporal.errors import UnknownNameError
from medtemporal.registry import register
from medtemporal.schema import Item
from medtemporal.scoring import Extraction, extract, normalise

from helpers.scored_runs import NAME

TEL = {"A": "T1 → T2", "B": "T2 → T3", "C": "T3 → T4", "D": "T4 → T5", "E": "No appearance"}
GTS = {
    "A": "Effusion appears between T1 and T2 and then persists.",
    "B": "Effusion worsens from T2 to T3, then improves between T4 and T5.",
    "C": "Effusion remains unchanged across all visits.",
    "D": "Effusion resolves between T3 and T4.",
    "E": "None of them are true.",
}


def item(options=TEL, answer_type="choice", answer="C", benchmark=NAME, task="TEL"):
    return Item.create(benchmark=benchmark, task=task, subtype="s", images=[], question="?",
                       options=options if answer_type == "choice" else {}, answer_type=answer_type, answer=answer)


# (model output, expected letter or None for invalid)
LETTER_CASES = [
    # bare letters and light formatting
    ("C", "C"),
    ("(C)", "C"),
    ("C.", "C"),
    ("C)", "C"),
    ("[C]", "C"),
    ("**C**", "C"),
    ("`C`", "C"),
    ("  c  ", "C"),
    ("(c)", "C"),
    ("Ｃ", "C"),  # full-width letter
    ("C\n", "C"),
    # letter with its option text
    ("C. T3 → T4", "C"),
    ("C: T3 → T4", "C"),
    ("Option B: T2 → T3", "B"),
    ("option d", "D"),
    ("E. None of the above", "E"),
    ("**D. T4 → T5**", "D"),
    ("b) T2 → T3", "B"),
    # explicit answer statements
    ("Answer: C", "C"),
    ("Answer: (c)", "C"),
    ("answer: c.", "C"),
    ("The answer is C. T3 → T4", "C"),
    ("The correct answer is (B) T2 → T3.", "B"),
    ("The correct option is D", "D"),
    ("Correct answer: **E**", "E"),
    ("I would choose B.", "B"),
    ("I'll go with option C because the effusion appears at T4.", "C"),
    ("My choice is A.", "A"),
    ("B is the correct answer.", "B"),
    ("Option D is correct.", "D"),
    ("The answer is A because the effusion is new at T2.", "A"),
    ("### Answer\n**D**", "D"),
    ("## Final Answer\n\n(B)", "B"),
    ("Final answer: C", "C"),
    ("Final Answer: The final answer is $\\boxed{D}$", "D"),
    ("\\boxed{B}", "B"),
    ("\\boxed{\\text{E}}", "E"),
    ("<answer>A</answer>", "A"),
    ("<answer> (d) </answer>", "D"),
    ("<think>Maybe A... or B?</think>\nAnswer: B", "B"),
    # chatty outputs
    ("Sure! Let's look at each interval. Between T1 and T2 nothing changes; between T2 and T3 a new "
     "effusion appears. Therefore, the answer is B.", "B"),
    ("Looking at the images:\n- T1: clear\n- T2: clear\n- T3: small effusion\n\nAnswer: B", "B"),
    ("Option A says T1 → T2, which is wrong. Option B says T2 → T3, which matches.\nFinal answer: B", "B"),
    ("Let me compare the visits step by step.\n\n1. T1 vs T2: no change.\n2. T2 vs T3: new opacity.\n\n"
     "**Answer:** (B) T2 → T3", "B"),
    ("The effusion first appears on the third image (C).", "C"),
    ("I first thought the answer is A, but the final answer is C.", "C"),
    ("B. Wait, on reflection the answer is C.", "C"),
    ("Comparing T2 with T3, a new effusion is visible.\n\nB) T2 → T3", "B"),
    ("Reasoning, e.g. comparing sizes, is needed.\n- D. T4 → T5", "D"),
    ("A: no change here\nB: the effusion appears here", None),  # per-option notes, no choice
    ("C\n\nI. Findings: new effusion at T4.\nII. Impression: as above.", "C"),  # "I." is no option
    # ambiguous or several letters
    ("A or B", None),
    ("The answer is B or C.", None),
    ("Either A or B could be correct.", None),
    ("Both B and D are plausible.", None),
    ("B/C", None),
    ("Answer: B\nAnswer: D", None),
    ("A. T1 → T2\nB. T2 → T3\nC. T3 → T4\nD. T4 → T5\nE. No appearance", None),
    ("<answer>unclear</answer> The answer is C.", None),  # an answer slot that names no option
    # no answer
    ("I cannot determine the answer from these images.", None),
    ("I'm sorry, but I can't help with interpreting medical images.", None),
    ("As an AI, I am not able to provide a diagnosis.", None),
    ("", None),
    ("   ", None),
    ("None of the options fit.", None),
    ("The answer is F.", None),  # not an option
    ("The answer is not A.", None),
    # the article "A", lower-case words and non-letters
    ("A small effusion is seen at T3.", None),
    ("A new opacity appears between T2 and T3.", None),
    ("a", "A"),
    ("the answer is a pleural effusion", None),
    ("T3 → T4", "C"),  # option text quoted back exactly
    ("t3 -> t4.", "C"),
    ("No appearance.", "E"),
    ("The answer is: T2 → T3, since the effusion is new there.", "B"),
    ("No appearance of effusion is seen.", None),  # not the whole option text
    ("B-lines are seen; E→R pattern.", None),
    ("Vitamin D levels are irrelevant; T4 → T5 shows a change.", "D"),  # a standalone D is read in the last tier
]


@pytest.mark.parametrize(("output", "expected"), LETTER_CASES)
def test_letter_rule(output, expected):
    assert extract(item(), output, rule="letter") == Extraction(expected, "letter@3")


def test_table_is_large_enough():
    assert len(LETTER_CASES) >= 50


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Effusion remains unchanged across all visits.", "C"),
        ("The answer is: Effusion resolves between T3 and T4.", "D"),
        ("none of them are true", "E"),
        ("Effusion remains unchanged", None),  # a prefix of an option's text is not that option
        ("C. Effusion resolves between T3 and T4.", "C"),  # the letter wins over quoted text
    ],
)
def test_letter_rule_option_text(output, expected):
    assert extract(item(GTS), output, rule="letter").answer == expected


def test_identical_option_texts_are_ambiguous():
    options = {"A": "T1, T2", "B": "T2, T3", "C": "T1, T2"}
    assert extract(item(options, answer="A"), "T1, T2", rule="letter").answer is None
    assert extract(item(options, answer="B"), "T2, T3", rule="letter").answer == "B"


def test_only_offered_letters_count():
    three = {"A": "x", "B": "y", "C": "z"}
    assert extract(item(three, answer="A"), "D", rule="letter").answer is None
    assert extract(item(three, answer="A"), "So B, not D.", rule="letter").answer == "B"


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Yes", "Yes"),
        ("yes.", "Yes"),
        ("No, the effusion has not changed.", "No"),
        ("**No**", "No"),
        ("Answer: yes", "Yes"),
        ("After comparing both images, my answer is No.", "No"),
        ("Final answer: YES", "Yes"),
        ("<answer>no</answer>", "No"),
        ("There is no new opacity.", None),
        ("Yes or no is hard to say.", None),
        ("I cannot tell.", None),
        ("", None),
    ],
)
def test_yesno_rule(output, expected):
    assert extract(item(answer_type="yesno", answer="Yes"), output) == Extraction(expected, "yesno@3")


def test_default_rule_follows_answer_type():
    assert extract(item(), "B").rule == "letter@3"
    assert extract(item(answer_type="open", answer="x"), "  a report.\n") == Extraction("a report.", "text@2")
    assert extract(item(answer_type="open", answer="x"), None) == Extraction(None, "text@2")


def test_spec_names_the_rule_per_task():
    register("benchmark", "extract-test-spec")(BenchmarkSpec(
        name="extract-test-spec", version="1", licence="synthetic", description="",
        add_arguments=lambda p: None, build=lambda a: ([], Manifest(benchmark="x", version="1", licence="synthetic")),
        extractors={"VQA": "yesno"},
    ))
    vqa = item(benchmark="extract-test-spec", task="VQA", answer="C")
    assert extract(vqa, "yes").rule == "yesno@3"
    assert extract(item(benchmark="extract-test-spec", task="TEL"), "C").rule == "letter@3"


def test_ordering_items_use_the_ordering_rule_by_default():
    ordering = item(answer_type="ordering", answer=["B", "A"])
    got = extract(ordering, "B, A")
    assert got.rule == "ordering@2" and got.answer == ["B", "A"]


def test_unknown_rule_suggests_names():
    with pytest.raises(UnknownNameError, match="Did you mean 'letter'"):
        extract(item(), "C", rule="leter")


def test_normalise_strips_reasoning_and_markdown():
    assert normalise("<think>A?</think>\n## **Answer**: `C`") == "Answer: C"
    assert normalise("<think>never closed A B C") == ""
