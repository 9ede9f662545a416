"""Per-item statistics once per (run, metric), and run folders (and their benchmark) read once per report."""

from __future__ import annotations

from collections import Counter

import pytest
from helpers.scored_runs import make_items, prediction, write_run, wrong_letter

from medtemporal.scoring.runs import score_stale
from medtemporal.report import write_report
from medtemporal.report.loaded import load_runs
from medtemporal.runs import RunFolder
from medtemporal.scoring.aggregate import Outcome
from medtemporal.scoring.compare import compare_runs
from medtemporal.scoring.metrics import Metric
from medtemporal.scoring.repeats import point_values

pytestmark = pytest.mark.filterwarnings("ignore::medtemporal.errors.UndefinedMetricWarning")


@pytest.fixture
def calls(monkeypatch):
    seen: Counter[str] = Counter()
    original = Metric.per_sample

    def counting(self, *args):
        seen[self.name] += 1
        return original(self, *args)

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
    score_stale([base, a, b])  # as `medtemporal report` does before the report reads them
    runs = load_runs([base, a, b])
    calls.clear()
    first, second, third = runs
    assert first.outcomes is first.outcomes and first.benchmark is second.benchmark is third.benchmark
    shared = compare_runs(second.outcomes, first.outcomes)
    compare_runs(third.outcomes, first.outcomes)
    assert calls["accuracy"] == 3  # base's statistics are reused by the second comparison
    assert shared.rows == alone.rows and len(alone.rows) == 4


def test_a_report_reads_each_run_folder_and_its_benchmark_once(tmp_path, monkeypatch):
    runs = _runs(tmp_path)
    score_stale(runs)  # scored first: the report below only reads
    reads: Counter[str] = Counter()
    original = RunFolder.latest_predictions

    def counting(self):
        reads[self.path.name] += 1
        return original(self)

    monkeypatch.setattr(RunFolder, "latest_predictions", counting)
    import medtemporal.runs as runs_module

    loads: Counter[str] = Counter()
    original_load = runs_module.load
    monkeypatch.setattr(runs_module, "load", lambda path: loads.update([str(path)]) or original_load(path))
    write_report(runs, tmp_path / "report", formats=("md", "html"))  # paired section, viewer: every run's outcomes
    assert reads == {"base": 1, "a": 1, "b": 1} and list(loads.values()) == [1]


def test_repeat_point_values_score_each_metric_once(tmp_path, calls):
    items = make_items(patients=6, per_patient=3)
    outcomes = [Outcome(i, i.answer if k % 2 else wrong_letter(i), "answered") for k, i in enumerate(items)]
    groups = {"TEL": {"Single (E/R)": ("single_emergence", "single_resolution")}}
    values = point_values(outcomes, lambda task: ("accuracy",), groups)
    assert calls["accuracy"] == 1
    assert values[("overall", "accuracy")] == pytest.approx(0.5)
    tel = [k for k, i in enumerate(items) if i.task == "TEL"]
    assert values[("task:TEL", "accuracy")] == pytest.approx(sum(k % 2 for k in tel) / len(tel))
