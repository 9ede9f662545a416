"""The tracebacks and hangs of issue 32 §5, each now one sentence and a non-zero exit (or, for the symbolic link
loop, a build that goes on and calls the data credentialed): numeric options are bounded before anything is
allocated or started."""

from __future__ import annotations

import shutil

import pytest
from helpers.tiny import make_tiny_benchmark

from medtemporal.benchmark import load
from medtemporal.cli import main
from medtemporal.phantoms.cxr import write_cxr_phantoms


def _one_error(capsys, *needles: str) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("medtemporal: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def cxr(tmp_path_factory):
    return write_cxr_phantoms(tmp_path_factory.mktemp("cxr") / "p", patients=4, seed=0, image_size=64).root


@pytest.mark.parametrize("where", ["mimic-cxr-jpg/files", "mimic-ext-cxr-qba", "mimic-cxr-jpg/files/p1x"])
def test_a_symbolic_link_loop_under_the_mimic_root_is_data_of_unknown_provenance(cxr, tmp_path, where, capsys):
    root = tmp_path / "cxr"
    shutil.copytree(cxr, root, symlinks=True)
    folder = root / where
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "loop").symlink_to("loop")  # a link that leads back to itself
    (folder / "dangling.jpg").symlink_to("nowhere.jpg")
    argv = ["build", "mi-cxr", "--mimic-cxr-jpg", str(root / "mimic-cxr-jpg"), "--qba", str(root / "mimic-ext-cxr-qba")]
    assert main([*argv, "--out", str(tmp_path / "b")]) == 0, capsys.readouterr().err
    assert load(tmp_path / "b").manifest.licence == "credentialed"  # no longer the phantom it was


@pytest.mark.parametrize(("argv", "needles"), [
    (["phantoms", "ct-rate", "--patients", "1", "--shape", "100000,100000,100000"], ("--shape", "PiB of memory")),
    (["phantoms", "ct-rate", "--patients", "1", "--shape", "8000,8000,4000"], ("--shape", "TiB of memory")),
    (["phantoms", "chexpert-plus", "--patients", "2", "--image-size", "1000000"], ("--image-size", "16 to 4096")),
    (["phantoms", "skillqa", "--instances", "1", "--image-size", "100000"], ("--image-size", "48 to 4096")),
    (["phantoms", "cxr", "--patients", "100000000000"], ("--patients", "1 to 1000000")),
    (["phantoms", "cxr", "--patients", "2", "--seed", "-1"], ("--seed", "0 to 4294967295, not -1")),
])
def test_phantom_sizes_and_seeds_are_checked_before_anything_is_allocated(tmp_path, capsys, argv, needles):
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    _one_error(capsys, *needles)
    assert not (tmp_path / "out").exists()


def test_seeds_resamples_and_repeats_are_bounded_and_a_folder_in_a_files_place_is_named(tmp_path, capsys):
    bench = make_tiny_benchmark(tmp_path / "tiny", n=3)
    run = tmp_path / "run"
    assert main(["run", str(bench), "--model", "baseline:random", "--out", str(run), "--no-progress"]) == 0
    capsys.readouterr()
    for argv, needle in (
        (["score", str(run), "--resamples", "-5"], "1 to 100000, not -5"),
        (["score", str(run), "--resamples", "100000000"], "1 to 100000, not 100000000"),  # ran unbounded before
        (["score", str(run), "--seed", "-1"], "--seed"),
        (["compare", str(run), str(run), "--resamples", "-1"], "--resamples"),
        (["compare", str(run), str(run), "--seed", "-2"], "--seed"),
        (["build", "tiny", "--seed", "-1", "--out", str(tmp_path / "b")], "--seed"),
        (["run", str(bench), "--model", "baseline:random", "--out", str(tmp_path / "r2"), "--repeats", "10000000"],
         "--repeats must be a whole number from 1 to 1000"),
    ):
        assert main(argv) == 2, argv
        _one_error(capsys, needle)
    (run / "scores.json").unlink()
    (run / "scores.json").mkdir()
    assert main(["score", str(run)]) == 2
    _one_error(capsys, "scores.json is a folder")
    other = tmp_path / "other"
    (other / "predictions.jsonl").mkdir(parents=True)
    assert main(["run", str(bench), "--model", "baseline:random", "--out", str(other), "--no-progress"]) == 2
    _one_error(capsys, "predictions.jsonl is a folder")


def test_an_xlsx_that_is_not_a_workbook_is_one_sentence(tmp_path, capsys):
    bench = make_tiny_benchmark(tmp_path / "tiny", n=2)
    (tmp_path / "MyVLM_tiny.xlsx").write_bytes(b"index\tprediction\n0\tA\n")  # a TSV saved under .xlsx
    assert main(["import-predictions", str(bench), str(tmp_path / "MyVLM_tiny.xlsx"), "--from", "vlmevalkit",
                 "--out", str(tmp_path / "run")]) == 2
    _one_error(capsys, "MyVLM_tiny.xlsx is not a readable Excel workbook (BadZipFile")
