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


def test_every_option_that_takes_a_value_names_it_as_the_others_do() -> None:
    """A value is named for what it is (N, FILE, DIR, URI, LIST ...), never the option's name in capitals
    (``--judge-max-tokens JUDGE_MAX_TOKENS``); a default in the help is written ``(default X)`` or, in words,
    ``(default: ...)``."""
    unnamed, defaults = [], []
    for path, p in _parsers(parser(), "medtemporal"):
        for action in p._actions:
            if not action.option_strings or action.nargs == 0 or action.choices is not None:
                continue
            if action.metavar is None:
                unnamed.append(f"{path} {action.option_strings[0]}")
            if re.search(r"\bdefaults? is\b|\(defaults?=", action.help or ""):
                defaults.append(f"{path} {action.option_strings[0]}")
    assert not unnamed and not defaults, (unnamed, defaults)


def _parsers(p: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, p
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def test_the_top_level_help_describes_the_tool_not_the_module() -> None:
    text = parser().format_help()
    assert "temporal medical reasoning" in text and "sub-command per module" not in text and "``" not in text
    assert not [path for path, p in _parsers(parser(), "medtemporal") if "%%" in p.format_help()]  # unformatted
