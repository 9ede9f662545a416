"""TemMed text rules: change keywords in any tense, report normalisation, statements and directions."""

from __future__ import annotations

import pytest

from medtemporal.benchmarks.temmed.text import (
    CHANGE_KEYWORDS,
    find_statements,
    is_change_sentence,
    is_target_report,
    keyword_of,
    normalize_report,
    pathology_patterns,
    sentences,
)
from medtemporal.benchmarks.temmed.vqa import Draft, finding_phrase, parse_question, template_question


@pytest.mark.parametrize(("word", "keyword"), [
    ("stable", "stable"), ("Unchanged", "unchange"), ("changes", "change"), ("changing", "change"),
    ("persistent", "persist"), ("persists", "persist"), ("increased", "increase"), ("increasing", "increase"),
    ("decreases", "decrease"), ("improving", "improve"), ("improvement", "improve"), ("worsened", "worsen"),
    ("thickening", "thicken"), ("thinned", "thin"), ("thinning", "thin"), ("progression", "progress"),
    ("deteriorating", "deteriorate"), ("reduced", "reduce"), ("resolving", "resolve"), ("exacerbated", "exacerbate"),
])
def test_keywords_match_in_any_tense(word: str, keyword: str) -> None:
    assert keyword_of(word) == keyword
    assert keyword in CHANGE_KEYWORDS


@pytest.mark.parametrize("word", ["thing", "think", "within", "new", "mild", "resolution", "stability", "exchange"])
def test_other_words_are_not_keywords(word: str) -> None:
    """"resolution" and "stability" are not inflections of "resolve" and "stable" (appendix A.1: the keywords
    "in any tense"), while "progression" and "improvement" start with their keyword: a substring search for the
    listed keywords ("unchange" is listed as a stem) gives the same split (issue 21 §7)."""
    assert keyword_of(word) is None


def test_target_reports_need_every_sentence_to_be_a_change_sentence() -> None:
    assert is_target_report("Stable cardiomegaly. Increasing left effusion!")
    assert is_target_report("1. Stable cardiomegaly. 2. Unchanged lines.")  # list numbers are not sentences
    assert not is_target_report("Stable cardiomegaly. Mild atelectasis.")
    assert not is_target_report("New small right pleural effusion.")
    assert not is_target_report("   ")
    assert is_change_sentence("No interval change") and not is_change_sentence("No acute process")


def test_normalisation_is_the_released_one() -> None:
    assert normalize_report("STABLE\n  cardiomegaly.  NO change!   what? ok") == "Stable cardiomegaly. No change! What? Ok"
    assert normalize_report("unchanged 2.5 cm nodule.") == "Unchanged 2.5 Cm nodule."
    assert sentences("A. B! c? 3.") == ["A", "B", "c"]


def test_statements_take_the_nearest_pathology_after_the_keyword() -> None:
    found = find_statements("Improving mild cardiogenic edema and increasing right effusions. Decrease in left pleural effusion.")
    assert [(s.text, s.keyword, s.pathology, s.direction, s.sentence) for s in found] == [
        ("improving mild cardiogenic edema", "improve", "edema", "improved", 0),
        ("increasing right effusions", "increase", "effusion", "worsened", 0),
        ("decrease in left pleural effusion", "decrease", "effusion", "improved", 1),
    ]


def test_statement_directions_and_negation() -> None:
    def direction(text: str) -> str | None:
        (st,) = find_statements(text)
        return st.direction

    assert direction("No change in the small left effusion") == "unchanged"
    assert direction("Persistent bibasilar atelectasis") == "unchanged"
    assert direction("Interval change in right effusion") is None      # change without direction
    assert direction("No increase in the effusion") is None            # a negated direction says too little
    assert direction("Pleural thickening with effusion") is None
    assert find_statements("Effusion has increased") == []              # pathology before keyword: no match
    assert find_statements("Stable heart size and increasing effusion")[0].text == "increasing effusion"


def test_gap_limit_and_custom_pathologies() -> None:
    assert find_statements("Stable one two three four five six seven eight nine effusion") == []
    patterns = pathology_patterns(["nodule"])
    assert [s.text for s in find_statements("Stable right nodules. Stable effusion.", patterns)] == ["stable right nodules"]


def test_template_questions_share_one_form_for_yes_and_no() -> None:
    (st,) = find_statements("Decrease in left pleural effusion.")
    assert finding_phrase(st) == "left pleural effusion"
    yes = template_question(Draft(0, "", st, "Yes", "improved"))
    no = template_question(Draft(0, "", st, "No", "unchanged"))
    assert yes == "Has the left pleural effusion improved since the last visit?"
    assert no == "Has the left pleural effusion remained unchanged since the last visit?"
    (st2,) = find_statements("Worsening bilateral effusions.")
    assert template_question(Draft(0, "", st2, "Yes", "worsened")).startswith("Have the bilateral effusions")


def test_parse_question_accepts_one_question_only() -> None:
    assert parse_question('"Has the effusion improved?"\n') == "Has the effusion improved?"
    assert parse_question("Question: Has it worsened?") == "Has it worsened?"
    assert parse_question("The effusion improved.") is None
    assert parse_question("") is None
