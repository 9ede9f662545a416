"""At the researcher's desk: what `run` and `score` print, and failures that end the command instead of passing.

Every headline metric of every task, in %, with intervals (judge metrics too); an unavailable metric named once
with its reason; a prose judge, a model that fails every item and a run with nothing to score each end with a
non-zero exit and one sentence (the API raises); numeric warnings of degenerate bootstraps never reach the user.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from helpers.eltlm import make_open_benchmark, make_open_run
from helpers.fake_openai import FakeOpenAI
from helpers.scored_runs import make_items, prediction, write_run

import medtemporal as mt
from medtemporal.cli import main
from medtemporal.report import load_runs
from medtemporal.report.console import console_report, run_table
from medtemporal.runs import RunFolder
from medtemporal.scoring.ci import cluster_bootstrap
from medtemporal.scoring.judge import reduce_judged

PROSE = "The answer looks broadly reasonable to me, though some details could be clearer."


def test_score_prints_every_task_metric_in_percent_with_judge_metrics(tmp_path, capsys):
    bench = make_open_benchmark(tmp_path)
    run = make_open_run(bench, tmp_path / "run")
    assert main(["score", str(run), "--judge", "scripted-judge:overlap", "--resamples", "50", "--no-cache"]) == 0
    out = capsys.readouterr().out
    for task in ("perception", "reasoning", "Overall"):
        for metric in ("rouge_l_f1", "judge_accuracy", "judge_completeness", "judge_unparseable_rate"):
            assert f"| {task} | {metric} | " in out, (task, metric)
    rouge = RunFolder(run).scores().score("overall", "rouge_l_f1")
    assert f"| Overall | rouge_l_f1 | {100 * rouge.value:.1f} [" in out  # ROUGE-L in % like the judge metrics
    assert "Judge scripted-judge:overlap: 12 verdicts read, 0 unparseable" in out


def test_a_prose_judge_ends_score_with_one_sentence_and_exit_1(tmp_path, capsys):
    bench = make_open_benchmark(tmp_path)
    run = make_open_run(bench, tmp_path / "run")
    with FakeOpenAI.start(replies=[["", PROSE]]) as judge:
        code = main(["score", str(run), "--judge", judge.uri("judge"), "--resamples", "20", "--no-cache"])
    captured = capsys.readouterr()
    assert code == 1
    errors = [line for line in captured.err.splitlines() if line.startswith("medtemporal: error:")]
    assert len(errors) == 1 and "answered in a form the rubric's parser cannot read for 12 of 12 answers" in errors[0]
    assert PROSE[:40] in errors[0] and "RuntimeWarning" not in captured.err and "DegenerateData" not in captured.err
    assert RunFolder(run).scores().judge["counts"]["unparseable"] == 12  # the scores are still written


def test_a_model_that_fails_every_item_raises_in_the_api_and_exits_1_in_the_cli(tmp_path, capsys):
    bench = make_open_benchmark(tmp_path, n=6, patients=3)
    faults = [{"kind": "400", "match": "", "times": 1000}]
    with FakeOpenAI.start(faults=faults) as server:
        with pytest.raises(mt.RunFailedError, match=r"^(All 6 items failed|The run stopped early).*HTTP 400") as raised:
            mt.evaluate(bench, server.uri(), out=tmp_path / "api", progress=False, no_cache=True)
        assert raised.value.run_dir == tmp_path / "api"
        code = main(["run", str(bench), "--model", server.uri(), "--out", str(tmp_path / "cli"), "--no-progress",
                     "--no-cache"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("medtemporal: error:") == 1 and "HTTP 400" in err


def test_score_of_a_run_without_any_answer_exits_1(tmp_path, capsys):
    items = make_items(patients=4, per_patient=2)
    run = write_run(tmp_path, items, [prediction(i, None) for i in items])
    assert main(["score", str(run), "--resamples", "20"]) == 1
    err = capsys.readouterr().err
    assert f"Every one of the {len(items)} items of {run} failed" in err and "nothing to score" in err


def test_degenerate_bootstraps_warn_nothing_numeric():
    clusters = [f"p{i % 4}" for i in range(8)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        from scipy.stats import DegenerateDataWarning
        warnings.simplefilter("error", DegenerateDataWarning)
        warnings.simplefilter("ignore", UserWarning)  # our own notes are summarised by the command
        nothing = cluster_bootstrap(np.zeros((8, 2)), clusters, reduce_judged, rng=0)  # no verdict read
        assert np.isnan(nothing.value) and nothing.low is None

        def ratio(sums, counts):  # a weighted part that some resamples draw no patient of
            return sums[..., 0] / sums[..., 1]

        values = np.array([[1.0, 1.0]] + [[0.0, 0.0]] * 7)
        some = cluster_bootstrap(values, clusters, ratio, rng=0, resamples=200)
        assert some.value == 1.0 and some.low == 1.0 and some.high == 1.0  # NaN replicates left out


def test_the_unavailable_reason_is_told_once_under_the_table(tmp_path):
    items = make_items(patients=3, per_patient=2)
    run = write_run(tmp_path, items, [prediction(i, i.answer) for i in items])
    assert main(["score", str(run), "--resamples", "20"]) == 0
    scores = RunFolder(run).scores()
    reason = "The encoder is not here; set X=/path."
    broken = [s.model_copy(update={"unavailable": reason, "value": float("nan")}) if s.group == "overall" else s
              for s in scores.scores]
    (run / "scores.json").write_text(json.dumps(scores.model_copy(update={"scores": broken}).model_dump()))
    text = run_table(load_runs([run])[0])
    assert text.count(reason.rstrip(".")) == 1 and "Not computed: accuracy: The encoder is not here" in text
    assert "| Overall | accuracy |" not in text and "| TEL | accuracy |" in text


def test_several_runs_end_with_one_summary_table(tmp_path):
    items = make_items(patients=3, per_patient=2)
    a = write_run(tmp_path, items, [prediction(i, i.answer) for i in items], name="a")
    b = write_run(tmp_path, items, [prediction(i, None) for i in items], name="b")
    for run in (a, b):
        main(["score", str(run), "--resamples", "20"])
    text = console_report(load_runs([a, b]))
    summary = text[text.index("Summary"):]
    assert summary.count("\n| ") == 4  # header, rule, two runs
    assert "| 100.0 [100.0, 100.0] |" in summary and "| 0.0 [0.0, 0.0] |" in summary


def test_run_name_labels_the_run_and_survives_a_resume_without_it(tmp_path, capsys):
    bench = make_open_benchmark(tmp_path, n=6, patients=3)
    out = tmp_path / "run"
    args = ["run", str(bench), "--model", "baseline:constant-Stable.", "--out", str(out), "--no-progress", "--no-cache"]
    assert main([*args, "--name", "Stable baseline", "--limit", "3"]) == 0
    assert "Stable baseline on eltlm" in capsys.readouterr().out
    assert main(args) == 0  # resumed (all six now) without --name: the name stays
    assert "Stable baseline on eltlm" in capsys.readouterr().out
    assert RunFolder(out).scores().run.name == "Stable baseline"
    assert load_runs([out])[0].label == "Stable baseline"


def test_default_name_is_the_models_short_name(tmp_path):
    bench = make_open_benchmark(tmp_path, n=4, patients=2)
    with FakeOpenAI.start() as server:
        mt.evaluate(bench, server.uri("Qwen/Qwen2.5-VL-7B-Instruct"), out=tmp_path / "r", progress=False,
                    no_cache=True)
    assert RunFolder(tmp_path / "r").scores().run.name == "Qwen2.5-VL-7B-Instruct"
    assert Path(tmp_path / "r" / "config.json").read_text().count('"name": "Qwen2.5-VL-7B-Instruct"') == 1


def test_several_benchmarks_run_one_folder_each_and_a_set_run_again_skips_what_is_done(tmp_path, capsys):
    first, second = make_open_benchmark(tmp_path / "a", n=6, patients=3), make_open_benchmark(tmp_path / "b", n=4)
    out = tmp_path / "runs"
    args = ["run", str(first), str(second), "--model", "baseline:constant-Stable.", "--out", str(out),
            "--no-progress", "--no-cache"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert (out / "bench" / "scores.json").is_file() and (out / "bench-2" / "scores.json").is_file()
    summary = text[text.index("Summary"):]
    assert summary.count("| baseline:constant-Stable. | eltlm | direct | rouge_l_f1 |") == 2
    assert main(args) == 0
    assert capsys.readouterr().out.count("already done (finished and scored), skipped.") == 2
    # other settings are another run: not skipped (resumed with more repeats, or refused as changed)
    main([*args, "--repeats", "2"])
    assert "skipped." not in capsys.readouterr().out
    assert RunFolder(out / "bench").read_config().repeats == 2
    main([*args, "--repeats", "2", "--temperature", "0.7"])
    assert "skipped." not in capsys.readouterr().out


def test_an_eval_set_file_names_model_folders_and_options(tmp_path, capsys):
    make_open_benchmark(tmp_path / "a", n=6, patients=3)
    make_open_benchmark(tmp_path / "b", n=4)
    evalset = tmp_path / "set.yaml"
    evalset.write_text("model: baseline:constant-Stable.\nname: stable\nout: runs\nbenchmarks:\n"
                       "  - a/bench\n  - path: b/bench\n    limit: 2\n    out: small\n")
    assert main(["run", str(evalset), "--no-progress", "--no-cache"]) == 0
    assert RunFolder(tmp_path / "runs" / "bench").scores().run.name == "stable"
    assert RunFolder(tmp_path / "runs" / "small").scores().counts["items"] == 2
    capsys.readouterr()
    assert main(["run", str(evalset), "--no-progress", "--no-cache"]) == 0
    assert capsys.readouterr().out.count("skipped.") == 2
    evalset.write_text("model: baseline:random\nout: late\nbenchmarks:\n  - a/bench\n  - b/bnch\n")
    assert main(["run", str(evalset), "--no-progress", "--no-cache"]) == 2  # the typo found before any run
    assert "b/bnch is not a benchmark folder (named in" in capsys.readouterr().err
    assert not (tmp_path / "late").exists()
    evalset.write_text("benchmarks:\n  - path: a/bench\n    temperature: 3\n")
    with pytest.raises(Exception, match=r"set.yaml: .*temperature.*it needs `benchmarks:`"):
        from medtemporal.runner.evalset import read_eval_set
        read_eval_set(evalset)


def test_track_mlflow_logs_config_scores_and_report_to_a_local_store(tmp_path, monkeypatch, capsys):
    """Out of the box (issue 42 item 17): no MLFLOW_TRACKING_URI, MLflow's default local database in the current
    folder, with what the tracking extra installs (mlflow-skinny, SQLAlchemy, Alembic)."""
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    bench = make_open_benchmark(tmp_path, n=4, patients=2)
    out = tmp_path / "run"
    assert main(["run", str(bench), "--model", "baseline:constant-Stable.", "--out", str(out), "--name", "stable",
                 "--no-progress", "--no-cache", "--track", "mlflow", "--track-experiment", "desk"]) == 0
    run_id = capsys.readouterr().out.split("logged to mlflow (experiment desk, run ")[1].split(")")[0]
    client = mlflow.MlflowClient()
    logged = client.get_run(run_id)
    assert logged.info.run_name == "stable" and logged.data.params["model.uri"] == "baseline:constant-Stable."
    assert logged.data.params["benchmark.name"] == "eltlm" and logged.data.params["protocol.name"] == "direct"
    rouge = RunFolder(out).scores().score("overall", "rouge_l_f1")
    assert logged.data.metrics["overall/rouge_l_f1"] == pytest.approx(rouge.value)
    assert logged.data.metrics["overall/rouge_l_f1_ci_high"] == pytest.approx(rouge.ci_high)
    top = {a.path for a in client.list_artifacts(run_id)}
    assert {"config.json", "scores.json", "report"} <= top
    assert {"report/report.html", "report/report.md", "report/report.csv"} <= {
        a.path for a in client.list_artifacts(run_id, "report")}
    assert Path("mlflow.db").is_file() or Path("mlruns").is_dir()  # MLflow 3's database, MLflow 2's file store
    capsys.readouterr()
    assert main(["run", str(bench), "--model", "baseline:random", "--out", str(tmp_path / "unscored"),
                 "--no-score", "--track", "mlflow"]) == 2  # nothing scored, nothing to log: said before the run
    assert "--track logs scored runs" in capsys.readouterr().err and not (tmp_path / "unscored").exists()


def test_track_mlflow_to_a_file_store_mlflow_refuses_says_what_to_set(tmp_path, monkeypatch, capsys):
    mlflow = pytest.importorskip("mlflow")
    if int(mlflow.__version__.split(".")[0]) < 3:
        pytest.skip("MLflow 2 still writes file stores")
    run = make_open_run(make_open_benchmark(tmp_path, n=3, patients=2), tmp_path / "run")
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "mlruns").as_uri())
    assert main(["score", str(run), "--track", "mlflow", "--no-progress"]) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("medtemporal: error:")]
    assert "Traceback" not in err and len(errors) == 1, err
    assert "MLFLOW_TRACKING_URI=sqlite:///" in err and "MLFLOW_ALLOW_FILE_STORE=true" in err, err
    assert RunFolder(tmp_path / "run").scores().scores  # the scores were written before the tracker refused
