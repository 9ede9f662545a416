"""Replies that are not answers (issue 15, point 6): empty or null content is a failed attempt, retried and never
cached; a reply cut off at the token limit is kept, recorded with its finish_reason and counted as truncated."""

import json

from helpers.tiny import make_tiny_benchmark

from medtemporal.backends.base import Response
from medtemporal.benchmark import load
from medtemporal.report import write_report
from medtemporal.backends.cache import ResponseCache
from medtemporal.backends.session import RetryPolicy
from medtemporal.runner import run

FAST = RetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.05, timeout_s=2)


def _predictions(folder):
    return {p["item_id"]: p for p in map(json.loads, (folder / "predictions.jsonl").read_text().splitlines())}


def test_empty_and_null_replies_are_retried_never_cached_and_never_answers(fake, tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=4))
    q = [i.question for i in bench.items]
    fake.configure(faults=[{"kind": "empty", "match": q[0], "times": 1}, {"kind": "null", "match": q[1], "times": 1},
                           {"kind": "empty", "match": q[2], "times": 99}])
    cache = tmp_path / "c.sqlite"
    summary = run(bench.path, fake.uri(), tmp_path / "run", retry=FAST, cache_path=cache, progress=False)
    assert (summary.done, summary.errors) == (3, {"empty_reply": 1})
    assert "empty content" in summary.error_examples["empty_reply"]
    preds = _predictions(tmp_path / "run")
    for item in bench.items[:2]:  # answered on the second attempt
        assert preds[item.id]["raw_output"].startswith("The answer is") and preds[item.id]["finish_reason"] == "stop"
    assert preds[bench.items[2].id]["error"].startswith("empty_reply")
    with ResponseCache(cache) as c:
        assert len(c) == 3  # the empty replies were not cached
    # a rerun asks again only for the item that never answered, and the server now answers it
    fake.configure(faults=[])
    again = run(bench.path, fake.uri(), tmp_path / "run", retry=FAST, cache_path=cache, progress=False)
    assert (again.done, again.skipped_existing, again.n_errors, again.requests) == (1, 3, 0, 1)


def test_an_empty_reply_left_in_an_old_cache_is_asked_again(fake, tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=1))
    first = run(bench.path, fake.uri(), tmp_path / "a", cache_path=tmp_path / "c.sqlite", progress=False)
    assert first.requests == 1
    key = json.loads((tmp_path / "a" / "predictions.jsonl").read_text())["request_hash"]
    with ResponseCache(tmp_path / "c.sqlite") as c:
        c.put(key, Response("", 1, 0, "fake-vlm"))  # what older versions cached
    second = run(bench.path, fake.uri(), tmp_path / "b", cache_path=tmp_path / "c.sqlite", progress=False)
    assert (second.requests, second.cache_hits, second.done) == (1, 0, 1)


def test_a_length_cut_reply_is_kept_and_counted_as_truncated_everywhere(fake, tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=4))
    q = [i.question for i in bench.items]
    fake.configure(faults=[{"kind": "length", "match": q[1], "times": 9}, {"kind": "length", "match": q[3], "times": 9}])
    summary = run(bench.path, fake.uri(), tmp_path / "run", retry=FAST, no_cache=True, progress=False)
    assert (summary.done, summary.n_errors, summary.truncated, summary.requests) == (4, 0, 2, 4)
    assert "2 answers were cut off at the token limit" in str(summary)
    preds = _predictions(tmp_path / "run")
    assert [preds[i.id]["finish_reason"] for i in bench.items] == ["stop", "length", "stop", "length"]
    assert preds[bench.items[1].id]["raw_output"].endswith("Because the")
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert scores["counts"]["truncated"] == 2 and scores["counts"]["answered"] == 4
    write_report([tmp_path / "run"])
    md = (tmp_path / "run" / "report.md").read_text()
    header = next(line for line in md.splitlines() if line.startswith("| Run | Model"))
    row = md.splitlines()[md.splitlines().index(header) + 2].split(" | ")
    assert row[header.split(" | ").index("Truncated")] == "2"
    assert "<th>Truncated</th>" in (tmp_path / "run" / "report.html").read_text()
    csv_head = (tmp_path / "run" / "report.csv").read_text().splitlines()[:2]
    assert csv_head[0].split(",")[4] == "truncated" and csv_head[1].split(",")[4] == "2"


def test_a_reply_is_stored_once_and_one_past_the_stated_cap_fails_its_item(fake, tmp_path, monkeypatch):
    """Issue 32 §6: a 50 MB reply was stored twice per prediction (raw_output and the call's output), without a cap."""
    from medtemporal.backends import session

    monkeypatch.setattr(session, "REPLY_MAX_CHARS", 200_000)
    bench = load(make_tiny_benchmark(tmp_path, n=3))
    q = [i.question for i in bench.items]
    long, huge = "The answer is A. " + "x" * 100_000, "The answer is B. " + "y" * 300_000
    fake.configure(replies=[[q[0], long], [q[1], huge]])
    summary = run(bench.path, fake.uri(), tmp_path / "run", retry=FAST, cache_path=tmp_path / "c.sqlite",
                  progress=False)
    assert summary.done == 2 and summary.errors == {"reply_too_long": 1}
    assert "300,017 characters, more than the 200,000 medtemporal keeps" in summary.error_examples["reply_too_long"]
    lines = (tmp_path / "run" / "predictions.jsonl").read_text()
    assert lines.count("x" * 100_000) == 1 and "y" * 1000 not in lines  # once; the refused one nowhere
    kept = _predictions(tmp_path / "run")[bench.items[0].id]
    assert kept["raw_output"] == long and kept["answer"] == "A"
    assert kept["calls"][-1]["output"] is None and kept["calls"][-1]["output_is_raw_output"] is True
    assert "y" * 1000 not in (tmp_path / "c.sqlite").read_bytes().decode("latin-1")  # not cached either
