"""Every command the README and docs/*.md give for phantom data works as written.

Each shell code block of those files (found by `bench/doc_blocks.py`, the rule `bench/docs_figures.py` shares)
is either run — its lines in order, in a fresh folder per file, with `medtemporal.cli.main` and phantom sizes
made small — and every line must exit 0, or skipped for a reason
listed in `SKIPS` (a real dataset, a network model or GPU, Ray, an install step, a synopsis with
placeholders). A block that fits neither fails the test, so a new block in the docs is either runnable here
or names why not. ``medtemporal view`` serves until stopped, so its lines run as ``view --help`` once the
run folders they name (or folders holding them) exist.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from doc_blocks import DOCS, Block, blocks
from helpers.families import FAMILIES

from medtemporal.cli import main
from medtemporal.runs import find_runs

SKIPS: list[tuple[str, str]] = [
    (r"^(make|pip|ray|export|\.venv/|python)\b", "installs, sets up, or runs the test suite or a bench script"),
    (r"^(time )?medtemporal demo\b", "the whole demo: `make demo` and tests/test_cli.py run it"),
    (r"^medtemporal nltk-data\b", "fetches nltk data over the network"),
    (r"(^|\s)/data/|/models/", "needs a real dataset or model weights on disk"),
    (r"\b(URI|BENCH|RUN|DIR|FILE|MODEL)\b|\[--", "a synopsis with placeholders, not a command"),
    (r"^medtemporal import-predictions\b", "needs the result files another tool (VLMEvalKit, lmms-eval) wrote"),
    (r"--official (?!phantoms/)", "needs the authors' released files"),
    (r"--(model|judge|green|llm)[ =](openai|hf|vllm|encoder)[:+]|captioner=openai",
     "needs a network model or a GPU"),
    (r"--ray\b", "needs a Ray cluster"),
    (r"--model (?![a-z+]+:)[A-Za-z0-9.-]+(@\S+)?(\s|$)", "a registered model: needs its weights, a GPU or a server"),
    (r"^(?!(time )?medtemporal\b)", "not a medtemporal command (a file layout or printed output)"),
]
"""(pattern searched in each command line, why a block with such a line is not run here)."""

SMALL = {"cxr": ("--patients", 40, ["--image-size", "64"]), "chexpert-plus": ("--patients", 60, ["--image-size", "64"]),
         "ct-rate": ("--patients", 6, ["--shape", "40,40,16"]), "skillqa": ("--instances", 12, ["--image-size", "64"])}
"""Phantom kind → (size option, the most this test makes, options that shrink the files) for speed."""
CAPS = {"--test-size": 10}
"""Build options sized for the documented phantoms → the most this test's smaller ones take."""

PREPARE = {"audit.md": ["medtemporal phantoms cxr --patients 40 --out phantoms/cxr",
                        "medtemporal build mi-cxr --mimic-cxr-jpg phantoms/cxr/mimic-cxr-jpg "
                        "--qba phantoms/cxr/mimic-ext-cxr-qba --out benchmarks/mi-cxr"]}
"""What a file's commands assume was done before (as the README does it): run first."""

EXIT = {"audit": (0, 1)}
"""Commands whose documented exit status may be other than 0 (``audit``: 1 when a subtype is flagged)."""


def skip_reason(block: Block) -> str | None:
    """Why ``block`` is not run here, or None when it is."""
    for pattern, reason in SKIPS:
        if any(re.search(pattern, line) for line in block.commands):
            return reason
    return None


def argv(line: str) -> list[str]:
    """The arguments of one ``medtemporal`` line, comments dropped and phantom sizes made small."""
    args = shlex.split(line.removeprefix("time "), comments=True)[1:]
    if args[:1] == ["phantoms"] and args[1] in SMALL:
        option, most, shrink = SMALL[args[1]]
        k = args.index(option) + 1
        args[k] = str(min(int(args[k]), most))
        args += shrink
    for option, most in CAPS.items():
        if option in args:
            k = args.index(option) + 1
            args[k] = str(min(int(args[k]), most))
    if args[:1] == ["view"]:
        folders = [a for a in args[1:] if not a.startswith("-")]
        missing = [f for f in folders if not find_runs([Path(f)])]  # a run folder, or a folder that holds some
        assert not missing, f"`{line}` names run folders that the commands before it did not write: {missing}"
        args = ["view", "--help"]
    return args


def _run_line(line: str) -> None:
    args = argv(line)
    try:
        code = main(args)
    except SystemExit as exc:  # --help
        code = exc.code or 0
    assert code in EXIT.get(args[0], (0,)), f"`{line}` exited {code}"


ALL = [b for path in DOCS for b in blocks(path)]
RUN = {path.name: [b for b in blocks(path) if skip_reason(b) is None] for path in DOCS}


def test_every_shell_block_is_run_or_skipped_for_a_reason() -> None:
    assert len(ALL) > 15
    skipped = {b.name: skip_reason(b) for b in ALL if skip_reason(b)}
    run = [b.name for b in ALL if not skip_reason(b)]
    assert run and skipped  # both kinds exist; the reasons above are the list of what is not run here
    assert any(b.file == "README.md" and any(" phantoms ct-rate " in f" {c} " for c in b.commands) for b in ALL)
    for family in FAMILIES:  # every registered family has its build in the README
        assert any(f"medtemporal build {family} " in c for b in RUN["README.md"] for c in b.commands), family


@pytest.mark.slow
@pytest.mark.parametrize("doc", [name for name, runnable in RUN.items() if runnable])
def test_the_commands_of_a_doc_work_as_written_on_phantoms(doc: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(tmp_path / "cache.sqlite"))
    for line in PREPARE.get(doc, []):
        _run_line(line)
    for block in RUN[doc]:
        for line in block.commands:
            _run_line(line)
