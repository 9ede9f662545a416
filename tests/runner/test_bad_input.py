"""No traceback, ever (issue 15, points 9-12): each bad input gets one sentence on stderr and exit status 2."""

import json
import sqlite3

import pytest
from helpers.tiny import make_tiny_benchmark

from medtemporal.benchmark import ITEMS, MANIFEST
from medtemporal.cli import main
from medtemporal.backends.cache import ResponseCache
from medtemporal.runner import run


def _one_error(capsys, *needles):
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("medtemporal: error:") and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def bench(tmp_path):
    return make_tiny_benchmark(tmp_path, n=3)


def _run(bench, out, *extra, model="baseline:random"):
    return main(["run", str(bench), "--model", model, "--out", str(out), "--no-progress", *extra])


# --- point 9: a corrupt cache ---------------------------------------------------------------------------------------

def test_a_cache_of_random_bytes_names_the_file_and_the_way_out(fake, bench, tmp_path, capsys):
    cache = tmp_path / "c.sqlite"
    cache.write_bytes(bytes(range(256)) * 8)
    assert _run(bench, tmp_path / "run", "--cache", str(cache), model=fake.uri()) == 2
    _one_error(capsys, str(cache), "--no-cache", "delete it")
    assert _run(bench, tmp_path / "run", "--no-cache", model=fake.uri()) == 0


def test_a_truncated_cache_is_one_sentence(fake, bench, tmp_path, capsys):
    cache = tmp_path / "c.sqlite"
    with ResponseCache(cache) as c:
        for k in range(300):
            c._db.execute("INSERT INTO responses VALUES (?, ?, 0)", (f"k{k}", json.dumps({"text": "x" * 500})))
    data = cache.read_bytes()
    cache.write_bytes(data[: len(data) // 3])
    assert _run(bench, tmp_path / "run", "--cache", str(cache), model=fake.uri()) == 2
    _one_error(capsys, str(cache), "--no-cache")


def test_a_bad_cache_row_is_a_miss_and_is_replaced(fake, bench, tmp_path):
    cache = tmp_path / "c.sqlite"
    first = run(bench, fake.uri(), tmp_path / "a", cache_path=cache, progress=False)
    assert first.requests == 3
    db = sqlite3.connect(cache)
    rows = [r[0] for r in db.execute("SELECT key FROM responses")]
    for key, bad in zip(rows, ['{"text": ', '[1, 2]', '{"no_such_field": 1}']):
        db.execute("UPDATE responses SET response = ? WHERE key = ?", (bad, key))
    db.commit()
    db.close()
    second = run(bench, fake.uri(), tmp_path / "b", cache_path=cache, progress=False)
    assert (second.done, second.requests, second.cache_hits) == (3, 3, 0)
    third = run(bench, fake.uri(), tmp_path / "c", cache_path=cache, progress=False)
    assert (third.requests, third.cache_hits) == (0, 3)


# --- point 10: bytes that are not UTF-8 -------------------------------------------------------------------------------

BAD = b"\xff\xfe\x80 not utf-8 \xc3\x28\n"


@pytest.mark.parametrize("target", ["items", "manifest", "prompt", "predictions", "config", "scores"])
def test_non_utf8_in_any_file_the_cli_reads_is_one_sentence_naming_it(bench, tmp_path, capsys, target):
    out = tmp_path / "run"
    assert _run(bench, out) == 0
    capsys.readouterr()
    path = {"items": bench / ITEMS, "manifest": bench / MANIFEST, "prompt": tmp_path / "p.txt",
            "predictions": out / "predictions.jsonl", "config": out / "config.json", "scores": out / "scores.json"}[target]
    path.write_bytes(BAD)
    if target == "prompt":
        assert _run(bench, tmp_path / "r2", "--prompt", f"mcq_direct={path}") == 2
    elif target == "scores":
        assert main(["report", str(out)]) == 2
    elif target == "config":
        assert main(["score", str(out)]) == 2
    else:
        assert _run(bench, out) == 2
    _one_error(capsys, str(path))


def test_runs_list_marks_a_bad_folder_and_lists_the_rest(bench, tmp_path, capsys):
    for name in ("good", "bad", "worse"):
        assert _run(bench, tmp_path / "runs" / name) == 0
    (tmp_path / "runs" / "bad" / "predictions.jsonl").write_bytes(BAD * 3)
    (tmp_path / "runs" / "bad" / "config.json").write_bytes(BAD)
    (tmp_path / "runs" / "worse" / "config.json").write_text('{"model": "not a mapping", "benchmark": 7}')
    capsys.readouterr()
    assert main(["runs", "list", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    rows = {line.split(" | ")[0].strip("| ").rsplit("/", 1)[-1]: line for line in out.splitlines()[2:]}
    assert set(rows) == {"good", "bad", "worse"}
    assert "finished" in rows["good"] and "3/3" in rows["good"]
    assert "unreadable" in rows["bad"] and "unreadable" in rows["worse"]


# --- points 11 and 12: options checked at the boundary -------------------------------------------------------------

@pytest.mark.parametrize("args, needle", [
    (["--temperature", "nan"], "--temperature"),
    (["--temperature", "-1"], "--temperature"),
    (["--temperature", "inf"], "--temperature"),
    (["--timeout", "nan"], "--timeout"),
    (["--timeout", "0"], "--timeout"),
    (["--max-tokens", "-5"], "--max-tokens"),
    (["--top-p", "1.5"], "--top-p"),
    (["--top-p", "nan"], "--top-p"),
    (["--concurrency", "0"], "--concurrency"),
    (["--attempts", "0"], "--attempts"),
    (["--limit", "-1"], "--limit"),
    (["--max-errors", "-1"], "--max-errors"),
    (["--max-pixels", "-1"], "--max-pixels"),
])
def test_numeric_options_are_checked_before_anything_runs(bench, tmp_path, capsys, args, needle):
    assert _run(bench, tmp_path / "run", *args) == 2
    _one_error(capsys, needle)
    assert not (tmp_path / "run" / "predictions.jsonl").exists()


@pytest.mark.parametrize("args, needle", [(["--confidence", "nan"], "--confidence"),
                                          (["--confidence", "1"], "--confidence"),
                                          (["--resamples", "0"], "--resamples")])
def test_score_options_are_checked(bench, tmp_path, capsys, args, needle):
    assert _run(bench, tmp_path / "run") == 0
    capsys.readouterr()
    assert main(["score", str(tmp_path / "run"), *args]) == 2
    _one_error(capsys, needle)


def test_out_naming_a_file_is_one_sentence(bench, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert _run(bench, tmp_path / "file") == 2
    _one_error(capsys, "is a file")
    assert _run(bench, tmp_path / "run") == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "file")]) == 2
    _one_error(capsys, "is a file")
    assert _run(bench, tmp_path / "file" / "run") == 2  # under a file
    _one_error(capsys, "cannot be created")
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "file" / "r")]) == 2
    _one_error(capsys, "cannot be created")
    assert (tmp_path / "file").read_text() == "x"


