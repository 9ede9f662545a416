"""``--no-progress`` silences every bar: ours and the libraries' (transformers' "Loading weights")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.eltlm import make_open_benchmark
from helpers.tiny_vlms import build_tiny_idefics3

from medtemporal.progress import progress_bar, quiet

pytest.importorskip("transformers")


def test_quiet_silences_our_bars_and_puts_the_libraries_back():
    hub = pytest.importorskip("huggingface_hub.utils")
    assert not hub.are_progress_bars_disabled()
    with quiet():
        assert progress_bar(range(2)).disable and hub.are_progress_bars_disabled()
    assert not hub.are_progress_bars_disabled()


@pytest.mark.slow
def test_no_progress_shows_no_loading_bar_of_a_local_model(tmp_path: Path):
    model = build_tiny_idefics3(tmp_path / "tiny")
    bench = make_open_benchmark(tmp_path, n=2, patients=1)  # open questions, no images: a text request
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "HF_HUB_DISABLE_PROGRESS_BARS")}

    def run(out: str, *flags: str) -> str:
        done = subprocess.run([sys.executable, "-m", "medtemporal", "run", str(bench), "--model", f"hf:{model}",
                               "--out", str(tmp_path / out), "--no-cache", "--max-tokens", "4", *flags],
                              capture_output=True, text=True, env=env, timeout=600, check=False)
        assert done.returncode == 0, done.stderr
        return done.stderr

    assert "Loading weights" in run("shown")  # transformers draws its bar even off a terminal
    assert "Loading weights" not in run("silent", "--no-progress")
