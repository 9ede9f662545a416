"""Paper defaults are applied in one place: the CLI and the notebook API run every family identically.

Each registered family's benchmark is built from phantoms with the family's own demo commands (small cohorts,
`helpers.families`); the same model then runs through ``medtemporal run`` and through ``mt.evaluate`` with no option naming the
protocol or the generation settings. Both must record the same settings and give the same predictions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import medtemporal as mt
from helpers.fake_openai import TEST_API_KEY as KEY
from helpers.fake_openai import FakeOpenAI
from helpers.families import FAMILIES, family_benches  # noqa: F401  (session fixture)
from medtemporal.contract import spec
from medtemporal.cli import main

SETTINGS = ("protocol", "generation", "tasks", "limit", "repeats")


@pytest.fixture
def built(family_benches):
    """Family → its small phantom benchmark (built once per session)."""
    return family_benches


def _predictions(run: Path) -> dict[str, tuple]:
    lines = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    return {p["item_id"]: (p["raw_output"], p["answer"], p["extraction"], p["request_hash"], p["prompt"]) for p in lines}


@pytest.mark.parametrize("family", FAMILIES)
def test_cli_and_api_run_a_benchmark_the_same_way(family, built, tmp_path, monkeypatch):
    monkeypatch.setenv("MEDTEMPORAL_VOLUME_CACHE", str(tmp_path / "volumes"))
    bench = built[family]
    model = "baseline:constant-A"  # answers every request, open ones included
    cli, api = tmp_path / "cli", tmp_path / "api"
    assert main(["run", str(bench), "--model", model, "--limit", "12", "--no-cache", "--no-progress",
                 "--no-score", "--out", str(cli)]) == 0
    result = mt.evaluate(bench, model, limit=12, no_cache=True, score=False, out=api)
    a = json.loads((cli / "config.json").read_text())
    b = json.loads((api / "config.json").read_text())
    assert {k: a[k] for k in SETTINGS} == {k: b[k] for k in SETTINGS}
    assert a["protocol"]["name"] == spec(family).defaults.protocol
    paper = dict(spec(family).defaults.generation)
    assert {k: a["generation"][k] for k in paper} == paper
    assert _predictions(cli) == _predictions(api) and result.summary.done == 12


def test_evaluate_records_protocol_ct_on_3d_rad(built, tmp_path, monkeypatch):
    monkeypatch.setenv("MEDTEMPORAL_VOLUME_CACHE", str(tmp_path / "volumes"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeOpenAI.start() as server:  # a model that reads images: it is sent the volumes' slices
        result = mt.evaluate(built["3d-rad"], server.uri("ct-vlm"), limit=3, no_cache=True, score=False,
                             out=tmp_path / "r")
    assert result.config.protocol.name == "ct"
    prompt = json.loads((tmp_path / "r" / "predictions.jsonl").read_text().splitlines()[0])["prompt"]
    images = [part["image"] for message in prompt for part in message["parts"] if "image" in part]
    assert images and not any(image.endswith(".nii.gz") for image in images)  # slices, never the volume file


def test_a_cold_3d_rad_run_with_open_tasks_first_and_concurrency_has_no_traceback(built, tmp_path):
    """Regression: the lazy pandas import raced between threads on a fresh run (Python < 3.12.3)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "MEDTEMPORAL_VOLUME_CACHE": str(tmp_path / "cold"), "MEDTEMPORAL_CACHE": str(tmp_path / "c")}
    done = subprocess.run(
        [sys.executable, "-m", "medtemporal", "run", str(built["3d-rad"]), "--model", "baseline:constant-A",
         "--tasks", "task1,task2,task3", "--concurrency", "8", "--no-progress", "--no-score", "--out",
         str(tmp_path / "r")], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
