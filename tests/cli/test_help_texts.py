"""What users read in ``--help`` and ``medtemporal list`` names no internal reference (section signs, the papers'
internal numbers or file paths); paper citations belong in the docs and docstrings."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from medtemporal.cli import main, parser

INTERNAL = re.compile(r"§|seeds/|\b00\d\b|FACTS\.md|DESIGN\.md|issue #\d")


def _helps(p: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, str]]:
    yield path, p.format_help()
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _helps(sub, f"{path} {name}")


def test_no_help_text_shows_an_internal_reference() -> None:
    helps = dict(_helps(parser(), "medtemporal"))
    assert len(helps) > 20 and "medtemporal build temmed" in helps and "medtemporal phantoms ct-rate" in helps
    found = {path: INTERNAL.findall(text) for path, text in helps.items() if INTERNAL.search(text)}
    assert not found


@pytest.mark.parametrize("kind", ["benchmark", "backend", "protocol", "metric", "prompt", "extractor"])
def test_no_list_line_shows_an_internal_reference(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", kind]) == 0
    out = capsys.readouterr().out
    assert out.strip() and not [line for line in out.splitlines() if INTERNAL.search(line)]
