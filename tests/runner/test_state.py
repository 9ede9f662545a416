"""State that must not lie (issue 15, points 7-8): a half-written benchmark or report set is never taken for a
whole one."""

import json

import pytest
from helpers.tiny import make_tiny_benchmark, tiny_items

from medtemporal.benchmark import ITEMS, MANIFEST, load
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.report import READY, STAGING, recover_report, write_report
from medtemporal.runner import run
from medtemporal.schema import write_jsonl
from medtemporal.writes import OWNED


def _build_killed_between_items_and_manifest(bench, n):
    """What `medtemporal build --overwrite` killed after writing items.jsonl leaves: new items, old manifest."""
    write_jsonl(bench / ITEMS, [i.model_copy(update={"question": i.question + " (v2)"}) for i in tiny_items(n)])


def test_items_that_do_not_match_the_manifest_are_refused_in_one_sentence(tmp_path, capsys):
    bench = make_tiny_benchmark(tmp_path, n=4)
    run(bench, "baseline:random", tmp_path / "run", progress=False)
    _build_killed_between_items_and_manifest(bench, 6)
    with pytest.raises(InvalidInputError, match="does not match the items_sha256") as err:
        load(bench)
    assert "--overwrite" in str(err.value)
    # neither a resume nor scoring mixes the two item sets
    assert main(["run", str(bench), "--model", "baseline:random", "--out", str(tmp_path / "run")]) == 2
    assert main(["score", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.count("medtemporal: error:") == 2 and "Traceback" not in err
    assert len((tmp_path / "run" / "predictions.jsonl").read_text().splitlines()) == 4


def test_a_run_refuses_to_resume_once_its_benchmark_items_changed(tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=4)
    run(bench, "baseline:random", tmp_path / "run", limit=2, progress=False)
    make_tiny_benchmark(tmp_path, n=5)  # a complete rebuild with other items
    with pytest.raises(InvalidInputError, match="another build of the benchmark"):
        run(bench, "baseline:random", tmp_path / "run", progress=False)
    assert len((tmp_path / "run" / "predictions.jsonl").read_text().splitlines()) == 2


def test_an_empty_benchmark_says_so(tmp_path, capsys):
    bench = make_tiny_benchmark(tmp_path, n=2)
    (bench / ITEMS).write_text("")
    manifest = json.loads((bench / MANIFEST).read_text())
    manifest["items_sha256"] = None
    (bench / MANIFEST).write_text(json.dumps(manifest))
    assert main(["run", str(bench), "--model", "baseline:random", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "is empty" in err and "predictions" not in err and err.count("\n") == 1


@pytest.fixture
def two_runs(tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=4)
    run(bench, "baseline:constant-A", tmp_path / "a", progress=False)
    run(bench, "baseline:constant-B", tmp_path / "b", progress=False)
    return tmp_path / "a", tmp_path / "b"


def _model_in(folder):
    return {name: ("constant-A" in (folder / name).read_text()) for name in ("report.md", "report.html", "report.csv")}


def test_a_report_killed_while_writing_leaves_the_old_set_whole(two_runs, tmp_path, monkeypatch):
    a, b = two_runs
    write_report([a], tmp_path / "out")
    assert set(_model_in(tmp_path / "out").values()) == {True}
    import medtemporal.report as report

    def die(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl-C (or a kill) while the new set is being written

    monkeypatch.setattr(report, "html_page", lambda *a, **k: "<html></html>")
    monkeypatch.setattr(report.os, "fsync", die)
    with pytest.raises(KeyboardInterrupt):
        write_report([b], tmp_path / "out")
    assert set(_model_in(tmp_path / "out").values()) == {True}  # all still the old run's
    leftovers = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert leftovers == [OWNED, "assets", "report.csv", "report.html", "report.md"]


def test_a_set_killed_half_way_into_place_is_finished_and_a_partial_one_dropped(two_runs, tmp_path):
    a, b = two_runs
    out = tmp_path / "out"
    write_report([a], out)
    # killed after the commit point with one file moved: report.md is new, the others are still in .report.ready
    write_report([b], tmp_path / "new")
    (out / READY).mkdir()
    for name in ("report.html", "report.csv"):
        (tmp_path / "new" / name).rename(out / READY / name)
    (tmp_path / "new" / "report.md").replace(out / "report.md")
    assert set(_model_in(out).values()) == {True, False}  # mixed, as the issue found
    recover_report(out)
    assert set(_model_in(out).values()) == {False} and not (out / READY).exists()
    # killed before the commit point: the half-written staging folder is dropped, the set untouched
    (out / STAGING).mkdir()
    (out / STAGING / "report.md").write_text("partial")
    write_report([a], out)
    assert set(_model_in(out).values()) == {True} and not (out / STAGING).exists()
