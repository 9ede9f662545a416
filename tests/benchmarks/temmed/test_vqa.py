import random
from collections import Counter

from medtemporal.benchmarks.temmed.text import find_statements
from medtemporal.benchmarks.temmed.vqa import plan_counts, select

SENTENCES = {"unchanged": "Unchanged cardiomegaly.", "worsened": "Worsening left pleural effusion.",
             "improved": "Improved right lower lobe opacity."}


def _candidates(mix: dict[str, int]):
    out = []
    for direction, n in mix.items():
        statement = find_statements(SENTENCES[direction])[0]
        out += [(len(out), SENTENCES[direction], statement) for _ in range(n)]
    return out


def test_answers_are_half_no_and_each_named_direction_is_balanced():
    drafts = select(_candidates({"unchanged": 80, "worsened": 60, "improved": 60}), None, random.Random(0))
    answers = Counter(d.answer for d in drafts)
    assert answers == {"Yes": 100, "No": 100}
    named = Counter((d.asked, d.answer) for d in drafts)
    for direction in SENTENCES:  # the wording alone does not give the answer away
        assert abs(named[(direction, "Yes")] - named[(direction, "No")]) <= 2
    for d in drafts:  # Yes names the statement's own direction, No another one
        assert (d.asked == d.statement.direction) == (d.answer == "Yes")


def test_a_dominant_direction_is_asked_of_no_more_than_half_so_every_named_direction_is_balanced():
    """70% "unchanged": dealing half No at random named "worsened"/"improved" in No questions more often than
    Yes (the 55.5% `vqa_worsened` answer prior of issue #9); now each named direction is exactly half Yes."""
    excluded = Counter()
    drafts = select(_candidates({"unchanged": 140, "worsened": 30, "improved": 30}), None, random.Random(1), excluded)
    directions = Counter(d.statement.direction for d in drafts)
    assert directions == {"unchanged": 60, "worsened": 30, "improved": 30}  # every other sentence is kept
    assert excluded == {"vqa_direction_over_half": 80}
    named = Counter((d.asked, d.answer) for d in drafts)
    for direction in SENTENCES:
        assert named[(direction, "Yes")] == named[(direction, "No")] > 0
    for d in drafts:
        assert (d.asked == d.statement.direction) == (d.answer == "Yes")


def test_with_fewer_questions_than_sentences_the_balance_holds_and_all_sentences_are_eligible():
    candidates = [(i, sentence, st) for i, (_, sentence, st) in
                  enumerate(_candidates({"unchanged": 300, "worsened": 100, "improved": 100}))]
    asked = set()
    for seed in range(20):
        drafts = select(candidates, 120, random.Random(seed))
        assert len(drafts) == 120
        named = Counter((d.asked, d.answer) for d in drafts)
        assert all(named[(v, "Yes")] == named[(v, "No")] for v in SENTENCES)
        asked |= {d.instance for d in drafts}
    assert len(asked) > 0.9 * len(candidates)  # any sentence may be asked


def test_plan_counts_keeps_every_sentence_when_no_direction_is_over_half():
    kept, load = plan_counts({"unchanged": 50, "improved": 20, "worsened": 20, "changed": 10}, None)
    assert kept == {"unchanged": 50, "improved": 20, "worsened": 20, "changed": 10}
    for d, k in kept.items():  # each direction's sentences are the pair loads it takes part in
        assert sum(v for pair, v in load.items() if d in pair) == k
