"""SIGKILL a run at random moments, resume it with the same command each time, and compare.

The kill figure of issue 15: at least `KILLS` random SIGKILLs of ``medtemporal run`` while the server injects
500s, malformed JSON and empty replies lose, duplicate and re-ask no answered item and end in identical scores.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.fake_openai import TEST_API_KEY as KEY
from helpers.tiny import make_tiny_benchmark

from medtemporal.benchmark import load
from medtemporal.runner import RetryPolicy, run

TESTS = str(Path(__file__).resolve().parents[1])
CHILD = (
    f"import sys; sys.path.insert(0, {TESTS!r}); import helpers.tiny; "
    "from medtemporal.cli import main; sys.exit(main(sys.argv[1:]))"
)
KILLS = 20
FAULTS = [  # items 1, 10-19 fail once with a 500; 2, 20-29 with malformed JSON; 3, 30-39 with an empty reply
    {"kind": "500", "match": "finding 1", "times": 1},
    {"kind": "malformed", "match": "finding 2", "times": 1},
    {"kind": "empty", "match": "finding 3", "times": 1},
]
ITEMS = 100


def _answered(path: Path) -> dict[str, dict]:
    """Items with a complete, error-free line in predictions.jsonl."""
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_bytes().split(b"\n")[:-1]:
        record = json.loads(line)
        if record["error"] is None:
            out[record["item_id"]] = record
    return out


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.is_file() else 0


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_run_killed_at_random_moments_resumes_to_the_same_predictions_and_scores(fake, tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=ITEMS))
    faults = FAULTS
    fake.configure(latency=0.15, faults=faults)
    reference = run(bench.path, fake.uri(), tmp_path / "reference", cache_path=tmp_path / "ref.sqlite", concurrency=2,
                    retry=RetryPolicy(base_delay_s=0.05), progress=False)
    assert reference.done == ITEMS

    fake.reset()
    fake.configure(latency=0.15, faults=faults)
    out = tmp_path / "killed"
    preds = out / "predictions.jsonl"
    command = [sys.executable, "-c", CHILD, "run", str(bench.path), "--model", fake.uri(), "--out", str(out),
               "--concurrency", "2", "--cache", str(tmp_path / "killed.sqlite")]
    env = {**os.environ, "CI": "1", "OPENAI_API_KEY": KEY}
    rng = random.Random(20240611)
    key_of = {item.id: item.question for item in bench.items}
    kills = 0
    for _ in range(KILLS + 10):
        before = _answered(preds)
        counts_before = fake.stats()["counts"]
        start_lines = _lines(preds)
        child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if kills < KILLS:
            if rng.random() < 0.25:  # anywhere: start-up, config, resume repair, first requests
                time.sleep(rng.uniform(0.0, 3.0))
            else:  # mid-run: after at least one new answer
                deadline = time.monotonic() + 60
                while child.poll() is None and _lines(preds) <= start_lines and time.monotonic() < deadline:
                    time.sleep(0.005)
                time.sleep(rng.uniform(0.0, 0.4))
            if child.poll() is None:
                child.send_signal(signal.SIGKILL)
                kills += 1
        _, err = child.communicate(timeout=120)
        counts_after = fake.stats()["counts"]
        for item_id in before:  # nothing answered before this attempt was asked again
            question = key_of[item_id]
            assert sum(n for k, n in counts_after.items() if question in k) == sum(
                n for k, n in counts_before.items() if question in k
            ), f"item {item_id} was requested again after it was answered"
        if child.returncode == 0:
            break
        assert child.returncode == -signal.SIGKILL, err.decode()
    assert kills >= KILLS and child.returncode == 0

    final = [json.loads(line) for line in preds.read_text().splitlines()]
    assert len(final) == ITEMS and len({p["item_id"] for p in final}) == ITEMS
    ref = _answered(tmp_path / "reference" / "predictions.jsonl")
    got = {p["item_id"]: p for p in final}
    for item_id, p in ref.items():
        assert (got[item_id]["raw_output"], got[item_id]["answer"], got[item_id]["request_hash"]) == (
            p["raw_output"], p["answer"], p["request_hash"])
    scores = [json.loads((tmp_path / r / "scores.json").read_text())["scores"] for r in ("reference", "killed")]
    assert scores[0] == scores[1]
    config = json.loads((out / "config.json").read_text())
    assert config["finished_at"] is not None
    print(f"kill figure: {kills} SIGKILLs with 500/malformed/empty faults -> {ITEMS} items, 0 lost, 0 duplicated, "
          "0 re-asked, identical scores")
