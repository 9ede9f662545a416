"""Issue 42 §4, 5, 7: the guard's last routes judge the data as it is, not the label written at build time: the
judge of a run made on another image root, a Hub export of a phantom whose images were replaced, and exports for
tools that send the items to any model."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from helpers.eltlm import ANSWER, make_open_benchmark_on_phantom
from helpers.tiny import make_tiny_benchmark
from PIL import Image

import medtemporal.scoring.runs as scoring_runs
from medtemporal.benchmark import load
from medtemporal.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::medtemporal.errors.UndefinedMetricWarning")


def _line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("medtemporal: error: ") and lines[0].endswith("."), err
    return lines[0]


def test_the_judge_guard_judges_the_runs_recorded_image_root_not_the_label(tmp_path, monkeypatch, capsys):
    bench, data = make_open_benchmark_on_phantom(tmp_path)
    copy = tmp_path / "real-images"  # the same files elsewhere: to the guard, data of unknown origin
    shutil.copytree(data, copy)
    run = tmp_path / "run"
    assert main(["run", str(bench), "--model", f"baseline:constant-{ANSWER}", "--out", str(run), "--image-root",
                 str(copy), "--no-progress", "--no-cache"]) == 0
    judged = []
    real = scoring_runs.run_licence
    monkeypatch.setattr(scoring_runs, "run_licence", lambda *a, **k: judged.append(a[1]) or real(*a, **k))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    scores = (run / "scores.json").read_bytes()
    capsys.readouterr()
    # 8.8.8.8 is only classified, never contacted: the guard refuses first
    assert main(["score", str(run), "--judge", "openai+https://8.8.8.8/v1:gpt-4o-mini", "--no-cache"]) == 2
    line = _line(capsys.readouterr().err)
    assert "Refusing to send benchmark 'eltlm'" in line and "--allow-remote-data" in line
    assert judged == [str(copy.resolve())]  # the run's own root, as recorded in config.json
    assert (run / "scores.json").read_bytes() == scores and not (run / "judgements.jsonl").exists()


def _replace_one_image(data):
    path = next(p for p in sorted(data.rglob("*.png")))
    Image.fromarray(np.full((16, 16), 7, dtype=np.uint8)).save(path)  # another picture, same name


def test_a_hub_export_reverifies_the_phantom_and_refuses_replaced_images(tmp_path, capsys):
    pytest.importorskip("datasets")
    bench = make_tiny_benchmark(tmp_path, n=3)
    assert main(["export", str(bench), "--format", "hf", "--out", str(tmp_path / "hub")]) == 0
    _replace_one_image(tmp_path / "data")
    capsys.readouterr()
    assert main(["export", str(bench), "--format", "hf", "--out", str(tmp_path / "hub2")]) == 2
    line = _line(capsys.readouterr().err)
    assert "no longer match the phantom" in line and str(tmp_path / "data") in line
    assert not (tmp_path / "hub2").exists() and not (tmp_path / "hub2.partial").exists()


@pytest.mark.parametrize("fmt, out", [("lmms-eval", "task"), ("vlmevalkit", "x.tsv")])
def test_exports_for_other_tools_of_credentialed_data_ask_for_the_remote_flag(tmp_path, capsys, fmt, out):
    credentialed = make_tiny_benchmark(tmp_path / "c", n=3, licence="credentialed")
    assert main(["export", str(credentialed), "--format", fmt, "--out", str(tmp_path / out)]) == 2
    line = _line(capsys.readouterr().err)
    assert "does not travel with" in line and "--allow-remote-data" in line and fmt in line
    assert not list(tmp_path.glob(f"{out.split('.')[0]}*"))  # nothing written
    assert main(["export", str(credentialed), "--format", fmt, "--out", str(tmp_path / out),
                 "--allow-remote-data"]) == 0
    phantom = make_tiny_benchmark(tmp_path / "p", n=3)  # a verified phantom needs no flag …
    assert main(["export", str(phantom), "--format", fmt, "--out", str(tmp_path / "p" / out)]) == 0
    _replace_one_image(tmp_path / "p" / "data")  # … until its images are replaced
    capsys.readouterr()
    assert main(["export", str(phantom), "--format", fmt, "--out", str(tmp_path / "p" / f"again-{out}")]) == 2
    assert "--allow-remote-data" in _line(capsys.readouterr().err)


def test_run_folders_record_the_image_root_the_guard_reads(tmp_path):
    bench, data = make_open_benchmark_on_phantom(tmp_path)
    run = tmp_path / "run"
    assert main(["run", str(bench), "--model", f"baseline:constant-{ANSWER}", "--out", str(run),
                 "--no-progress", "--no-cache"]) == 0
    assert json.loads((run / "config.json").read_text())["image_root"] is None
    assert load(bench).image_root == data.resolve()
