import numpy as np
import pytest

from medtemporal.errors import InvalidInputError
from medtemporal.registry import register
from medtemporal.schema import Item
from medtemporal.scoring import chance_level, is_correct, metric


def make(answer_type="choice", answer="B", options=None):
    options = {"A": "a", "B": "b", "C": "c", "D": "d", "E": "e"} if options is None else options
    return Item.create(benchmark="x", task="t", subtype="s", images=[], question="?",
                       options=options if answer_type == "choice" else {}, answer_type=answer_type, answer=answer)


def test_accuracy_scores_each_sample_and_counts_invalid_as_wrong():
    acc = metric("accuracy")
    items = [make(answer="B"), make(answer="C"), make(answer="D"), make("yesno", "Yes")]
    values = acc.score(items, ["b", "A", None, "yes"])
    assert values.tolist() == [1.0, 0.0, 0.0, 1.0]
    assert acc.higher_is_better and acc.percent and acc.aggregation == "mean"
    assert acc.reduce(np.array([[3.0]]), np.array([4.0])).tolist() == [0.75]


def test_is_correct_orderings_and_open_text():
    ordering = make("ordering", ["B", "A", "C"])
    assert is_correct(ordering, ["b", "a", "c"])
    assert not is_correct(ordering, ["A", "B", "C"])
    assert not is_correct(ordering, "B A C")
    assert is_correct(make("open", "Stable  effusion"), "stable effusion")


def test_chance_levels():
    assert chance_level(make()) == pytest.approx(0.2)
    assert chance_level(make(options={"A": "a", "B": "b", "C": "c", "D": "d"})) == pytest.approx(0.25)
    assert chance_level(make("yesno", "No")) == 0.5
    assert chance_level(make("ordering", ["A", "B", "C"])) == pytest.approx(1 / 6)
    assert chance_level(make("open", "text")) is None


def test_metric_needs_direction_and_a_known_aggregation():
    register("metric", "test_no_direction")(lambda items, answers: np.zeros(len(items)))
    register("metric", "test_bad_aggregation", higher_is_better=True, aggregation="median")(
        lambda items, answers: np.zeros(len(items)))
    with pytest.raises(InvalidInputError, match="without higher_is_better"):
        metric("test_no_direction")
    with pytest.raises(InvalidInputError, match="unknown aggregation 'median'"):
        metric("test_bad_aggregation")


def test_custom_reduce_is_kept():
    def ratio(sums, counts):
        return sums[..., 0] / sums[..., 1]

    register("metric", "test_ratio_error", higher_is_better=False, aggregation=ratio)(
        lambda items, answers: np.ones((len(items), 2)))
    m = metric("test_ratio_error")
    assert m.reduce is ratio and m.aggregation == "ratio" and not m.higher_is_better
