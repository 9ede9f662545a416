import json

from helpers.tiny import make_tiny_benchmark

from medtemporal.cli import main
from medtemporal.runs import WriterLock as RunLock


def test_run_command_runs_resumes_and_reports(tmp_path, capsys):
    bench = make_tiny_benchmark(tmp_path, n=4)
    out = tmp_path / "runs" / "r1"
    assert main(["run", str(bench), "--model", "baseline:random", "--out", str(out), "--limit", "3"]) == 0
    text = capsys.readouterr().out
    assert "3 answered, 0 already done, 0 failed" in text and "scores.json" in text
    assert main(["run", str(bench), "--model", "baseline:random", "--out", str(out)]) == 0
    assert "1 answered, 3 already done" in capsys.readouterr().out


def test_run_command_passes_generation_prompt_and_backend_options(tmp_path, capsys):
    bench = make_tiny_benchmark(tmp_path, n=2)
    prompt = tmp_path / "mine.txt"
    prompt.write_text("$n_images images.\n$question\n$options\nOne letter.")
    args = ["run", str(bench), "--model", "baseline:random", "--out", str(tmp_path / "r"), "--temperature", "0.5",
            "--max-tokens", "32", "--seed", "9", "--system-prompt", "Be brief.", "--prompt", f"mcq_direct={prompt}",
            "--option", "seed=4", "--no-score"]
    assert main(args) == 0
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    assert config["generation"] == {"temperature": 0.5, "max_tokens": 32, "seed": 9, "top_p": None,
                                    "system_prompt": "Be brief."}
    assert config["model"]["identity"]["seed"] == 4
    from medtemporal.prompts import PromptSet

    assert config["protocol"]["templates"]["mcq_direct"] == PromptSet({"mcq_direct": prompt}).hash("mcq_direct")
    assert not (tmp_path / "r" / "scores.json").exists()


def test_user_errors_are_one_line_and_exit_2(tmp_path, capsys):
    bench = make_tiny_benchmark(tmp_path, n=1)
    assert main(["run", str(bench), "--model", "baseline:random", "--out", str(tmp_path / "r"), "--option", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--option 'x' is not KEY=VALUE" in err
    assert main(["run", str(tmp_path / "nope"), "--model", "baseline:random", "--out", str(tmp_path / "r")]) == 2
    assert "is not a benchmark folder" in capsys.readouterr().err


def test_max_errors_exits_non_zero(fake, tmp_path, capsys):
    bench = make_tiny_benchmark(tmp_path, n=4)
    fake.configure(faults=[{"kind": "400", "times": 100}])
    code = main(["run", str(bench), "--model", fake.uri(), "--out", str(tmp_path / "r"), "--max-errors", "0",
                 "--concurrency", "1"])
    assert code == 1 and "Stopped early" in capsys.readouterr().out


def test_runs_list_shows_progress_status_and_headline_scores(fake, tmp_path, capsys):
    bench = make_tiny_benchmark(tmp_path, n=4)
    runs = tmp_path / "runs"
    main(["run", str(bench), "--model", "baseline:constant-A", "--out", str(runs / "const")])
    main(["run", str(bench), "--model", "baseline:random", "--out", str(runs / "nested" / "unscored"), "--no-score"])
    fake.configure(faults=[{"kind": "400", "times": 100}])
    main(["run", str(bench), "--model", fake.uri(), "--out", str(runs / "broken"), "--max-errors", "0",
          "--concurrency", "1"])
    lock = RunLock(runs / "nested" / "unscored")  # as if another process were writing it
    capsys.readouterr()
    try:
        assert main(["runs", "list", str(runs)]) == 0
    finally:
        lock.close()
    rows = {line.split(" | ")[0].strip("| "): line for line in capsys.readouterr().out.splitlines()[2:]}
    assert set(rows) == {str(runs / "broken"), str(runs / "const"), str(runs / "nested" / "unscored")}
    const = rows[str(runs / "const")]
    assert "baseline:constant-A" in const and "| 4/4 |" in const and "finished" in const
    assert "accuracy 25.0" in const and "TEL 25.0" in const  # one of four answers is A
    unscored = rows[str(runs / "nested" / "unscored")]
    assert "running" in unscored and "not scored" in unscored
    assert "| 0/4 | 1 | unfinished |" in rows[str(runs / "broken")]


def test_runs_list_shows_damaged_runs_without_hiding_the_others(tmp_path, capsys):
    bench = make_tiny_benchmark(tmp_path, n=2)
    runs = tmp_path / "runs"
    for name in ("bad-scores", "bad-config", "good"):
        assert main(["run", str(bench), "--model", "baseline:constant-A", "--out", str(runs / name)]) == 0
    (runs / "bad-scores" / "scores.json").write_text("{")
    (runs / "bad-config" / "config.json").write_text("[]")
    capsys.readouterr()
    assert main(["runs", "list", str(runs)]) == 0
    rows = {line.split(" | ")[0].strip("| "): line for line in capsys.readouterr().out.splitlines()[2:]}
    assert "unreadable scores.json" in rows[str(runs / "bad-scores")]
    assert "unreadable config.json" in rows[str(runs / "bad-config")] and "| 2 |" in rows[str(runs / "bad-config")]
    assert "finished" in rows[str(runs / "good")] and "accuracy 50.0" in rows[str(runs / "good")]


def test_runs_list_of_an_empty_or_missing_folder(tmp_path, capsys):
    assert main(["runs", "list", str(tmp_path)]) == 0
    assert "No runs under" in capsys.readouterr().out
    assert main(["runs", "list", str(tmp_path / "nope")]) == 2
