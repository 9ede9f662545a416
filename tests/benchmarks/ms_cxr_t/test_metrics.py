"""Accuracy and macro accuracy, per finding and averaged, against scikit-learn on the same answers."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, balanced_accuracy_score

from medtemporal.benchmarks.ms_cxr_t.command import progression_item
from medtemporal.benchmarks.ms_cxr_t.release import FINDINGS, PROGRESSIONS, Label
from medtemporal.scoring.aggregate import Outcome, score_outcomes

SPEC_METRICS = ("accuracy", "mscxrt_macro_accuracy", "mscxrt_accuracy_mean", "mscxrt_macro_accuracy_mean")


def _items_and_answers(n: int, seed: int):
    rng = random.Random(seed)
    items, answers = [], []
    for row in range(n):
        finding = rng.choice(FINDINGS[:4])  # one finding is never labelled, as in the phantoms
        truth = rng.choices(PROGRESSIONS, weights=(1, 2, 4))[0]  # unbalanced, as the release
        items.append(progression_item(Label(row, 10_000_000 + row % 40, 50_000_000 + row, 51_000_000 + row,
                                            "files/a.jpg", "files/b.jpg", finding, truth, "one_expert"), 0))
        answers.append(rng.choice([*items[-1].options, None]))  # None: an invalid answer
    return items, answers


def _predicted(item, answer):
    return item.options[answer] if answer else "invalid"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_values_equal_scikit_learn_per_finding_averaged_and_pooled(seed):
    items, answers = _items_and_answers(400, seed)
    outcomes = [Outcome(it, a, "answered" if a else "invalid") for it, a in zip(items, answers)]
    scores = {(s.group, s.metric): s for s in score_outcomes(outcomes, lambda t: SPEC_METRICS, resamples=50)}
    truth = [it.options[it.answer] for it in items]
    pred = [_predicted(it, a) for it, a in zip(items, answers)]
    assert scores[("overall", "accuracy")].value == pytest.approx(accuracy_score(truth, pred))
    with pytest.warns(UserWarning):  # "invalid" is a class of the predictions only: scikit-learn warns, as it should
        macro = balanced_accuracy_score(truth, pred)
    assert scores[("overall", "mscxrt_macro_accuracy")].value == pytest.approx(macro)
    per_acc, per_macro = [], []
    for finding in FINDINGS[:4]:
        idx = [i for i, it in enumerate(items) if it.subtype == finding]
        t, p = [truth[i] for i in idx], [pred[i] for i in idx]
        per_acc.append(accuracy_score(t, p))
        with pytest.warns(UserWarning):
            per_macro.append(balanced_accuracy_score(t, p))
        assert scores[(f"subtype:{finding}", "mscxrt_macro_accuracy")].value == pytest.approx(per_macro[-1])
        assert scores[(f"subtype:{finding}", "mscxrt_macro_accuracy_mean")].value == pytest.approx(per_macro[-1])
    assert scores[("overall", "mscxrt_accuracy_mean")].value == pytest.approx(np.mean(per_acc))
    assert scores[("overall", "mscxrt_macro_accuracy_mean")].value == pytest.approx(np.mean(per_macro))
    low, high = scores[("overall", "mscxrt_macro_accuracy")].ci_low, scores[("overall", "mscxrt_macro_accuracy")].ci_high
    assert low < macro < high and scores[("overall", "mscxrt_macro_accuracy")].chance == pytest.approx(1 / 3)


def test_a_constant_answer_scores_the_class_prior_in_accuracy_and_a_third_in_macro_accuracy():
    items, _ = _items_and_answers(300, 4)
    answers = [next(k for k, v in it.options.items() if v == "worsening") for it in items]
    outcomes = [Outcome(it, a, "answered") for it, a in zip(items, answers)]
    scores = {(s.group, s.metric): s.value for s in score_outcomes(outcomes, lambda t: SPEC_METRICS, resamples=20)}
    prior = np.mean([it.meta["progression"] == "worsening" for it in items])
    assert scores[("overall", "accuracy")] == pytest.approx(prior) and prior > 0.5
    assert scores[("overall", "mscxrt_macro_accuracy")] == pytest.approx(1 / 3)
    assert scores[("overall", "mscxrt_macro_accuracy_mean")] == pytest.approx(1 / 3)
