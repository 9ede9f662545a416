"""Issue 42 §9–11: a run folder records every input that shapes its answers (image root, model identity and
options, name) and refuses to resume or skip when one changed; a set checks every benchmark before its first
request."""

from __future__ import annotations

import json
import shutil

import pytest
from helpers.tiny import make_tiny_benchmark

from medtemporal.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::medtemporal.errors.UndefinedMetricWarning")


def _one_sentence(text: str) -> str:
    line = text.strip().splitlines()[-1]
    assert line.startswith("medtemporal: error: ") and line.endswith(".") and ". " not in line, line
    return line


def _logs(*runs):
    return [(r / "predictions.jsonl").read_bytes() for r in runs]


def test_a_run_records_its_image_root_and_refuses_to_resume_on_another(fake, tmp_path, capsys):
    bench = make_tiny_benchmark(tmp_path / "b", n=3)
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "b" / "data", copy)
    out = tmp_path / "run"
    args = ["run", str(bench), "--model", fake.uri(), "--out", str(out), "--no-progress", "--no-cache"]
    assert main([*args, "--image-root", str(copy), "--limit", "2"]) == 0
    assert json.loads((out / "config.json").read_text())["image_root"] == str(copy.resolve())
    before = _logs(out)
    capsys.readouterr()
    assert main([*args, "--limit", "3"]) == 2  # the benchmark's own images now: the answers would mix
    line = _one_sentence(capsys.readouterr().err)
    assert "image root" in line and str(copy.resolve()) in line and "--out" in line
    assert _logs(out) == before  # nothing written, nothing lost
    assert main([*args, "--image-root", str(copy), "--limit", "3"]) == 0  # the same root resumes
    assert "1 answered, 2 already done" in capsys.readouterr().out
    # the benchmark's own root given explicitly is the benchmark's images: recorded as none
    other = tmp_path / "own"
    assert main(["run", str(bench), "--model", fake.uri(), "--out", str(other), "--no-progress", "--no-cache",
                 "--image-root", str(tmp_path / "b" / "data")]) == 0
    assert json.loads((other / "config.json").read_text())["image_root"] is None


def test_a_run_given_another_name_is_refused_and_resumes_under_its_own(fake, tmp_path, capsys):
    bench = make_tiny_benchmark(tmp_path / "b", n=3)
    out = tmp_path / "run"
    args = ["run", str(bench), "--model", fake.uri(), "--out", str(out), "--no-progress", "--no-cache"]
    assert main([*args, "--name", "first", "--limit", "2"]) == 0
    capsys.readouterr()
    assert main([*args, "--name", "second"]) == 2
    line = _one_sentence(capsys.readouterr().err)
    assert "'first'" in line and "'second'" in line
    assert main(args) == 0 and json.loads((out / "config.json").read_text())["name"] == "first"


@pytest.fixture
def two_done(fake, tmp_path, capsys):
    """Two benchmarks run once into ``runs/``; the command, and the run folders."""
    first, second = make_tiny_benchmark(tmp_path / "a", n=3), make_tiny_benchmark(tmp_path / "b", n=2)
    out = tmp_path / "runs"
    args = ["run", str(first), str(second), "--model", fake.uri(), "--out", str(out), "--no-progress",
            "--no-cache"]
    assert main(args) == 0
    assert main(args) == 0
    assert capsys.readouterr().out.count("already done (finished and scored), skipped.") == 2
    return args, [out / "bench", out / "bench-2"]


@pytest.mark.parametrize("change, named", [
    (["--max-pixels", "4096"], "model.identity"),
    (["--option", 'extra_body={"top_k": 3}'], "model.identity"),
    (["--image-root", "COPY"], "image root"),
    (["--name", "renamed"], "named"),
])
def test_several_benchmarks_run_again_skip_only_the_same_run_and_refuse_a_changed_one(
        two_done, tmp_path, capsys, change, named):
    args, runs = two_done
    shutil.copytree(tmp_path / "a" / "data", tmp_path / "copy")  # the same pictures, another folder
    change = [str(tmp_path / "copy") if c == "COPY" else c for c in change]
    before = _logs(*runs)
    assert main([*args, *change]) == 2
    captured = capsys.readouterr()
    assert "skipped." not in captured.out
    assert named in _one_sentence(captured.err)
    assert _logs(*runs) == before
    assert main(args) == 0  # the first command still finds both done
    assert capsys.readouterr().out.count("skipped.") == 2


def test_an_eval_set_checks_every_benchmark_before_the_first_request(fake, tmp_path, capsys):
    make_tiny_benchmark(tmp_path / "a", n=3)
    make_tiny_benchmark(tmp_path / "b", n=2)
    evalset = tmp_path / "set.yaml"
    bad = {
        "protocol: no-such-protocol": "no-such-protocol",
        "tasks: [NOPE]": "NOPE",
        "protocol_options: {bogus: 1}": "bogus",
        "limit: -3": "limit",
    }
    for setting, named in bad.items():
        evalset.write_text(f"model: {fake.uri()}\nout: runs\nbenchmarks:\n  - a/bench\n  - path: b/bench\n"
                           f"    {setting}\n")
        fake.reset()
        assert main(["run", str(evalset), "--no-progress", "--no-cache"]) == 2, setting
        line = capsys.readouterr().err.strip().splitlines()[-1]  # the registry's own words for an unknown name
        assert line.startswith("medtemporal: error: ") and named in line and "b/bench" in line, line
        assert sum(fake.stats()["counts"].values()) == 0 and not (tmp_path / "runs" / "bench").exists()


def test_the_report_shows_the_images_the_run_read_from_its_own_root(fake, tmp_path):
    bench = make_tiny_benchmark(tmp_path / "b", n=2)
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "b" / "data", copy)
    shutil.rmtree(tmp_path / "b" / "data")  # only the run's root holds the images now
    run = tmp_path / "run"
    assert main(["run", str(bench), "--model", fake.uri(), "--out", str(run), "--image-root", str(copy),
                 "--no-progress", "--no-cache"]) == 0
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "assets" / "items-0.js").read_text(encoding="utf-8")
    items = json.loads(text[text.index(",") + 1:-2])
    assert all(image[0] is not None for item in items for image in item["images"])  # each made into a thumbnail
