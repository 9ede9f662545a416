"""Which items a run answers: ``--limit`` and ``--limit-per-task`` as a seeded sample spread over tasks and
subtypes, the older first-N rule of folders that record none, and baselines that skip the open tasks they
cannot answer."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from helpers.eltlm import make_open_benchmark
from helpers.tiny import make_tiny_benchmark

from medtemporal.benchmark import FIRST, SPREAD, load, save
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.protocols.base import Solution, Solver
from medtemporal.registry import register
from medtemporal.runner import run
from medtemporal.schema import Item
from medtemporal.scoring import score_run
from medtemporal.scoring.outcomes import load_outcomes


@register("protocol", "test-echo-reference", description="answers from the item alone, no model call (tests only)")
class EchoReference(Solver):
    """Like TemMed's retrieval-top1: the output comes from the item, the model is never asked."""

    name = "test-echo-reference"
    asks_model = False

    async def solve(self, item, image_root, generate, config):
        return Solution(str(item.answer))


SUBTYPES = {"TEL": ("single_emergence", "single_resolution", "multiple"), "ICR": ("icr",), "GTS": ("gts_a", "gts_b")}


def _mixed_benchmark(root: Path, n: int = 36) -> Path:
    """The tiny benchmark's items (same images) relabelled into three tasks of unequal size with their own
    subtypes, in task order as builders write them: TEL is half the items, ICR a third, GTS a sixth."""
    bench = load(make_tiny_benchmark(root, n=n))
    items = []
    for k, item in enumerate(bench.items):
        task = "TEL" if k < n // 2 else "ICR" if k < n // 2 + n // 3 else "GTS"
        subtype = SUBTYPES[task][k % len(SUBTYPES[task])]
        items.append(Item.create(**{**item.model_dump(exclude={"id"}), "task": task, "subtype": subtype}))
    return save(bench.path, items, bench.manifest)


def _with_open_task(root: Path, n: int = 6) -> Path:
    """The tiny benchmark plus ``n`` open items of task ``report`` (a report to write; no answer space)."""
    bench = load(make_tiny_benchmark(root, n=n))
    reports = [Item.create(**{**item.model_dump(exclude={"id", "options"}), "task": "report", "subtype": "report",
                              "answer_type": "open", "answer": f"No change in finding {k}.",
                              "question": f"Describe the change of finding {k}."})
               for k, item in enumerate(bench.items)]
    return save(bench.path, [*bench.items, *reports], bench.manifest)


def _answered(folder: Path) -> list[str]:
    return [json.loads(line)["item_id"] for line in (folder / "predictions.jsonl").read_text().splitlines()]


def test_limit_is_a_seeded_sample_spread_over_tasks_and_subtypes(tmp_path):
    bench = load(_mixed_benchmark(tmp_path))
    chosen = bench.select(limit=9)
    assert Counter(i.task for i in chosen) == {"TEL": 3, "ICR": 3, "GTS": 3}  # not the first 9, all of TEL
    assert Counter(i.subtype for i in chosen if i.task == "TEL") == {s: 1 for s in SUBTYPES["TEL"]}
    assert chosen == bench.select(limit=9) and chosen == [i for i in bench.items if i in chosen]  # same, file order
    # a larger N keeps spreading: tasks take turns until the small ones run out
    assert Counter(i.task for i in bench.select(limit=20)) == {"TEL": 7, "ICR": 7, "GTS": 6}
    # a task's sample does not depend on which other tasks are chosen
    assert {i.id for i in bench.select(["ICR"], limit=3)} == {i.id for i in chosen if i.task == "ICR"}
    assert bench.select(limit=9, rule=FIRST) == bench.items[:9]
    assert bench.select(limit=100) == bench.items


def test_limit_per_task_takes_n_of_each_task_then_limit_applies(tmp_path):
    bench = load(_mixed_benchmark(tmp_path))
    per = bench.select(per_task=4)
    assert Counter(i.task for i in per) == {"TEL": 4, "ICR": 4, "GTS": 4}
    assert set(Counter(i.subtype for i in per if i.task == "GTS").values()) == {2}
    assert Counter(i.task for i in bench.select(limit=6, per_task=4)) == {"TEL": 2, "ICR": 2, "GTS": 2}
    with pytest.raises(InvalidInputError, match="--limit-per-task must be zero or more"):
        bench.select(per_task=-1)


def test_the_cli_records_the_rule_and_scoring_selects_the_same_items(tmp_path, capsys):
    bench = _mixed_benchmark(tmp_path)
    out = tmp_path / "run"
    assert main(["run", str(bench), "--model", "baseline:constant-A", "--out", str(out), "--limit", "6",
                 "--limit-per-task", "3", "--no-progress"]) == 0
    config = json.loads((out / "config.json").read_text())
    assert (config["limit"], config["limit_per_task"], config["limit_rule"]) == (6, 3, SPREAD)
    expected = load(bench).select(limit=6, per_task=3)
    assert sorted(_answered(out)) == sorted(i.id for i in expected)
    assert [i.id for i in load_outcomes(out).items] == [i.id for i in expected]
    scores = json.loads((out / "scores.json").read_text())
    overall = next(s for s in scores["scores"] if s["group"] == "overall")
    assert (overall["n"], overall["missing"]) == (6, 0)
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "spread evenly over tasks and subtypes" in help_text and "--limit-per-task" in help_text


