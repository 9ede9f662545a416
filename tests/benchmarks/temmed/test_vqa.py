import random
from collections import Counter

from medtemporal.benchmarks.temmed.text import find_statements
from medtemporal.benchmarks.temmed.vqa import select

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


def test_a_dominant_direction_leaves_only_the_unavoidable_skew():
    drafts = select(_candidates({"unchanged": 140, "worsened": 30, "improved": 30}), None, random.Random(1))
    named = Counter((d.asked, d.answer) for d in drafts)
    oracle = sum(max(named[(v, "Yes")], named[(v, "No")]) for v in SENTENCES) / len(drafts)
    # 70% "unchanged" with half No: a wording-only guess can reach 1/2 + (0.7 - 0.5) = 70% at best here
    assert oracle <= 0.70
