"""The run folder's owner: one writer at a time, and a benchmark rebuilt after the run is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter

import pytest

from helpers.eltlm import make_open_benchmark, make_open_run
from helpers.fake_openai import FakeOpenAI
from helpers.tiny import make_tiny_benchmark
from medtemporal.errors import InvalidInputError
from medtemporal.runner import run
from medtemporal.runs import JUDGEMENTS, RunFolder, WriterLock
from medtemporal.scoring import score_run

VERDICT = "Accuracy: 1\nCompleteness: 1"


def test_a_second_writer_is_refused_in_one_sentence(tmp_path):
    bench = make_tiny_benchmark(tmp_path)
    out = tmp_path / "r"
    run(bench, "baseline:random", out, progress=False, score=False)
    with WriterLock(out):
        with pytest.raises(InvalidInputError, match="Another medtemporal process is writing"):
            score_run(out)
        with pytest.raises(InvalidInputError, match="Another medtemporal process is writing"):
            run(bench, "baseline:random", out, progress=False)
    assert not RunFolder(out).has_scores()
    score_run(out)  # released: the folder takes a writer again


@pytest.mark.slow  # two judge passes in subprocesses: about 13 s
def test_two_judge_passes_at_once_ask_every_judge_call_once(tmp_path):
    bench = make_open_benchmark(tmp_path, n=6)
    out = make_open_run(bench, tmp_path / "r", answer="An answer no reference gives.")
    env = {**os.environ, "OPENAI_API_KEY": "test", "MEDTEMPORAL_CACHE": str(tmp_path / "cache.sqlite")}
    with FakeOpenAI.start(latency=0.5, replies=[["Accuracy", VERDICT]]) as server:
        command = [sys.executable, "-m", "medtemporal", "score", str(out), "--judge", server.uri("judge"),
                   "--judge-concurrency", "1", "--resamples", "50"]
        first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while not RunFolder(out).being_written() and time.time() < deadline:
            time.sleep(0.05)
        second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        stdout, stderr = first.communicate(timeout=300)
        asked = server.stats()["counts"]
    assert first.returncode == 0, stderr
    assert second.returncode != 0 and "Another medtemporal process is writing" in second.stderr
    assert len(second.stderr.strip().splitlines()) == 1 and "Traceback" not in second.stderr
    assert asked and set(asked.values()) == {1}  # every judge request reached the judge once
    lines = [json.loads(line) for line in (out / JUDGEMENTS).read_text().splitlines()]
    keys = Counter((j["kind"], j["item_id"]) for j in lines)
    assert len(lines) == 18 and set(keys.values()) == {1}  # answer, reference and empty of each of 6 items


def test_a_rebuilt_benchmark_is_refused_by_score_and_resume_unless_allowed(tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=3)
    out = tmp_path / "r"
    run(bench, "baseline:oracle", out, progress=False)
    before = json.loads((out / "scores.json").read_text())
    make_tiny_benchmark(tmp_path, n=4)  # rebuilt in place: other items
    with pytest.raises(InvalidInputError, match=r"rebuilt after the run .*items sha256 \w{12} then, \w{12} now"):
        score_run(out)
    with pytest.raises(InvalidInputError, match="another build of the benchmark"):
        run(bench, "baseline:oracle", out, progress=False)
    score_run(out, allow_rebuilt=True)
    after = json.loads((out / "scores.json").read_text())
    assert after["run"]["allow_rebuilt_benchmark"] is True and before["run"].get("allow_rebuilt_benchmark") is None


def test_a_run_resumes_across_a_template_rename_but_not_across_new_wording(tmp_path):
    """Templates count by their text: a folder whose config names a template by its old name resumes; one
    whose template text differs is refused, naming ``protocol.templates``."""
    bench = make_tiny_benchmark(tmp_path, n=3)
    out = tmp_path / "r"
    run(bench, "baseline:oracle", out, progress=False)
    folder = RunFolder(out)
    config = folder.config()
    (name, digest), = config.protocol.templates.items()
    renamed = config.model_copy(update={"protocol": config.protocol.model_copy(
        update={"templates": {f"old_{name}": digest}})})
    folder.write_config(renamed)
    assert folder.check_resumable(config) == renamed
    reworded = config.model_copy(update={"protocol": config.protocol.model_copy(
        update={"templates": {name: "0" * 64}})})
    with pytest.raises(InvalidInputError, match="another protocol.templates"):
        folder.check_resumable(reworded)