@pytest.mark.parametrize("model, needle", [
    ("openai+http://127.0.0.1:99999/v1:m", "port"),
    ("openai+http://127.0.0.1:0/v1:m", "port"),
    ("openai+http://[::1:8000/v1:m", "does not name an endpoint"),
])
def test_bad_endpoints_are_one_sentence(bench, tmp_path, capsys, model, needle):
    assert _run(bench, tmp_path / "run", model=model) == 2
    _one_error(capsys, needle)


@pytest.mark.parametrize("url, needle", [("http://127.0.0.1:8000/v1\t", "'\\t'"),
                                         ("http://127.0.0.1:70000/v1", "port"),
                                         ("ftp://127.0.0.1/v1", "http://"),
                                         ("http:///v1", "no host")])
def test_a_bad_openai_base_url_is_one_sentence(bench, tmp_path, capsys, monkeypatch, url, needle):
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert _run(bench, tmp_path / "run", model="openai:gpt-4o") == 2
    _one_error(capsys, "OPENAI_BASE_URL", needle)


def test_a_stray_dollar_in_a_prompt_template_is_one_sentence(bench, tmp_path, capsys):
    prompt = tmp_path / "p.txt"
    prompt.write_text("Question: $question\nOptions:\n$options\nIt costs $ 5.\n")
    assert _run(bench, tmp_path / "run", "--prompt", f"mcq_direct={prompt}") == 2
    _one_error(capsys, str(prompt), "line 4", "$$")
    prompt.write_text("Question: $question\nOptions:\n$options\nIt costs $$5.\n")
    assert _run(bench, tmp_path / "run", "--prompt", f"mcq_direct={prompt}") == 0
