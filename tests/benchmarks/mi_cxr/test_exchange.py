"""Exchangeable distractors: given the option set, every option is equally likely the truth."""

from __future__ import annotations

import random
from collections import Counter

from medtemporal.benchmarks.mi_cxr.exchange import Sampler, draw, solve_weights
from medtemporal.benchmarks.mi_cxr.pipeline import abnormality_mix
from medtemporal.schema import Item


def test_truth_is_uniform_within_option_sets_even_for_skewed_truths() -> None:
    p = {"a": 15, "b": 10, "c": 10, "d": 5, "e": 5, "f": 5, "g": 5, "h": 5, "i": 5, "j": 5}  # a: 21% of truths
    w = solve_weights(p, 3)
    rng = random.Random(0)
    truths = rng.choices(list(p), list(p.values()), k=30000)
    picked_truth, shown = Counter(), Counter()
    for t in truths:
        options = [t, *draw(w, 3, rng, exclude=[t])]
        assert len(set(options)) == 4
        shown.update(options)
        picked_truth[t] += 1
    for value in p:  # how often a shown value is the truth: 1/4 for every value
        assert abs(picked_truth[value] / shown[value] - 0.25) < 0.02


def test_a_reused_sampler_draws_what_a_table_over_the_kept_keys_draws() -> None:
    rng = random.Random(3)
    w = {f"t{i:03d}": rng.random() for i in range(300)} | {"zero": 0.0}
    for k in (1, 3, 4):
        sampler = Sampler(w, k)
        for seed in range(40):
            exclude = rng.sample(sorted(w), rng.choice([0, 1, 2, 5]))
            kept = {t: v for t, v in w.items() if t not in exclude}
            got = sampler.draw(random.Random(seed), exclude)
            assert got == Sampler(kept, k).draw(random.Random(seed)) == draw(w, k, random.Random(seed), exclude)
            assert len(set(got)) == k and not set(got) & {*exclude, "zero"}


def test_abnormality_mix_reports_target_and_achieved_shares() -> None:
    items = [Item.create(benchmark="mi-cxr", task=t, subtype="s", images=(), question="q", answer_type="choice",
                         answer="A", options={"A": "x"}, meta={"abnormality": e})
             for t, e in [("TEL", "pleural effusion"), ("GTS", "pleural effusion"), ("ICR", "cardiomegaly"),
                          ("ICR-V", "cardiomegaly")]]
    mix = abnormality_mix(items, ["pleural effusion", "cardiomegaly"])
    assert mix["pleural effusion"]["achieved"] == round(2 / 3, 4) and mix["cardiomegaly"]["achieved"] == round(1 / 3, 4)
    assert mix["pleural effusion"]["target"] == round(1672 / (1672 + 922), 4)
