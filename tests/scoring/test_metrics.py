import random

import numpy as np
import pytest
from sklearn.metrics import f1_score

from medtemporal.errors import InvalidInputError
from medtemporal.registry import register
from medtemporal.schema import Item
from medtemporal.scoring import chance_level, is_correct, metric
from medtemporal.scoring.metrics import reduce_yesno_macro_f1, yesno_macro_f1


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


def _item(answer: str) -> Item:
    return Item.create(benchmark="temmed", task="vqa", subtype="vqa", images=[], question="?",
                       answer_type="yesno", answer=answer)


@pytest.mark.parametrize("seed", range(5))
def test_macro_f1_equals_scikit_learn(seed: int) -> None:
    rng = random.Random(seed)
    truth = [rng.choice(["Yes", "No"]) for _ in range(50)]
    preds = [rng.choice(["Yes", "No", None]) if seed else rng.choice(["Yes", "No"]) for _ in range(50)]
    stats = yesno_macro_f1([_item(t) for t in truth], preds)
    got = float(reduce_yesno_macro_f1(stats.sum(0), np.array(len(truth))))
    labels = sorted(set(truth) | {p for p in preds if p})
    want = f1_score(truth, [p or "invalid" for p in preds], labels=labels, average="macro", zero_division=0)
    assert got == pytest.approx(want)
    if seed == 0:  # without invalid answers this is exactly the release's call
        assert got == pytest.approx(f1_score(truth, preds, average="macro"))


def test_macro_f1_reduce_works_on_bootstrap_batches() -> None:
    stats = yesno_macro_f1([_item("Yes"), _item("No"), _item("No")], ["Yes", "Yes", "No"])
    batch = np.stack([stats.sum(0), stats[:2].sum(0)])
    got = reduce_yesno_macro_f1(batch, np.array([3, 2]))
    assert got.shape == (2,)
    assert got[0] == pytest.approx(f1_score(["Yes", "No", "No"], ["Yes", "Yes", "No"], average="macro"))
