"""Several models in one command: an eval set (or repeated --model) runs each model on each benchmark."""

from __future__ import annotations

from helpers.eltlm import make_open_benchmark

from medtemporal.cli import main
from medtemporal.runner.evalset import model_folder
from medtemporal.runs import RunFolder

MODELS = ("baseline:constant-Stable.", "baseline:constant-Worse.", "baseline:constant-New opacity.")


def _benchmarks(tmp_path):
    return [make_open_benchmark(tmp_path / name, n=4, patients=2) for name in ("a", "b", "c")]


def test_three_models_on_three_benchmarks_write_nine_runs_one_summary_and_resume(tmp_path, capsys):
    _benchmarks(tmp_path)
    evalset = tmp_path / "set.yaml"
    evalset.write_text("model:\n" + "".join(f"  - '{m}'\n" for m in MODELS) + "out: runs\nbenchmarks:\n"
                       "  - a/bench\n  - path: b/bench\n    out: b\n  - path: c/bench\n    out: c\n")
    assert main(["run", str(evalset), "--no-progress", "--no-cache"]) == 0
    out = capsys.readouterr().out
    folders = sorted(p.parent for p in (tmp_path / "runs").glob("*/*/scores.json"))
    assert [f"{f.parent.name}/{f.name}" for f in folders] == sorted(
        f"{model_folder(m)}/{b}" for m in MODELS for b in ("bench", "b", "c"))
    for folder in folders:  # each run is its model's
        config = RunFolder(folder).read_config()
        assert model_folder(config.model.uri) == folder.parent.name and config.model_entry is None
    summary = out[out.index("Summary"):]
    assert out.count("Summary") == 1 and all(summary.count(f"| {m} |") == 3 for m in MODELS)
    assert main(["run", str(evalset), "--no-progress", "--no-cache"]) == 0  # run again: nothing left to do
    assert capsys.readouterr().out.count("already done (finished and scored), skipped.") == 9


def test_a_model_that_fails_to_load_is_reported_and_the_others_go_on(tmp_path, capsys):
    first, second, _ = _benchmarks(tmp_path)
    missing = tmp_path / "no-such-model"
    args = ["run", str(first), str(second), "--model", f"hf:{missing}", "--model", MODELS[0], "--out",
            str(tmp_path / "runs"), "--no-progress", "--no-cache"]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert len(list((tmp_path / "runs" / model_folder(MODELS[0])).glob("*/scores.json"))) == 2
    errors = [line for line in captured.err.splitlines() if line.startswith("medtemporal: error:")]
    assert len(errors) == 1 and f"hf:{missing}" in errors[0] and "(its 1 other benchmark skipped)" in errors[0]
    assert "Traceback" not in captured.err and "Summary" in captured.out
    assert main(["run", str(first), "--model", MODELS[0], "--model", "baseline:random", "--name", "x", "--out",
                 str(tmp_path / "r")]) == 2
    assert "--name names the runs of one model" in capsys.readouterr().err


def test_one_benchmark_folder_and_several_models_nest_under_the_model(tmp_path, capsys):
    first, *_ = _benchmarks(tmp_path)
    assert main(["run", str(first), "--model", MODELS[0], "--model", MODELS[1], "--out", str(tmp_path / "runs"),
                 "--no-progress", "--no-cache"]) == 0
    assert {p.parent.parent.name for p in (tmp_path / "runs").glob("*/bench/scores.json")} == {
        model_folder(m) for m in MODELS[:2]}
