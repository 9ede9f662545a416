"""``bench/gpu_hf.py`` at toy size on CPU, so that the GPU throughput bench cannot rot (its numbers are not checked)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
BENCH = Path(__file__).resolve().parents[2] / "bench" / "gpu_hf.py"


@pytest.mark.slow
def test_gpu_bench_runs_both_paths_at_toy_size_on_cpu(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("gpu_hf", BENCH)
    gpu_hf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_hf)
    rates = gpu_hf.main(["--size", "toy", "--requests", "4", "--batch-size", "2", "--new-tokens", "2", "--device",
                         "cpu", "--patients", "12", "--image-size", "64", "--work", str(tmp_path)])
    assert rates["medtemporal_items_per_s"] > 0 and rates["bare_items_per_s"] > 0
    out = capsys.readouterr().out
    assert "Qwen2-VL-toy on CPU, 4 five-image requests, batch 2" in out and "ratio" in out
    assert len((tmp_path / "run" / "predictions.jsonl").read_text().splitlines()) == 4
