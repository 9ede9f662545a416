"""The weights that keep ICR and GTS-multi options from pointing at the answer (issue #9's audit leaks)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from medtemporal.benchmarks.mi_cxr.summaries import (
    Priors,
    _false_pool,
    consistent_trajectories,
    icr_entity_weights,
    inclusion,
    multi_other_weights,
)
from medtemporal.benchmarks.mi_cxr.windows import Track, Window

P, N = True, False
ENTITIES = ("pleural effusion", "pneumothorax", "cardiomegaly", "atelectasis", "lung opacity", "consolidation")


def _ratios(shown: Counter, true: Counter) -> list[float]:
    return [shown[e] / true[e] for e in true]


def test_multi_other_weights_show_each_abnormality_falsely_in_proportion_to_its_truths():
    """The focus follows Table 10 (pleural effusion common); others drawn uniformly over-show rare ones."""
    rng = random.Random(0)
    names = ENTITIES + ("edema", "air")
    focus_share = [20, 18, 14, 12, 10, 10, 8, 8]  # Table 10-like: one abnormality in five at most
    items = []
    for i in range(400):
        focus = rng.choices(names, focus_share)[0]
        pool = tuple(e for e in names if e != focus and rng.random() < 0.9)
        items.append((focus, i % 5 == 0, pool))
    true = Counter(f for f, null, _ in items if not null)

    def false_showings(w: dict[str, float]) -> Counter:
        out: Counter = Counter(f for f, null, _ in items if null)
        for _, _, pool in items:
            for e, pi in zip(pool, inclusion([w[e] for e in pool], 3)):
                out[e] += pi
        return out

    uniform = _ratios(false_showings({e: 1.0 for e in names}), true)
    assert max(uniform) / min(uniform) > 2  # the leak: rare abnormalities are mostly shown falsely
    fitted = _ratios(false_showings(multi_other_weights(items)), true)
    assert max(fitted) / min(fitted) < 1.15


def test_multi_false_weights_make_false_courses_look_like_true_ones():
    t = consistent_trajectories()
    true = {t[0]: 50, t[1]: 30, t[2]: 10, t[3]: 10}
    shown_false = {t[0]: 30.0, t[4]: 40.0, t[5]: 30.0}  # the truths that false options must avoid
    prior = Priors(trajectories=true, multi={"x": true}, shown_false={"x": shown_false})
    q = prior.multi_false_weights("x")
    truths = {s: v / sum(shown_false.values()) for s, v in shown_false.items()}
    shown = {s: sum(d * q[s] / (1 - q[u]) for u, d in truths.items() if u != s) for s in q}
    for s, n in true.items():  # P(course | shown falsely) proportional to P(course | true)
        assert shown[s] / shown[t[0]] == pytest.approx(n / true[t[0]], rel=0.05)


def _track(entity: str, present: tuple[bool, ...]) -> Track:
    changes = tuple("emergence" if not a and b else "resolution" if a and not b else "unchanged" if a else "absent"
                    for a, b in zip(present, present[1:]))
    return Track(entity, present, changes)


def test_icr_entity_weights_name_each_abnormality_falsely_in_proportion_to_its_truths():
    """A stable abnormality in every window is rarely true; unweighted, it took most false statements."""
    stable = _track("cardiomegaly", (P, P, P, P, P))
    moving = [_track("pleural effusion", (N, P, P, P, P)), _track("pneumothorax", (P, P, N, N, N))]
    window = Window("p1", 0, (), (stable, *moving))
    prior = Priors(claims={"emergence": 5, "resolution": 5})
    pools = [(*_false_pool(window, i, prior), None) for _ in range(40) for i in range(3)]
    true = Counter({"pleural effusion": 20, "pneumothorax": 20, "cardiomegaly": 2})

    def named(f: dict[str, float]) -> Counter:
        out: Counter = Counter()
        for pool, weights, _ in pools:
            scaled = [w * f.get(t.entity, 1.0) for (t, _), w in zip(pool, weights)]
            for (t, _), w in zip(pool, scaled):
                out[t.entity] += w / sum(scaled)
        return out

    assert named({})["cardiomegaly"] / true["cardiomegaly"] > 3 * named({})["pneumothorax"] / true["pneumothorax"]
    fitted = _ratios(named(icr_entity_weights(pools, true)), true)
    assert max(fitted) / min(fitted) < 1.15
