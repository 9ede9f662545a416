"""A tenth family from ``medtemporal new-family``, as a plugin package on ``sys.path``: it passes the conformance
check as written and goes through build → run → score → report → audit with no file outside its folder edited
(issue 38). The scaffold's own tests pass too (slow: a pytest of their own)."""

from __future__ import annotations

import hashlib
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import medtemporal
from medtemporal.benchmark import load
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.runs import RunFolder
from medtemporal.testing import check_family

NAME = "toy-tenth"
SRC = Path(medtemporal.__file__).resolve().parent


def _tree(root: Path) -> dict[str, str]:
    """Relative path → sha256 of every file under ``root`` (caches left out)."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture
def tenth(tmp_path, monkeypatch):
    """The scaffolded family under ``tmp_path/plugins``, imported (registered) as a plugin package would be."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    assert main(["new-family", NAME, "--out", str(plugins), "--title", "Toy Tenth"]) == 0
    monkeypatch.syspath_prepend(str(plugins))
    monkeypatch.delitem(sys.modules, "toy_tenth", raising=False)
    importlib.import_module("toy_tenth")
    yield plugins / "toy_tenth"
    for module in [m for m in sys.modules if m == "toy_tenth" or m.startswith("toy_tenth.")]:
        sys.modules.pop(module)


def test_the_scaffold_passes_the_check_and_runs_end_to_end_with_no_edit_outside_its_folder(tenth, tmp_path, capsys):
    core = _tree(SRC)
    family = _tree(tenth)
    assert set(family) == {"__init__.py", "command.py", "reader.py", "phantom.py", "published.py",
                           "prompts/toy_tenth_direct.txt", "tests/test_toy_tenth.py"}
    checked = check_family(NAME, build=True)
    assert len(checked) == 13 and set(checked.values()) == {None}, checked
    capsys.readouterr()

    section = importlib.import_module("toy_tenth").demo(tmp_path / "demo", 12, 0)
    *steps, report_argv = section.commands()  # phantoms, build, a run of each baseline; then the report
    for argv in steps:
        assert main(argv) == 0, argv
    for run in section.runs:
        assert main(["score", str(run)]) == 0
    scored = {run: (run / "scores.json").stat().st_mtime_ns for run in section.runs}
    assert report_argv[0] == "report" and main(report_argv) == 0
    assert {run: (run / "scores.json").stat().st_mtime_ns for run in section.runs} == scored  # the report only read
    random, oracle = (RunFolder(run) for run in section.runs)  # the scaffold's DEMO_MODELS, in order
    assert oracle.scores().score("overall", "accuracy").value == 1.0
    assert 0.0 <= random.scores().score("overall", "accuracy").value < 1.0
    report = (section.report_dir / "report.md").read_text()
    assert "toy-tenth" in report and "baseline:oracle" in report
    bench = section.steps[0][section.steps[0].index("--out") + 1]
    assert load(bench).manifest.licence == "synthetic" and load(bench).manifest.audit["flagged"] == []
    assert main(["audit", bench]) == 0
    assert "change" in capsys.readouterr().out
    assert _tree(SRC) == core and _tree(tenth) == family  # nothing outside its folder, nor in it, was edited


def test_the_scaffolds_reader_refuses_a_bad_question_file_in_one_sentence(tenth, tmp_path):
    data = tmp_path / "data"
    assert main(["phantoms", NAME, "--patients", "3", "--out", str(data)]) == 0
    lines = (data / "questions.jsonl").read_text().splitlines()
    (data / "questions.jsonl").write_text(lines[0].replace('"answer": "', '"answer": "Z') + "\n")
    reader = importlib.import_module("toy_tenth.reader")
    with pytest.raises(InvalidInputError, match=r"questions.jsonl line 1: answer '.*' is not one of its options"):
        reader.read_questions(data)
    assert main(["build", NAME, "--data", str(tmp_path / "nowhere"), "--out", str(tmp_path / "b")]) == 2


def test_new_family_refuses_a_bad_name_and_an_existing_folder(tmp_path, capsys):
    assert main(["new-family", "Toy_Family", "--out", str(tmp_path)]) == 2
    assert "is not a family name" in capsys.readouterr().err and not any(tmp_path.iterdir())
    assert main(["new-family", "toy-x", "--out", str(tmp_path)]) == 0
    assert main(["new-family", "toy-x", "--out", str(tmp_path)]) == 2
    assert "exists already" in capsys.readouterr().err


@pytest.mark.slow
def test_the_scaffolds_own_tests_pass(tenth):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tenth.parent), str(SRC.parent)])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tenth / "tests")],
                          cwd=tenth.parent, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
