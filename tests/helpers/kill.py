"""The kill figure: SIGKILL ``medtemporal run`` at random moments while the server injects faults, resume it with
the same command each time, and count what was lost, duplicated or asked again against an unkilled reference run.

Used by ``tests/runner/test_kill.py`` (10 kills) and ``bench/kill.py`` (the issue's figure, 20 or more).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from helpers.fake_openai import TEST_API_KEY, FakeOpenAI
from helpers.tiny import make_tiny_benchmark

from medtemporal.benchmark import load
from medtemporal.backends.session import RetryPolicy
from medtemporal.runner import run

TESTS = str(Path(__file__).resolve().parents[1])
CHILD = (
    f"import sys; sys.path.insert(0, {TESTS!r}); import helpers.tiny; "
    "from medtemporal.cli import main; sys.exit(main())"
)
FAULTS = [  # items 1, 10-19 fail once with a 500; 2, 20-29 with malformed JSON; 3, 30-39 with an empty reply
    {"kind": "500", "match": "finding 1", "times": 1},
    {"kind": "malformed", "match": "finding 2", "times": 1},
    {"kind": "empty", "match": "finding 3", "times": 1},
]


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


def kill_figure(fake: FakeOpenAI, root: Path, *, items: int, kills: int, seed: int = 20240611) -> dict[str, Any]:
    """Kill a run ``kills`` times at random moments, resume until it finishes, and compare with a reference run.

    Returns:
        ``kills``, ``attempts``, ``items``, ``lost`` (items without an answer at the end), ``duplicated``
        (extra lines), ``reasked`` (requests for items answered before that attempt), ``different`` (answers or
        request hashes that differ from the reference), ``identical_scores``, ``finished``, ``unexpected_exits``
        (stderr of attempts that ended otherwise than by our SIGKILL or success).
    """
    bench = load(make_tiny_benchmark(root, n=items))
    fake.reset()
    fake.configure(latency=0.15, faults=FAULTS)
    reference = run(bench.path, fake.uri(), root / "reference", cache_path=root / "ref.sqlite", concurrency=2,
                    retry=RetryPolicy(base_delay_s=0.05), progress=False)
    assert reference.done == items, str(reference)

    fake.reset()
    fake.configure(latency=0.15, faults=FAULTS)
    out = root / "killed"
    preds = out / "predictions.jsonl"
    command = [sys.executable, "-c", CHILD, "run", str(bench.path), "--model", fake.uri(), "--out", str(out),
               "--concurrency", "2", "--cache", str(root / "killed.sqlite")]
    env = {**os.environ, "CI": "1", "OPENAI_API_KEY": TEST_API_KEY}
    rng = random.Random(seed)
    question = {item.id: item.question for item in bench.items}
    done_kills = attempts = reasked = 0
    unexpected: list[str] = []
    code = None
    while code != 0 and attempts < kills + 10:
        attempts += 1
        before = _answered(preds)
        counts_before = fake.stats()["counts"]
        start_lines = _lines(preds)
        child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if done_kills < kills:
            if rng.random() < 0.25:  # anywhere: start-up, config, resume repair, first requests
                time.sleep(rng.uniform(0.0, 3.0))
            else:  # mid-run: after at least one new answer
                deadline = time.monotonic() + 60
                while child.poll() is None and _lines(preds) <= start_lines and time.monotonic() < deadline:
                    time.sleep(0.005)
                time.sleep(rng.uniform(0.0, 0.4))
            if child.poll() is None:
                child.send_signal(signal.SIGKILL)
                done_kills += 1
        _, err = child.communicate(timeout=120)
        code = child.returncode
        if code not in (0, -signal.SIGKILL):
            unexpected.append(err.decode(errors="replace")[-2000:])
        counts_after = fake.stats()["counts"]
        for item_id in before:  # nothing answered before this attempt may be asked again
            q = question[item_id]
            reasked += sum(n for k, n in counts_after.items() if q in k) - sum(
                n for k, n in counts_before.items() if q in k)

    final = [json.loads(line) for line in preds.read_text().splitlines()]
    got = {p["item_id"]: p for p in final}
    ref = _answered(root / "reference" / "predictions.jsonl")
    different = sum(
        (got[i]["raw_output"], got[i]["answer"], got[i]["request_hash"]) != (p["raw_output"], p["answer"],
                                                                             p["request_hash"])
        if i in got else True for i, p in ref.items()
    )
    scores = [json.loads((root / r / "scores.json").read_text())["scores"] if (root / r / "scores.json").is_file()
              else None for r in ("reference", "killed")]
    return {
        "kills": done_kills,
        "attempts": attempts,
        "items": items,
        "lost": items - sum(p["error"] is None for p in got.values()),
        "duplicated": len(final) - len(got),
        "reasked": reasked,
        "different": different,
        "identical_scores": scores[0] is not None and scores[0] == scores[1],
        "finished": code == 0 and json.loads((out / "config.json").read_text())["finished_at"] is not None,
        "unexpected_exits": unexpected,
    }
