"""The notebook API: ``mt.evaluate`` with a URI or a backend object, inside and outside a running loop."""

import asyncio
import json
import subprocess
import sys

import pandas as pd
from helpers.fake_openai import FakeOpenAI
from helpers.tiny import make_tiny_benchmark

import medtemporal as mt
from medtemporal.backends import load


def test_evaluate_a_uri_returns_scores_as_a_dataframe(tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=3)
    result = mt.evaluate(bench, "baseline:constant-A", out=tmp_path / "run")
    assert isinstance(result.scores, pd.DataFrame)
    overall = result.scores.set_index(["group", "metric"]).loc[("overall", "accuracy")]
    assert overall["value"] == 1 / 3 and overall["n"] == 3  # the tiny answers are A, B, C
    assert result.summary.done == 3 and len(result.predictions) == 3
    assert result.config.model.uri == "baseline:constant-A"
    assert "accuracy 0.333" in repr(result)
    again = mt.evaluate(mt.load_benchmark(bench), "baseline:constant-A", out=tmp_path / "run")  # resumes
    assert again.summary.skipped_existing == 3 and again.scores.equals(result.scores)


def test_evaluate_inside_a_running_event_loop_with_a_backend_object(tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=2)
    with FakeOpenAI.start() as server:
        backend = load(server.uri(), api_key_env=None)

        async def notebook_cell():
            # as in Jupyter: a loop is already running in this thread when the user calls evaluate
            first = mt.evaluate(bench, backend, out=tmp_path / "a", no_cache=True)
            second = await mt.aevaluate(bench, backend, out=tmp_path / "b", no_cache=True)
            return first, second

        first, second = asyncio.run(notebook_cell())
        assert first.summary.done == 2 and second.summary.done == 2
        assert server.stats()["answered"]  # both runs reached the server through the one backend
    assert first.scores[["metric", "group", "value"]].equals(second.scores[["metric", "group", "value"]])
    lines = [json.loads(x) for x in (tmp_path / "a" / "predictions.jsonl").read_text().splitlines()]
    assert all(p["model"] == backend.uri and p["raw_output"] for p in lines)


def test_importing_medtemporal_stays_cheap():
    code = ("import sys, medtemporal as mt; heavy = [m for m in ('pandas', 'numpy', 'medtemporal.runner', 'openai') "
            "if m in sys.modules]; print(heavy, callable(mt.evaluate))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] True"
