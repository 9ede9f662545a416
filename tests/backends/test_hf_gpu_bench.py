"""``bench/gpu_hf.py --tiny`` on CPU for two architectures, so that the GPU throughput bench cannot rot (its numbers
are not checked), and its real sizes against transformers' config classes and the model registry."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
BENCH = Path(__file__).resolve().parents[2] / "bench" / "gpu_hf.py"


@pytest.fixture(scope="module")
def gpu_hf():
    spec = importlib.util.spec_from_file_location("gpu_hf", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_gpu_bench_runs_both_paths_for_two_architectures_at_tiny_size_on_cpu(gpu_hf, tmp_path, capsys):
    rows = gpu_hf.main(["--tiny", "--entries", "medvlm-r1,medgemma-4b", "--requests", "4", "--batch-size", "2",
                        "--new-tokens", "2", "--device", "cpu", "--patients", "12", "--image-size", "64",
                        "--work", str(tmp_path)])
    assert [(r["entry"], r["architecture"]) for r in rows] == [("medvlm-r1", "qwen2_vl"), ("medgemma-4b", "gemma3")]
    assert all(r["items"] == 5 and r["medtemporal/s"] > 0 and r["bare/s"] > 0 for r in rows)
    out = capsys.readouterr().out
    assert "CPU, float32, batch 2, 2 new tokens" in out and "medvlm-r1" in out and "medgemma-4b" in out
    for entry in ("medvlm-r1", "medgemma-4b"):  # four MI-CXR items of five images, one longitudinal-rrg item
        assert len((tmp_path / f"{entry}-mi-cxr" / "predictions.jsonl").read_text().splitlines()) == 4
        assert len((tmp_path / f"{entry}-longitudinal-rrg" / "predictions.jsonl").read_text().splitlines()) == 1


def test_default_selection_is_every_native_entry_up_to_max_params_with_real_sizes(gpu_hf):
    from medtemporal.models import entries

    chosen = gpu_hf.eligible(gpu_hf.argparse.Namespace(entries=None, max_params=8.0, tiny=False))
    names = {e.name for e in chosen}
    assert {"medvlm-r1", "medgemma-4b", "lingshu-7b", "llava-med-v1.5-7b", "internvl3-8b", "qwen3-vl-8b"} <= names
    assert not names & {"medgemma-27b", "lingshu-32b", "maira-2", "m3d-lamed", "gpt-4o"}
    assert {(e.architecture, e.size) for e in entries() if e.name in names} <= {
        tuple(k.split()) for k in gpu_hf.REAL if k != "_doc"}
    with pytest.raises(SystemExit, match="maira-2: no native architecture"):
        gpu_hf.eligible(gpu_hf.argparse.Namespace(entries="maira-2", max_params=8.0, tiny=False))


@pytest.mark.parametrize("name", ["medvlm-r1", "medgemma-4b", "lingshu-7b", "llava-med-v1.5-7b", "internvl3-8b",
                                  "qwen3-vl-8b", "qwen2.5-vl-7b"])
def test_real_sizes_build_the_parameter_count_the_registry_states(gpu_hf, name, tmp_path):
    """Each entry's real-size config, built on the meta device (no memory), has about the parameter count its
    registry entry states."""
    import torch

    from medtemporal.models import lookup

    entry = lookup(name)
    folder = gpu_hf.real_size(gpu_hf.TINY[entry.architecture](tmp_path / name), entry)
    with torch.device("meta"):
        model = transformers.AutoModelForImageTextToText.from_config(transformers.AutoConfig.from_pretrained(folder))
    billions = sum(p.numel() for p in model.parameters()) / 1e9
    assert abs(billions - entry.params_b) / entry.params_b < 0.2, billions  # the card names Qwen2.5-VL-7B's 8.3B "7B"


def test_an_entrys_own_processor_resolution_goes_over_its_architectures(gpu_hf, tmp_path):
    from medtemporal.models import lookup

    entry = lookup("qwen2.5-vl-7b")
    folder = gpu_hf.real_size(gpu_hf.TINY[entry.architecture](tmp_path / entry.name), entry)
    pixels = entry.hf_options["processor_kwargs"]
    assert json.loads((folder / "preprocessor_config.json").read_text())["size"] == {
        "shortest_edge": pixels["min_pixels"], "longest_edge": pixels["max_pixels"]}
