"""Ray runs fail the way one-process runs fail (issue 32 §2): an endpoint error raised in a replica reaches the
driver with its type and reason (retried, recorded, counted), a cluster address where no Ray cluster answers is
refused in one sentence within 15 s, and SIGTERM stops a run, which then resumes."""

from __future__ import annotations

import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.fake_openai import TEST_API_KEY, FakeOpenAI
from helpers.kill import CHILD
from helpers.tiny import make_tiny_benchmark

from medtemporal.backends.base import RequestError, RetryableError

TESTS = Path(__file__).resolve().parents[1]


def test_backend_errors_keep_their_type_reason_and_hints_across_processes():
    for error in (RetryableError("HTTP 500 from the server.", reason="http_500", retry_after=2.5, attempts=3),
                  RequestError("HTTP 400: bad image.", reason="http_400")):
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error) and str(again) == str(error) and vars(again) == vars(error)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cli(*argv: str, env: dict[str, str] | None = None, timeout: float = 60) -> tuple[int, str, float]:
    """``medtemporal ARGV`` in a child process: exit status, stdout and stderr together, seconds taken."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", CHILD, *argv], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "CI": "1", **(env or {})})
    return done.returncode, done.stdout + done.stderr, time.monotonic() - started


@pytest.mark.slow  # waits for Ray to give up: about 16 s
@pytest.mark.timeout(120)
def test_a_cluster_address_where_no_ray_cluster_answers_is_one_sentence_within_15_s(tmp_path):
    pytest.importorskip("ray")
    bench = make_tiny_benchmark(tmp_path / "b", n=2)
    with FakeOpenAI.start() as http:  # something listens there, but it is no Ray cluster
        cases = [
            ((f"127.0.0.1:{_free_port()}",), {}, "nothing listens there"),
            ((), {"RAY_ADDRESS": f"127.0.0.1:{_free_port()}"}, "RAY_ADDRESS=127.0.0.1"),
            ((f"127.0.0.1:{http.port}",), {}, "Cannot join the Ray cluster"),
        ]
        for address, env, needle in cases:
            code, err, took = _cli("run", str(bench), "--model", "baseline:random", "--out", str(tmp_path / "r"),
                                   "--no-progress", "--ray", *address, env=env)
            lines = [line for line in err.splitlines() if line.strip()]  # nothing on stdout, one line on stderr
            assert code == 2 and took < 15 + 5, (code, took, err[-2000:])  # 5 s for the interpreter and imports
            assert len(lines) == 1 and "medtemporal: error:" in lines[0] and needle in lines[0], err[-2000:]


def _predictions(run: Path) -> list[dict]:
    path = run / "predictions.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.is_file() else []


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_endpoint_errors_in_replicas_are_retried_and_recorded_and_sigterm_stops_the_run(tmp_path):
    pytest.importorskip("ray")
    bench = make_tiny_benchmark(tmp_path / "b", n=12)
    env = {"OPENAI_API_KEY": TEST_API_KEY, "MEDTEMPORAL_CACHE": str(tmp_path / "cache.sqlite"),
           "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    with FakeOpenAI.spawn() as fake:
        # every item's first attempt is a 500; items 1 and 10-11 fail for good
        fake.configure(faults=[{"kind": "500", "match": "finding 1", "times": 99},
                               {"kind": "500", "match": "", "times": 1}])
        run = tmp_path / "ray"
        code, err, _ = _cli("run", str(bench), "--model", fake.uri(), "--out", str(run), "--no-progress", "--ray",
                            "--replicas", "2", "--attempts", "2", "--no-score", env=env, timeout=400)
        assert "Traceback" not in err, err[-3000:]
        lines = _predictions(run)
        failed = [p for p in lines if p["error"] is not None]
        assert len(lines) == 12 and len(failed) == 3, err[-3000:]
        assert all("HTTP 500" in p["error"] and "gave up after 2 attempts" in p["error"] for p in failed), failed
        assert code == 1 and "3 failed" in err and "3 × server_error" in err  # as without --ray: by reason, exit 1

        fake.reset()
        fake.configure(latency=1.0)
        run = tmp_path / "stopped"
        child = subprocess.Popen([sys.executable, "-c", CHILD, "run", str(bench), "--model", fake.uri(), "--out",
                                  str(run), "--no-progress", "--ray", "--concurrency", "1", "--no-score"],
                                 env={**os.environ, "CI": "1", **env}, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while not _predictions(run) and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.2)
        assert _predictions(run), "the run answered nothing"
        child.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        child.wait(timeout=60)
        assert time.monotonic() - sent < 30 and child.returncode != 0
        done = len(_predictions(run))
        assert done < 12
        fake.configure(latency=0.0)
        code, err, _ = _cli("run", str(bench), "--model", fake.uri(), "--out", str(run), "--no-progress", "--no-score",
                            env=env)
        lines = _predictions(run)
        assert code == 0 and len(lines) == 12 and len({p["item_id"] for p in lines}) == 12, err[-2000:]
