import asyncio
from collections import Counter
from pathlib import Path

import pytest

from medtemporal.backends import load
from medtemporal.backends.base import (
    GenerateConfig,
    ImagePart,
    Message,
    Request,
    RequestError,
    TextPart,
)
from medtemporal.errors import UnknownNameError


@pytest.fixture
def root(tmp_path) -> Path:
    """Two image files with different content at the same file name: x/T1.png and y/T1.png."""
    for folder, value in (("x", b"one"), ("y", b"two")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "T1.png").write_bytes(value)
    return tmp_path


def _request(root: Path, question: str, choices=("A", "B", "C", "D", "E"), key="single_emergence", image="x/T1.png",
             answer_format="{}"):
    parts = (TextPart("T1:"), ImagePart(root / image), TextPart(question))
    return Request((Message("user", parts),), GenerateConfig(), choices, key, answer_format)


def _answer(backend, request) -> str:
    return asyncio.run(backend.generate(request)).text


def test_random_is_fixed_by_request_content_not_order_or_instance(root):
    requests = [_request(root, f"Question {i}?") for i in range(200)]
    first = [_answer(load("baseline:random"), r) for r in requests]
    backend = load("baseline:random")
    again = {r: _answer(backend, r) for r in reversed(requests)}
    assert first == [again[r] for r in requests]
    # another seed, or other image content under the same file name → other answers
    assert first != [_answer(load("baseline:random", seed=1), r) for r in requests]
    assert first != [_answer(backend, _request(root, f"Question {i}?", image="y/T1.png")) for i in range(200)]
    counts = Counter(first)
    assert set(counts) == set("ABCDE") and min(counts.values()) > 20


def test_random_answers_within_the_request_answer_space(root):
    backend = load("baseline:random")
    answers = {_answer(backend, _request(root, f"Q{i}", choices=("Yes", "No"))) for i in range(50)}
    assert answers == {"Yes", "No"}


def test_constant_answers_its_letter_or_word(root):
    assert _answer(load("baseline:constant-C"), _request(root, "Q?")) == "C"
    assert _answer(load("baseline:constant-Yes"), _request(root, "Q?", choices=("Yes", "No"))) == "Yes"


def test_majority_uses_the_subtype_prior_then_the_overall_one(root):
    backend = load("baseline:majority")
    backend.fit([("a", "B"), ("a", "B"), ("a", "C"), ("b", "D"), ("b", "E"), ("c", "E"), ("c", "E")])
    assert _answer(backend, _request(root, "Q", key="a")) == "B"
    assert _answer(backend, _request(root, "Q", key="b")) == "D"  # tie: alphabetical
    assert _answer(backend, _request(root, "Q", key="unseen")) == "E"  # overall: E 3, B 2
    # an answer outside this request's space is never given
    assert _answer(backend, _request(root, "Q", key="a", choices=("C", "D"))) == "C"
    assert backend.identity()["prior"]["a"] == {"B": 2, "C": 1}


def test_baselines_refuse_questions_without_an_answer_space_and_majority_needs_fitting(root):
    with pytest.raises(RequestError, match="closed questions"):
        _answer(load("baseline:random"), _request(root, "Describe.", choices=None))
    with pytest.raises(RequestError, match="fitted"):
        _answer(load("baseline:majority"), _request(root, "Q"))


def test_unknown_baseline_suggests_names():
    with pytest.raises(UnknownNameError, match="Did you mean 'random'"):
        load("baseline:randon")
    with pytest.raises(UnknownNameError, match="constant-<ANSWER>"):
        load("baseline:constant-")


def test_baselines_answer_in_the_request_answer_format(root):
    majority = load("baseline:majority")
    majority.fit([("single_emergence", "D")])
    fmt = "My answer is {}."
    random_answers = {_answer(load("baseline:random"), _request(root, f"Q{i}", answer_format=fmt)) for i in range(30)}
    assert random_answers == {f"My answer is {x}." for x in "ABCDE"}
    assert _answer(load("baseline:constant-C"), _request(root, "Q", answer_format=fmt)) == "My answer is C."
    assert _answer(majority, _request(root, "Q", answer_format=fmt)) == "My answer is D."
    # the format does not change which answer the random baseline picks
    plain = _answer(load("baseline:random"), _request(root, "Q7"))
    assert _answer(load("baseline:random"), _request(root, "Q7", answer_format=fmt)) == f"My answer is {plain}."


def test_random_orders_with_a_uniform_permutation_in_the_answer_format(root):
    fmt = '{{"order": {}, "explanation": "none"}}'
    orders = Counter()
    for i in range(600):
        request = Request((Message("user", (TextPart(f"Frames {i}"),)),), GenerateConfig(), ("A", "B", "C"),
                          answer_format=fmt, ordering=True)
        text = _answer(load("baseline:random"), request)
        order = tuple(__import__("json").loads(text)["order"])
        assert sorted(order) == ["A", "B", "C"]
        orders[order] += 1
    assert len(orders) == 6 and min(orders.values()) > 60  # each of 3! = 6 orders about 100 times


def test_oracle_answers_the_fitted_truth_and_refuses_unknown_items(root):
    oracle = load("baseline:oracle")
    oracle.fit_answers({"i1": ["C", "A", "B"], "i2": "B"})
    ask = lambda item, fmt="{}": Request((Message("user", (TextPart("?"),)),), GenerateConfig(), ("A", "B", "C"),
                                         answer_format=fmt, item=item)
    assert _answer(oracle, ask("i1")) == '["C", "A", "B"]'
    assert _answer(oracle, ask("i2", "My answer is {}.")) == "My answer is B."
    with pytest.raises(RequestError, match="does not know the answer"):
        _answer(oracle, ask("i3"))


def test_majority_answers_the_letter_of_the_commonest_label_however_the_options_are_shuffled(root):
    majority = load("baseline:majority")
    majority.fit([("edema", "worsening"), ("edema", "worsening"), ("edema", "stable"), ("other", "B")])
    for labels in (("improving", "stable", "worsening"), ("worsening", "improving", "stable")):
        request = Request((Message("user", (TextPart("Q"),)),), choices=("A", "B", "C"), key="edema", labels=labels)
        assert _answer(majority, request) == "ABC"[labels.index("worsening")]
    # options that are no label it has seen (MI-CXR's distractors): the commonest letter, as before
    assert _answer(majority, Request((), choices=("A", "B"), key="other", labels=("x", "y"))) == "B"
