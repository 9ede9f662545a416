"""Protocol ``ct`` with ``mode=volume``: volumes reach a model that declares 3-D input, and no other."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers.fake_openai import TEST_API_KEY, FakeOpenAI
from helpers.tiny_volume_lm import build_tiny_volume_lm

from medtemporal.benchmark import load as load_benchmark
from medtemporal.benchmark import save
from medtemporal.benchmarks.rad3d.volumes import prepare
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.runner import run

OPTIONS = {"mode": "volume", "slices": 6, "size": 16}


@pytest.fixture
def volume_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("MEDTEMPORAL_VOLUME_CACHE", str(tmp_path / "volumes"))
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(tmp_path / "responses.sqlite"))
    return tmp_path / "volumes"


def test_each_item_volume_reaches_a_volume_model(rad3d_bench, volume_cache, tmp_path):
    pytest.importorskip("torch")
    model = build_tiny_volume_lm(tmp_path / "model")
    full = load_benchmark(rad3d_bench)
    firsts = {}  # one Task 4 and one Task 6 item per volume, three volumes
    for item in full.items:
        if item.task in ("task4", "task6") and (item.images[0].path, item.task) not in firsts:
            firsts[item.images[0].path, item.task] = item
    picked = [i for i in firsts.values() if i.images[0].path in {k[0] for k in list(firsts)[:3]}][:6]
    small = save(tmp_path / "bench", picked, full.manifest)
    summary = run(small, f"hf:{model}", tmp_path / "run", protocol="ct", protocol_options=OPTIONS,
                  progress=False, score=False,
                  backend_options={"volume_input": "images", "volume_tokens": 4, "trust_remote_code": True,
                                   "device": "cpu", "dtype": "float32"})
    assert summary.done == len(picked) >= 3 and summary.n_errors == 0
    bench = load_benchmark(small)
    items = {i.id: i for i in bench.items}
    lines = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    means = set()
    for p in lines:
        volume = bench.image_root / items[p["item_id"]].images[0].path
        cube = np.load(prepare(volume, "volume", 6, (-1000.0, 1000.0), 16, bench.image_root, cache=volume_cache)[0])
        assert p["raw_output"] == f"4x6x16x16x{round(float(cube.mean()) * 10000)}"  # this item's volume, whole
        assert [part for part in p["prompt"][0]["parts"] if "image" in part][0]["image"].endswith("volume.npy")
        means.add(p["raw_output"])
    assert len(means) > 1  # different volumes, different answers
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["protocol"]["options"] == {"mode": "volume", "slices": 6, "size": 16, "window": "-1000,1000"}
    assert config["model"]["identity"]["volume_input"] == "images"


def test_a_backend_without_volume_input_is_refused_before_anything_is_written(rad3d_bench, volume_cache, tmp_path,
                                                                              monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
    with FakeOpenAI.start() as server:
        with pytest.raises(InvalidInputError, match=r"mode=volume sends 3-D arrays, which .* does not declare"):
            run(rad3d_bench, server.uri(), tmp_path / "refused", protocol="ct", protocol_options=OPTIONS,
                limit=2, progress=False)
        argv = ["run", str(rad3d_bench), "--model", server.uri(), "--protocol", "ct", "--protocol-option",
                "mode=volume", "--limit", "2", "--out", str(tmp_path / "refused"), "--no-progress"]
        assert main(argv) == 2
        assert server.stats()["bodies"] == []
    assert "use mode=slices or mode=montage" in capsys.readouterr().err
    assert not (tmp_path / "refused").exists()
    # a baseline reads no pixel and declares it takes volumes: mode=volume runs
    assert main(["run", str(rad3d_bench), "--model", "baseline:constant-B", "--protocol", "ct", "--protocol-option",
                 "mode=volume", "--protocol-option", "slices=4", "--protocol-option", "size=16", "--tasks", "task4",
                 "--out", str(tmp_path / "baseline"), "--no-progress"]) == 0
    assert (tmp_path / "baseline" / "scores.json").is_file()


def test_changed_rescale_metadata_never_gets_the_old_slices(ct_phantom, tmp_path):
    """Issue 24: the volume cache is keyed by every input of the preparation, the slope and intercept included."""
    import shutil

    import pandas as pd
    from PIL import Image

    root = tmp_path / "ct"
    shutil.copytree(ct_phantom, root)
    volume = sorted((root / "dataset" / "valid").rglob("*.nii.gz"))[0]
    metadata = root / "dataset" / "metadata" / "validation_metadata.csv"
    first = prepare(volume, "slices", 4, (-1000.0, 1000.0), 16, root=root, cache=tmp_path / "cache")
    again = prepare(volume, "slices", 4, (-1000.0, 1000.0), 16, root=root, cache=tmp_path / "cache")
    assert again == first  # the same inputs: served from the cache
    df = pd.read_csv(metadata, dtype=str, keep_default_na=False)
    df.loc[df["VolumeName"] == volume.name, "RescaleIntercept"] = "-500"
    df.to_csv(metadata, index=False)
    changed = prepare(volume, "slices", 4, (-1000.0, 1000.0), 16, root=root, cache=tmp_path / "cache")
    assert changed[0].parent != first[0].parent
    pixels = [np.asarray(Image.open(f[len(f) // 2])).astype(int) for f in (first, changed)]
    assert (pixels[1] >= pixels[0]).all() and (pixels[1] > pixels[0]).any()  # 524 HU brighter, within the window
    assert json.loads((changed[0].parent / "done.json").read_text())["rescale"] == [1.0, -500.0]
