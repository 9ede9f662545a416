"""The summary across runs that `run` and `score` print: each run's headline against its chance, marked below."""

from __future__ import annotations

from pathlib import Path

from helpers.scored_runs import make_items, prediction, write_run, wrong_letter

from medtemporal.report import load_runs
from medtemporal.report.console import console_report
from medtemporal.scoring import score_run


def test_the_summary_has_chance_and_marks_a_run_below_it(tmp_path: Path) -> None:
    items = make_items()
    right = write_run(tmp_path, items, [prediction(i, f"Answer: {i.answer}") for i in items], name="right")
    wrong = write_run(tmp_path, items, [prediction(i, f"Answer: {wrong_letter(i)}") for i in items], name="wrong")
    for run in (right, wrong):
        score_run(run, resamples=50)
    text = console_report(load_runs([right, wrong]))
    summary = text[text.index("Summary ("):].splitlines()
    assert summary[2] == ("| Run | Benchmark | Protocol | Metric | Score [CI] | Chance | Items | Answered | Invalid | "
                          "Missing |")
    right_row, wrong_row = summary[4], summary[5]
    assert "| accuracy | 100.0 " in right_row and "| 20.0 |" in right_row
    assert "| accuracy | 0.0 " in wrong_row and "| 20.0 (below) |" in wrong_row
