"""Nothing of the user's is deleted (issue 32 §4): ``--overwrite`` and a new report replace only what medtemporal
wrote, which it knows by the list it keeps in the folder (`medtemporal.writes.OWNED`) or, for a benchmark, by its
manifest; a folder it did not write is refused in one sentence. Writers of one file use temporary names of their
own (§5)."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest
from helpers.kill import CHILD
from helpers.tiny import make_tiny_benchmark

from medtemporal.cli import main
from medtemporal.writes import OWNED, temporary


@pytest.fixture
def bench(tmp_path):
    return make_tiny_benchmark(tmp_path / "tiny", n=3)


def _one_error(capsys, *needles):
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("medtemporal: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.parametrize("fmt", ["lmms-eval", "hf", "inspect"])
def test_export_overwrite_replaces_its_own_folder_and_refuses_one_holding_a_users_file(bench, tmp_path, capsys, fmt):
    out = tmp_path / "export"
    export = ["export", str(bench), "--format", fmt, "--out", str(out)]
    assert main(export) == 0
    ours = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert OWNED in ours
    assert main([*export, "--overwrite"]) == 0  # its own files: replaced
    (out / "notes.txt").write_text("my notes")
    assert main([*export, "--overwrite"]) == 2
    _one_error(capsys, "notes.txt", "medtemporal did not write it")
    assert (out / "notes.txt").read_text() == "my notes"
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "data.parquet").write_text("a folder of the user's, never exported to")
    assert main(["export", str(bench), "--format", fmt, "--out", str(mine), "--overwrite"]) == 2
    _one_error(capsys, "data.parquet")
    assert (mine / "data.parquet").read_text() == "a folder of the user's, never exported to"


def test_build_never_replaces_files_in_a_folder_it_did_not_build(tmp_path, capsys):  # ``tiny``: helpers.tiny
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "items.jsonl").write_text('{"mine": true}\n')
    for extra in ([], ["--overwrite"]):
        assert main(["build", "tiny", "--out", str(folder), *extra]) == 2
        _one_error(capsys, str(folder), "no readable manifest")
        assert (folder / "items.jsonl").read_text() == '{"mine": true}\n'


def test_a_report_never_replaces_a_users_file_in_its_folder(bench, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["run", str(bench), "--model", "baseline:random", "--out", str(run), "--no-progress"]) == 0
    out = tmp_path / "report"
    report = ["report", str(run), "--out", str(out)]
    assert main(report) == 0 and main(report) == 0  # its own set: replaced
    (out / "assets" / "my-figure.svg").write_text("<svg/>")
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    for argv in (report, [*report, "--single-file"]):
        assert main(argv) == 2
        _one_error(capsys, "my-figure.svg", "medtemporal did not write it")
        assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == before
    fresh = tmp_path / "theirs"
    fresh.mkdir()
    (fresh / "report.html").write_text("<p>a page of the user's</p>")
    assert main(["report", str(run), "--out", str(fresh)]) == 2
    _one_error(capsys, "report.html")
    assert (fresh / "report.html").read_text() == "<p>a page of the user's</p>"


def test_writers_of_one_file_never_share_a_temporary_name(bench, tmp_path):
    target = tmp_path / "x.parquet"
    assert temporary(target) != temporary(target)
    stale = target.with_name("x.parquet.999999999-dead.tmp")  # a writer no longer running
    stale.write_text("half")
    temporary(target)
    assert not stale.exists()
    argv = [sys.executable, "-c", CHILD, "export", str(bench), "--format", "parquet", "--out", str(target),
            "--overwrite"]
    children = [subprocess.Popen(argv, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    errors = [child.communicate(timeout=300)[1] for child in children]
    assert [child.returncode for child in children] == [0] * 4, errors
    assert len(pd.read_parquet(target)) == 3 and not list(tmp_path.glob("*.tmp"))


def test_a_report_an_earlier_version_wrote_is_replaced_and_a_users_file_beside_it_kept(bench, tmp_path):
    run = tmp_path / "run"
    assert main(["run", str(bench), "--model", "baseline:random", "--out", str(run), "--no-progress"]) == 0
    assert main(["report", str(run)]) == 0
    (run / OWNED).unlink()  # as a report written before reports listed their files leaves the run folder
    (run / "notes.txt").write_text("my notes")
    assert main(["report", str(run)]) == 0
    assert (run / "notes.txt").read_text() == "my notes"
    assert "notes.txt" not in (run / OWNED).read_text() and "report.html" in (run / OWNED).read_text()
