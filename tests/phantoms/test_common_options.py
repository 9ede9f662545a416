"""``--out``, ``--seed`` and ``--overwrite`` are added once, by ``medtemporal phantoms``, to every registered kind
(issue 38); ``--overwrite`` replaces that kind's phantoms and nothing else."""

from __future__ import annotations

import argparse

import pytest

from medtemporal import registry
from medtemporal.cli import main
from medtemporal.cli import _phantoms
from medtemporal.provenance import PHANTOM_MANIFEST


def test_every_kind_gets_out_seed_and_overwrite_from_the_command():
    parser = argparse.ArgumentParser()
    _phantoms.add(parser.add_subparsers())
    kinds = parser._subparsers._group_actions[0].choices["phantoms"]._subparsers._group_actions[0].choices
    assert set(kinds) == {e.name for e in registry.entries("phantom")}
    for name, sub in kinds.items():
        flags = {flag for action in sub._actions for flag in action.option_strings}
        assert {"--out", "--seed", "--overwrite"} <= flags, name


@pytest.mark.parametrize("argv", [["ct-rate", "--patients", "2", "--no-volumes"],
                                  ["skillqa", "--instances", "2", "--image-size", "48"]])
def test_overwrite_replaces_a_kinds_own_phantoms_and_nothing_else(tmp_path, capsys, argv):
    out = tmp_path / "out"
    assert main(["phantoms", *argv, "--out", str(out), "--seed", "1", "--no-progress"]) == 0
    first = (out / PHANTOM_MANIFEST).read_text()
    capsys.readouterr()
    assert main(["phantoms", *argv, "--out", str(out), "--no-progress"]) == 2
    assert "pass --overwrite to replace the phantoms in it" in capsys.readouterr().err
    assert main(["phantoms", *argv, "--out", str(out), "--seed", "1", "--overwrite", "--no-progress"]) == 0
    assert (out / PHANTOM_MANIFEST).read_text() == first
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("the user's")
    capsys.readouterr()
    assert main(["phantoms", *argv, "--out", str(mine), "--overwrite", "--no-progress"]) == 2
    assert "is not an empty folder; choose a new --out." in capsys.readouterr().err
    assert (mine / "notes.txt").read_text() == "the user's"
