"""A ClinicalSkillQA run through the real openai client against the loopback fake server."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fake_openai import TEST_API_KEY, FakeOpenAI

from medtemporal.benchmark import load
from medtemporal.cli import main
from medtemporal.runs import RunFolder


def test_frames_go_out_in_the_order_shown_and_a_bare_letter_is_invalid(
        frames: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offline_encoder: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(tmp_path / "cache.sqlite"))
    assert main(["build", "skillqa", "--frames", str(frames), "--out", str(tmp_path / "bench")]) == 0
    items = load(tmp_path / "bench").items
    with FakeOpenAI.start() as server:
        server.configure(keep_bodies=True)
        assert main(["run", str(tmp_path / "bench"), "--model", server.uri("fake-vlm"), "--out",
                     str(tmp_path / "run"), "--no-progress"]) == 0
        bodies = server.stats()["bodies"]
    sizes = []
    for body in bodies:
        parts = body["messages"][-1]["content"]
        kinds = [p["type"] for p in parts]
        n = kinds.count("image_url")
        assert kinds == ["text", "image_url"] * n + ["text"]  # each frame after its caption, then the prompt
        assert [p["text"] for p in parts[:-1:2]] == [f"Frame {chr(ord('A') + k)}:" for k in range(n)]
        assert '{"order"' in parts[-1]["text"] and "labelled A, B" in parts[-1]["text"]
        sizes.append(n)
    assert sorted(sizes) == sorted(len(i.answer) for i in items)
    scores = RunFolder(tmp_path / "run").scores()
    overall = scores.score("overall", "accuracy")
    assert overall.invalid == len(items) and overall.value == 0.0  # the fake answers one letter: no order
    assert scores.score("overall", "pairwise_accuracy").value == 0.0
