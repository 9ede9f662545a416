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


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return make_tiny_benchmark(tmp_path_factory.mktemp("bench"), n=16)


@pytest.fixture(scope="module")
def one_process(bench, tiny_model, tmp_path_factory):
    out = tmp_path_factory.mktemp("alone") / "run"
    summary = run(bench, f"hf:{tiny_model}", out, config=CONFIG, progress=False, no_cache=True, backend_options=HF)
    assert summary.done == 16
    return out


@pytest.fixture(scope="module")
def pool(cluster, tiny_model):
    from medtemporal.backends.ray_pool import RayPool

    pool = RayPool(f"hf:{tiny_model}", HF, replicas=2)
    yield pool
    for replica in pool.replicas:
        ray.kill(replica, no_restart=True)


def test_ray_run_matches_a_one_process_run(bench, one_process, pool, tmp_path):
    summary = run(bench, pool, tmp_path / "ray", config=CONFIG, progress=False, no_cache=True)
    assert summary.done == 16 and summary.n_errors == 0
    assert set(pool.served_by) == {0, 1}  # both replicas answered
    assert _outputs(tmp_path / "ray") == _outputs(one_process)
    scores = [json.loads((d / "scores.json").read_text())["scores"] for d in (one_process, tmp_path / "ray")]
    assert scores[0] == scores[1]
    configs = [json.loads((d / "config.json").read_text())["model"] for d in (one_process, tmp_path / "ray")]
    assert configs[0]["identity"] == configs[1]["identity"]  # same cache keys, and either resumes the other
    assert configs[1]["settings"]["ray"] == {"address": None, "replicas": 2, "num_gpus": 0.0, "num_cpus": 1.0}


def test_a_replica_killed_mid_run_loses_nothing(bench, one_process, pool, tmp_path):
    predictions = tmp_path / "ray" / "predictions.jsonl"
    seen_at_kill: list[int] = []

    def kill_after_two() -> None:
        while not predictions.is_file() or len(predictions.read_text().splitlines()) < 2:
            time.sleep(0.005)
        seen_at_kill.append(len(predictions.read_text().splitlines()))
        ray.kill(pool.replicas[0], no_restart=False)  # Ray restarts it; its requests are retried

    killer = threading.Thread(target=kill_after_two, daemon=True)
    killer.start()
    summary = run(bench, pool, tmp_path / "ray", config=CONFIG, progress=False, no_cache=True)
    killer.join(timeout=5)
    assert seen_at_kill and seen_at_kill[0] < 16  # the kill came while items were still being answered
    assert summary.done == 16 and summary.n_errors == 0
    outputs, lines = _outputs(tmp_path / "ray")
    assert lines == 16 and outputs == _outputs(one_process)[0]  # each item once, as one process answers


def test_run_with_ray_from_a_uri_records_its_settings(cluster, bench, tmp_path):
    from medtemporal.cli import main

    assert main(["run", str(bench), "--model", "baseline:random", "--out", str(tmp_path / "ray"), "--ray",
                 "--replicas", "2", "--option", "latency_s=0.01", "--option", "num_cpus=0.5", "--no-progress"]) == 0
    alone = run(bench, "baseline:random", tmp_path / "alone", progress=False, backend_options={"latency_s": 0.01})
    assert alone.done == 16
    assert _outputs(tmp_path / "ray") == _outputs(tmp_path / "alone")
    model = json.loads((tmp_path / "ray" / "config.json").read_text())["model"]
    assert model["settings"] == {"latency_s": 0.01, "ray": {"address": None, "replicas": 2, "num_gpus": 0.0,
                                                            "num_cpus": 0.5}}


def test_ray_options_are_checked(cluster, tmp_path):
    from medtemporal.backends.ray_pool import RayPool

    with pytest.raises(InvalidInputError, match="5 replicas of 1 CPU each need 5 CPU, but the Ray cluster has 4"):
        RayPool("baseline:random", replicas=5)
    with pytest.raises(InvalidInputError, match="need 2 GPU, but the Ray cluster has 0"):
        RayPool("baseline:random", replicas=2, num_gpus=1)
    bench = make_tiny_benchmark(tmp_path, n=1)
    with pytest.raises(InvalidInputError, match="--replicas applies to runs on Ray"):
        run(bench, "baseline:random", tmp_path / "r", replicas=2, progress=False)