def test_a_folder_limited_the_old_way_scores_and_resumes_its_first_n_items(tmp_path):
    bench = load(_mixed_benchmark(tmp_path))
    out = tmp_path / "old"
    run(bench.path, "baseline:constant-A", out, progress=False, score=False, no_cache=True)
    first = {i.id for i in bench.items[:5]}
    # a folder as older versions wrote it: "limit" recorded without a rule, the first 5 items answered
    config = json.loads((out / "config.json").read_text())
    config["limit"] = 5
    del config["limit_rule"]
    (out / "config.json").write_text(json.dumps(config))
    lines = [line for line in (out / "predictions.jsonl").read_text().splitlines()
             if json.loads(line)["item_id"] in first]
    (out / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    score_run(out)
    assert {i.id for i in load_outcomes(out).items} == first
    overall = next(s for s in json.loads((out / "scores.json").read_text())["scores"] if s["group"] == "overall")
    assert (overall["n"], overall["missing"]) == (5, 0)
    again = run(bench.path, "baseline:constant-A", out, limit=5, progress=False, no_cache=True)
    assert (again.skipped_existing, again.done) == (5, 0)  # resumed with its own rule: nothing new asked
    assert json.loads((out / "config.json").read_text())["limit_rule"] == FIRST


@pytest.mark.parametrize("model", ["baseline:random", "baseline:majority"])
def test_a_closed_answer_baseline_runs_the_closed_tasks_and_says_which_it_skipped(tmp_path, capsys, model):
    bench = _with_open_task(tmp_path)
    out = tmp_path / "run"
    assert main(["run", str(bench), "--model", model, "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    skipped = [line for line in printed.splitlines() if "Skipped" in line]
    assert len(skipped) == 1 and "open task report" in skipped[0] and "baseline:oracle" in skipped[0]
    assert json.loads((out / "config.json").read_text())["tasks"] == ["TEL"]
    assert {i.task for i in load_outcomes(out).items} == {"TEL"}
    scores = json.loads((out / "scores.json").read_text())
    assert all(s["missing"] == 0 for s in scores["scores"])
    assert "task:report" not in {s["group"] for s in scores["scores"]}
    assert "no_answer_space" not in (out / "predictions.jsonl").read_text()


def test_baselines_that_answer_open_questions_run_every_task(tmp_path):
    bench = _with_open_task(tmp_path)
    for model in ("baseline:constant-No change.", "baseline:oracle"):
        summary = run(bench, model, tmp_path / model.replace(":", "-"), progress=False, score=False)
        assert (summary.total, summary.done, summary.skipped) == (12, 12, None)


def test_an_open_task_named_for_a_closed_baseline_or_an_all_open_family_gets_one_sentence(tmp_path, capsys):
    bench = _with_open_task(tmp_path / "mixed")
    with pytest.raises(InvalidInputError, match="task report is open; leave it out of --tasks"):
        run(bench, "baseline:random", tmp_path / "r1", tasks=["TEL", "report"], progress=False)
    eltlm = make_open_benchmark(tmp_path / "eltlm")
    assert main(["run", str(eltlm), "--model", "baseline:random", "--out", str(tmp_path / "r2")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "every task of eltlm is open (perception, reasoning)" in err
    assert "baseline:constant-<text>" in err and "baseline:oracle" in err
    assert not (tmp_path / "r2").exists()


def test_a_protocol_that_asks_no_model_runs_open_tasks_for_any_backend(tmp_path):
    bench = _with_open_task(tmp_path)
    summary = run(bench, "baseline:random", tmp_path / "r", protocol="test-echo-reference", tasks=["report"],
                  progress=False, score=False)
    assert (summary.done, summary.skipped, summary.requests) == (6, None, 0)


def test_a_limit_of_zero_is_one_sentence_and_writes_nothing(tmp_path, capsys):
    """Issue 32 §6: ``--limit 0`` ran nothing and then said the run "has no predictions.jsonl"."""
    from helpers.tiny import make_tiny_benchmark

    bench = make_tiny_benchmark(tmp_path / "tiny", n=3)
    for flag in ("--limit", "--limit-per-task"):
        assert main(["run", str(bench), "--model", "baseline:random", "--out", str(tmp_path / "r"), flag, "0",
                     "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert f"{flag} 0 selects no items" in err and err.count("\n") == 1, err
        assert not (tmp_path / "r").exists()
