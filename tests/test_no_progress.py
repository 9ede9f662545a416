"""``--no-progress`` silences every bar: ours and the libraries' (transformers' "Loading weights")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.eltlm import make_open_benchmark
from helpers.tiny_vlms import build_tiny_idefics3

from medtemporal.cli import main, parser
from medtemporal.progress import progress_bar, quiet

LONG = ("run", "score", "report", "build", "phantoms", "export", "audit", "demo", "import-predictions")
"""Every command that can run for minutes (and draw bars)."""


def _leaves(name: str) -> list[tuple[str, object]]:
    """The parsers of ``name`` with no sub-commands of their own (``build mi-cxr``, ``phantoms cxr``, ``score``)."""
    import argparse

    def walk(p: argparse.ArgumentParser, path: str):
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            yield path, p
        for action in subs:
            for child, sub in action.choices.items():
                yield from walk(sub, f"{path} {child}")

    top = next(a for a in parser(name)._actions if a.dest == "command")
    return list(walk(top.choices[name], name))


def test_libraries_imported_inside_quiet_get_their_bars_back_without_a_warning():
    """The demo and a score with BERTScore first import huggingface_hub inside `quiet`; leaving it must switch its
    bars back on without its "Cannot enable progress bars" warning (its tqdm module keeps a copy of the switch)."""
    code = ("import warnings; warnings.simplefilter('error'); from medtemporal.progress import quiet\n"
            "with quiet():\n    import huggingface_hub.utils, transformers.utils.logging\n"
            "print(huggingface_hub.utils.are_progress_bars_disabled())")
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "False" and not done.stderr, done.stderr


@pytest.mark.parametrize("name", LONG)
def test_every_long_command_takes_no_progress(name):
    leaves = _leaves(name)
    assert leaves and all("--no-progress" in p.format_help() for _, p in leaves), [
        path for path, p in leaves if "--no-progress" not in p.format_help()]


def test_no_progress_silences_the_bars_of_a_build_command_on_a_terminal(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["phantoms", "cxr", "--out", str(tmp_path / "shown"), "--patients", "2", "--image-size", "64"]) == 0
    assert "phantom patients" in capsys.readouterr().err  # the bar a person watching sees
    assert main(["phantoms", "cxr", "--out", str(tmp_path / "silent"), "--patients", "2", "--image-size", "64",
                 "--no-progress"]) == 0
    assert "phantom patients" not in capsys.readouterr().err


def test_quiet_silences_our_bars_and_puts_the_libraries_back():
    pytest.importorskip("transformers")
    hub = pytest.importorskip("huggingface_hub.utils")
    assert not hub.are_progress_bars_disabled()
    with quiet():
        assert progress_bar(range(2)).disable and hub.are_progress_bars_disabled()
    assert not hub.are_progress_bars_disabled()


@pytest.mark.slow
def test_no_progress_shows_no_loading_bar_of_a_local_model(tmp_path: Path):
    pytest.importorskip("transformers")
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
