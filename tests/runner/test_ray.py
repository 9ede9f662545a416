"""Runs sharded over a local CPU-only Ray cluster: the same run folder as one process, and no item lost to a
replica killed mid-run."""

from __future__ import annotations

import json
import threading
import time

import pytest
from helpers.tiny import make_tiny_benchmark
from helpers.tiny_vlms import build_tiny_idefics3

from medtemporal.backends.base import GenerateConfig
from medtemporal.errors import InvalidInputError
from medtemporal.runner import run

ray = pytest.importorskip("ray")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow
HF = {"device": "cpu", "dtype": "float32", "batch_size": 2}
CONFIG = GenerateConfig(max_tokens=6)


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return build_tiny_idefics3(tmp_path_factory.mktemp("tiny-idefics3"))


def _outputs(run_dir):
    lines = [json.loads(x) for x in (run_dir / "predictions.jsonl").read_text().splitlines()]
    return {p["item_id"]: (p["raw_output"], p["answer"], p["error"]) for p in lines}, len(lines)


def test_ray_run_matches_a_one_process_run(cluster, tiny_model, tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=6)
    common = dict(config=CONFIG, progress=False, no_cache=True, backend_options=HF)
    alone = run(bench, f"hf:{tiny_model}", tmp_path / "alone", **common)
    sharded = run(bench, f"hf:{tiny_model}", tmp_path / "ray", ray=True, replicas=2, **common)
    assert alone.done == sharded.done == 6 and sharded.n_errors == 0
    assert _outputs(tmp_path / "ray") == _outputs(tmp_path / "alone")
    scores = [json.loads((tmp_path / d / "scores.json").read_text())["scores"] for d in ("alone", "ray")]
    assert scores[0] == scores[1]
    configs = [json.loads((tmp_path / d / "config.json").read_text())["model"] for d in ("alone", "ray")]
    assert configs[0]["identity"] == configs[1]["identity"]  # same cache keys, and either resumes the other
    assert configs[1]["settings"]["ray"] == {"address": None, "replicas": 2, "num_gpus": 0.0, "num_cpus": 1.0}


def test_a_replica_killed_mid_run_loses_nothing(cluster, tiny_model, tmp_path):
    from medtemporal.runner.ray_pool import RayPool

    bench = make_tiny_benchmark(tmp_path, n=16)
    alone = run(bench, f"hf:{tiny_model}", tmp_path / "alone", config=CONFIG, progress=False, no_cache=True,
                backend_options={**HF, "batch_size": 1})
    pool = RayPool(f"hf:{tiny_model}", {**HF, "batch_size": 1}, replicas=2)
    predictions = tmp_path / "ray" / "predictions.jsonl"
    seen_at_kill: list[int] = []

    def kill_after_two() -> None:
        while not predictions.is_file() or len(predictions.read_text().splitlines()) < 2:
            time.sleep(0.005)
        seen_at_kill.append(len(predictions.read_text().splitlines()))
        ray.kill(pool.replicas[0], no_restart=False)  # Ray restarts it; its requests are retried

    killer = threading.Thread(target=kill_after_two, daemon=True)
    killer.start()
    try:
        summary = run(bench, pool, tmp_path / "ray", config=CONFIG, progress=False, no_cache=True)
    finally:
        killer.join(timeout=5)
        for replica in pool.replicas:
            ray.kill(replica, no_restart=True)
    assert seen_at_kill and seen_at_kill[0] < 16  # the kill came while items were still being answered
    assert summary.done == 16 and summary.n_errors == 0
    outputs, lines = _outputs(tmp_path / "ray")
    assert lines == 16 and outputs == _outputs(tmp_path / "alone")[0]  # each item once, as one process answers


def test_ray_options_are_checked(tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=1)
    with pytest.raises(InvalidInputError, match="--replicas applies to runs on Ray"):
        run(bench, "baseline:random", tmp_path / "r", replicas=2, progress=False)
