"""The generic weighted Overall (``overall:paper``, `ScoreGroups.overall_weights`) in `score_outcomes`."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.scored_runs import SPEC, make_items

from medtemporal.scoring.aggregate import WEIGHTED_OVERALL, Outcome, score_outcomes
from medtemporal.scoring.repeats import point_values

WEIGHTS = {"subtypes:TEL/Single (E/R)": 200, "task:ICR": 317, "subtypes:GTS/Multi Abnormality": 100}


def outcomes(right: dict[str, float]) -> list[Outcome]:
    """Items of every subtype; in each subtype the first ``right[subtype]`` share answered right."""
    items = make_items(patients=60, per_patient=3)
    seen: dict[str, int] = {}
    out = []
    for item in items:
        k = seen[item.subtype] = seen.get(item.subtype, 0) + 1
        total = sum(i.subtype == item.subtype for i in items)
        good = k <= right.get(item.subtype, 0.0) * total
        answer = item.answer if good else next(x for x in item.options if x != item.answer)
        out.append(Outcome(item, answer, "answered"))
    return out


def by_group(scores):
    return {s.group: s for s in scores}


def test_value_is_the_weighted_mean_of_the_groups_with_a_patient_interval():
    got = by_group(score_outcomes(outcomes({"single_emergence": 1.0, "icr_multi_abn": 0.5}), lambda t: ("accuracy",),
                                  SPEC.groups.subtypes, overall_weights=WEIGHTS, resamples=300))
    parts = {g: got[g].value for g in WEIGHTS}
    assert parts["subtypes:TEL/Single (E/R)"] == pytest.approx(0.5)  # single_resolution items are all wrong
    expected = sum(w * parts[g] for g, w in WEIGHTS.items()) / sum(WEIGHTS.values())
    paper = got[WEIGHTED_OVERALL]
    assert paper.value == pytest.approx(expected) and paper.value != pytest.approx(got["overall"].value)
    assert paper.ci_low < paper.value < paper.ci_high and paper.chance == pytest.approx(0.2)
    assert paper.n == sum(i.subtype in ("single_emergence", "single_resolution", "icr_multi_abn",
                                        "multi_entity_interval_summary") for i in make_items(60, 3))


def test_every_replicate_recomputes_each_group():
    """All right in the weighted groups: every replicate is 1, so the interval is [1, 1]."""
    right = {s: 1.0 for s in ("single_emergence", "single_resolution", "icr_multi_abn", "multi_entity_interval_summary")}
    paper = by_group(score_outcomes(outcomes(right), lambda t: ("accuracy",), SPEC.groups.subtypes,
                                    overall_weights=WEIGHTS, resamples=200))[WEIGHTED_OVERALL]
    assert (paper.value, paper.ci_low, paper.ci_high) == (1.0, 1.0, 1.0)


def test_no_weighted_overall_when_a_group_is_absent_or_no_weights():
    some = [o for o in outcomes({}) if o.item.task != "ICR"]
    assert WEIGHTED_OVERALL not in by_group(score_outcomes(some, lambda t: ("accuracy",), SPEC.groups.subtypes,
                                                           overall_weights=WEIGHTS, resamples=50))
    assert WEIGHTED_OVERALL not in by_group(score_outcomes(outcomes({}), lambda t: ("accuracy",),
                                                           SPEC.groups.subtypes, resamples=50))


def test_repeats_get_the_same_weighted_value():
    run = outcomes({"single_emergence": 1.0, "icr_multi_abn": 0.5})
    point = point_values(run, lambda t: ("accuracy",), SPEC.groups.subtypes, overall_weights=WEIGHTS)
    full = by_group(score_outcomes(run, lambda t: ("accuracy",), SPEC.groups.subtypes, overall_weights=WEIGHTS,
                                   resamples=50))
    assert point[(WEIGHTED_OVERALL, "accuracy")] == pytest.approx(full[WEIGHTED_OVERALL].value)
    assert np.isfinite(point[("overall", "accuracy")])
