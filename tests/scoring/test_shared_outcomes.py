"""Per-item statistics once per (run, metric), and run folders read once per report."""

from __future__ import annotations

from collections import Counter

import pytest
from helpers.scored_runs import make_items, prediction, write_run, wrong_letter

from medtemporal.scoring.aggregate import Outcome
from medtemporal.scoring.compare import compare_runs
from medtemporal.scoring.metrics import Metric
from medtemporal.scoring.repeats import point_values
from medtemporal.scoring.runs import load_outcomes, shared_outcomes

pytestmark = pytest.mark.filterwarnings("ignore::medtemporal.errors.UndefinedMetricWarning")


@pytest.fixture
def calls(monkeypatch):
    seen: Counter[str] = Counter()
    original = Metric.per_sample

    def counting(self, items, answers, outputs):
        seen[self.name] += 1
        return original(self, items, answers, outputs)

    monkeypatch.setattr(Metric, "per_sample", counting)
    return seen


def _runs(tmp_path):
    items = make_items(patients=12, per_patient=3)
    base = write_run(tmp_path, items, [prediction(i, f"The answer is {i.answer}.") for i in items], name="base")
    a = write_run(tmp_path, items, [prediction(i, f"({wrong_letter(i)})" if k % 3 else f"({i.answer})")
                                    for k, i in enumerate(items)], name="a")
    b = write_run(tmp_path, items, [prediction(i, f"({wrong_letter(i)})") for i in items], name="b")
    return base, a, b


def test_comparisons_in_a_report_share_each_runs_statistics(tmp_path, calls):
    base, a, b = _runs(tmp_path)
    alone = compare_runs(a, base)
    assert calls["accuracy"] == 2  # once per run, whatever the number of groups (overall + 3 tasks)
    calls.clear()
    with shared_outcomes():
        assert load_outcomes(base) is load_outcomes(base)
        shared = compare_runs(a, base)
        compare_runs(b, base)
        assert calls["accuracy"] == 3  # base's statistics are reused by the second comparison
    assert shared.rows == alone.rows and len(alone.rows) == 4
    assert load_outcomes(base) is not load_outcomes(base)  # outside the block every call reads the folder


def test_repeat_point_values_score_each_metric_once(tmp_path, calls):
    items = make_items(patients=6, per_patient=3)
    outcomes = [Outcome(i, i.answer if k % 2 else wrong_letter(i), "answered") for k, i in enumerate(items)]
    groups = {"TEL": {"Single (E/R)": ("single_emergence", "single_resolution")}}
    values = point_values(outcomes, lambda task: ("accuracy",), groups)
    assert calls["accuracy"] == 1
    assert values[("overall", "accuracy")] == pytest.approx(0.5)
    tel = [k for k, i in enumerate(items) if i.task == "TEL"]
    assert values[("task:TEL", "accuracy")] == pytest.approx(sum(k % 2 for k in tel) / len(tel))
