"""Task 4 as the released code scores it: text metrics against the release's gold string, labelled beside the
paper's accuracy (``evaluate_result.py`` lines 131-142 send task1-task4 to the open-task evaluator)."""

import json

from rouge_score import rouge_scorer

from medtemporal.cli import main


def test_task4_text_metrics_are_scored_against_letter_and_answer(tmp_path):
    data, bench, run = tmp_path / "data", tmp_path / "bench", tmp_path / "run"
    assert main(["phantoms", "ct-rate", "--patients", "6", "--seed", "1", "--shape", "32,32,16", "--out", str(data)]) == 0
    assert main(["build", "3d-rad", "--ct-rate", str(data), "--out", str(bench)]) == 0
    assert main(["run", str(bench), "--model", "baseline:constant-B", "--tasks", "task4", "--out", str(run),
                 "--no-progress"]) == 0
    items = [json.loads(line) for line in (bench / "items.jsonl").read_text().splitlines()]
    gold = [f"{i['answer']}. {i['options'][i['answer']]}" for i in items if i["task"] == "task4"]
    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)
    expected = sum(scorer.score(g, "B")["rouge1"].fmeasure for g in gold) / len(gold)
    scores = json.loads((run / "scores.json").read_text())
    variant = {(s["group"], s["metric"]): s["value"] for s in scores["variants"]["task 4 as the release computes it"]["scores"]}
    assert abs(variant[("task:task4", "rad3d_rouge_1")] - expected) < 1e-12 and 0 < expected < 1
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    tables = (tmp_path / "report" / "3d-rad_tables.md").read_text()
    assert "Task 4 as the released code computes it (not the paper's accuracy)" in tables
