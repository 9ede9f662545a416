"""The build options families share, declared once (issue 38): one model option, ``--llm`` with ``--llm-cache``
and ``--allow-remote-data``, for every family whose builder asks a model for text; each family's old name still
works, with a one-line note."""

from __future__ import annotations

import pytest

from medtemporal import registry
from medtemporal.cli import parser

OLD = {"mi-cxr": "text", "eltlm": "question", "3d-rad": "qa", "temmed": "vqa"}
"""The names the model option had before ``--llm`` (``--text-model``, ``--text-cache`` ...)."""


def _build_options(family: str) -> dict[str, str]:
    sub = parser("build")._subparsers._group_actions[0].choices["build"]
    bp = sub._subparsers._group_actions[0].choices[family]
    return {flag: action.dest for action in bp._actions for flag in action.option_strings}


def test_every_family_that_asks_a_model_for_text_has_the_one_llm_group():
    with_llm = {e.name for e in registry.entries("benchmark") if "--llm" in _build_options(e.name)}
    assert set(OLD) <= with_llm
    for family in with_llm:
        options = _build_options(family)
        assert options["--llm"] == "llm" and options["--llm-cache"] == "llm_cache", family
        assert options["--allow-remote-data"] == "allow_remote_data", family
        assert not any(flag.endswith("-model") and flag not in {f"--{OLD.get(family)}-model"} for flag in options), \
            (family, "a model option under another name")


@pytest.mark.parametrize("family", sorted(OLD))
def test_the_old_names_still_work_with_one_note_each(family, tmp_path, capsys):
    p = parser("build")
    required = ["--chexpert-plus", str(tmp_path)] if family == "temmed" else []
    args = p.parse_args(["build", family, "--out", str(tmp_path), *required, f"--{OLD[family]}-model", "baseline:random",
                         f"--{OLD[family]}-cache", str(tmp_path / "c.sqlite")])
    assert args.llm == "baseline:random" and args.llm_cache == tmp_path / "c.sqlite"
    notes = capsys.readouterr().err.strip().splitlines()
    assert notes == [f"medtemporal: note: --{OLD[family]}-model is deprecated; use --llm (the same option).",
                     f"medtemporal: note: --{OLD[family]}-cache is deprecated; use --llm-cache (the same option)."]
    args = p.parse_args(["build", family, "--out", str(tmp_path), *required, "--llm", "baseline:random"])
    assert args.llm == "baseline:random" and args.llm_cache is None and not capsys.readouterr().err
    help_text = p._subparsers._group_actions[0].choices["build"]._subparsers._group_actions[0].choices[family] \
        .format_help()
    assert "--llm URI" in help_text and f"--{OLD[family]}-model" not in help_text
