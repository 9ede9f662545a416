import json

import pytest
from helpers.fake_openai import TEST_API_KEY as KEY
from helpers.fake_openai import answer_for
from helpers.tiny import make_tiny_benchmark

from medtemporal.backends.base import GenerateConfig
from medtemporal.benchmark import load
from medtemporal.errors import InvalidInputError
from medtemporal.backends.session import RetryPolicy
from medtemporal.runner import run
from medtemporal.backends.cache import request_key

FAST = RetryPolicy(max_attempts=4, base_delay_s=0.01, max_delay_s=0.05, timeout_s=0.5)


def _predictions(folder):
    return [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]


def _keys(fake):
    """Item question → the server's request count for it."""
    return fake.stats()["counts"]


def _count(fake, item):
    return sum(n for key, n in _keys(fake).items() if item.question in key)


def test_every_fault_is_retried_and_every_item_answered(fake, tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=8))
    q = [item.question for item in bench.items]
    fake.configure(hang_s=3, faults=[
        {"kind": "429", "match": q[0], "times": 1, "retry_after": 0.3},
        {"kind": "500", "match": q[1], "times": 2},
        {"kind": "timeout", "match": q[2], "times": 1},
        {"kind": "drop", "match": q[3], "times": 1},
        {"kind": "malformed", "match": q[4], "times": 1},
    ])
    summary = run(bench.path, fake.uri(), tmp_path / "run", retry=FAST, concurrency=4, progress=False)
    assert (summary.done, summary.n_errors, summary.pending) == (8, 0, 0)
    assert [_count(fake, item) for item in bench.items] == [2, 3, 2, 2, 2, 1, 1, 1]
    assert summary.requests == 14 and summary.scored
    by_item = {p["item_id"]: p for p in _predictions(tmp_path / "run")}
    for item in bench.items:
        key = next(k for k in _keys(fake) if item.question in k)
        p = by_item[item.id]
        assert p["raw_output"] == f"The answer is {answer_for(key)}." and p["answer"] == answer_for(key)
        assert p["extraction"].startswith("letter") and p["error"] is None
        assert (p["input_tokens"], p["output_tokens"]) == (11, 3)


def test_items_that_exhaust_retries_are_recorded_and_a_rerun_asks_only_for_them(fake, tmp_path, capsys):
    bench = load(make_tiny_benchmark(tmp_path, n=6))
    broken = bench.items[2]
    fake.configure(faults=[{"kind": "500", "match": broken.question, "times": 100}])
    summary = run(bench.path, fake.uri(), tmp_path / "run", retry=FAST, progress=False)
    assert (summary.done, summary.errors) == (5, {"server_error": 1})
    assert "gave up after 4 attempts" in str(summary) and "1 × server_error" in str(summary)
    lines = _predictions(tmp_path / "run")
    failed = [p for p in lines if p["error"]]
    assert len(lines) == 6 and [p["item_id"] for p in failed] == [broken.id]
    assert failed[0]["raw_output"] is None and failed[0]["error"].startswith("server_error: ")
    assert json.loads((tmp_path / "run" / "config.json").read_text())["finished_at"] is not None
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert scores["counts"]["errors"] == 1

    before = _keys(fake)
    fake.configure(faults=[])
    again = run(bench.path, fake.uri(), tmp_path / "run", retry=FAST, progress=False)
    assert (again.skipped_existing, again.done, again.n_errors, again.requests) == (5, 1, 0, 1)
    after = _keys(fake)
    assert {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)} == {
        next(k for k in after if broken.question in k): 1
    }
    lines = _predictions(tmp_path / "run")
    assert len(lines) == 6 and all(p["error"] is None for p in lines)


def test_max_errors_stops_a_broken_run_and_keeps_what_was_done(fake, tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=12))
    fake.configure(faults=[{"kind": "400", "times": 1000}])
    summary = run(bench.path, fake.uri(), tmp_path / "run", retry=FAST, concurrency=1, max_errors=2, progress=False)
    assert summary.stopped and "--max-errors 2" in summary.stopped and "http_400" in summary.stopped
    assert summary.n_errors == 3 and summary.pending == 9
    # a 400 is never retried; the one request in flight when the run stopped is cancelled, not recorded
    assert 3 <= sum(fake.stats()["counts"].values()) <= 3 + 1
    assert len(_predictions(tmp_path / "run")) == 3
    assert json.loads((tmp_path / "run" / "config.json").read_text())["finished_at"] is None
    assert not (tmp_path / "run" / "scores.json").exists()


def test_a_dead_endpoint_stops_the_run_after_a_streak_of_failures(fake, tmp_path):
    from medtemporal.runner._run import BROKEN_STREAK

    bench = load(make_tiny_benchmark(tmp_path, n=BROKEN_STREAK + 15))
    fake.configure(faults=[{"kind": "400", "times": 1000}])
    summary = run(bench.path, fake.uri(), tmp_path / "run", retry=FAST, concurrency=1, progress=False)
    assert summary.stopped and f"the last {BROKEN_STREAK} items all failed (http_400" in summary.stopped
    assert summary.n_errors == BROKEN_STREAK and summary.pending == 15
    assert not (tmp_path / "run" / "scores.json").exists()


def test_items_with_more_images_than_the_backend_takes_fail_loudly(fake, tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=3)
    summary = run(bench, fake.uri(), tmp_path / "run", backend_options={"max_images": 4}, progress=False)
    assert summary.errors == {"too_many_images": 3} and sum(fake.stats()["counts"].values()) == 0
    assert "has 5 images but" in str(summary) and "at most 4" in str(summary)


def test_a_corrupt_image_fails_its_item_only(fake, tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=3))
    (bench.image_root / bench.items[1].images[2].path).write_bytes(b"\xff\xd8\xff garbage")
    summary = run(bench.path, fake.uri(), tmp_path / "run", progress=False)
    assert (summary.done, summary.errors) == (2, {"bad_image": 1})
    assert "p1_3.png cannot be read" in str(summary)


def test_the_cache_serves_repeated_requests_across_runs_unless_disabled(fake, tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=4)
    first = run(bench, fake.uri(), tmp_path / "r1", progress=False)
    second = run(bench, fake.uri(), tmp_path / "r2", progress=False)
    assert (first.requests, second.requests, second.cache_hits) == (4, 0, 4)
    outputs = [{p["item_id"]: p["raw_output"] for p in _predictions(tmp_path / r)} for r in ("r1", "r2")]
    assert outputs[0] == outputs[1]
    third = run(bench, fake.uri(), tmp_path / "r3", no_cache=True, progress=False)
    assert (third.requests, third.cache_hits) == (4, 0)
    assert set(fake.stats()["counts"].values()) == {2}
    other_settings = run(bench, fake.uri(), tmp_path / "r4", config=GenerateConfig(max_tokens=9), progress=False)
    assert other_settings.requests == 4


def test_concurrency_bounds_requests_in_flight(fake, tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=12)
    fake.configure(latency=0.1)
    summary = run(bench, fake.uri(), tmp_path / "run", concurrency=3, progress=False)
    assert summary.done == 12 and fake.stats()["max_inflight"] == 3


def test_run_folder_records_what_ran(fake, tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=2))
    config = GenerateConfig(max_tokens=64, seed=3, system_prompt="Be brief.")
    run(bench.path, fake.uri("org/model:tag"), tmp_path / "run", config=config, max_pixels=4096, progress=False)
    cfg = json.loads((tmp_path / "run" / "config.json").read_text())
    assert set(cfg) >= {"benchmark", "model", "protocol", "generation", "allow_remote_data", "medtemporal_version",
                        "git_revision", "started_at", "finished_at", "packages"}
    assert cfg["benchmark"] == {"path": str(bench.path), "name": "tiny", "version": "1",
                                "manifest_sha256": bench.manifest_hash, "items_sha256": bench.manifest.items_sha256,
                                "licence": "synthetic"}
    assert cfg["model"]["uri"] == fake.uri("org/model:tag") and cfg["model"]["served"] == ["fake-vlm"]
    assert cfg["model"]["identity"]["max_pixels"] == 4096 and cfg["model"]["identity"]["model"] == "org/model:tag"
    assert cfg["protocol"]["name"] == "direct" and list(cfg["protocol"]["templates"]) == ["mcq_direct"]
    assert cfg["generation"] == {"temperature": 0.0, "max_tokens": 64, "seed": 3, "top_p": None,
                                 "system_prompt": "Be brief."}
    assert cfg["allow_remote_data"] is False and "openai" in cfg["packages"]
    assert cfg["started_at"] <= cfg["finished_at"]
    # the request hash is that of the request sent, images by content
    from medtemporal.protocols.direct import Direct

    sent = []

    async def capture(request):
        sent.append(request)
        from medtemporal.backends.base import Response

        return Response("A")

    import asyncio

    asyncio.run(Direct().solve(bench.items[0], bench.image_root, capture, config))
    (first,) = [p for p in _predictions(tmp_path / "run") if p["item_id"] == bench.items[0].id]
    assert first["request_hash"] == request_key(cfg["model"]["identity"], sent[0])
    assert first["calls"][0]["template"] == "mcq_direct" and first["latency_s"] >= 0


def test_the_api_key_appears_in_no_file_and_no_message(fake, tmp_path, capsys, assert_no_key):
    bench = load(make_tiny_benchmark(tmp_path, n=5))
    fake.configure(faults=[
        {"kind": "401_echo", "match": bench.items[0].question, "times": 10},
        {"kind": "429", "match": bench.items[1].question, "times": 1, "retry_after": 0.05},
    ])
    summary = run(bench.path, fake.uri(), tmp_path / "run", retry=FAST, progress=False)
    print(summary)
    assert summary.errors == {"http_401": 1} and summary.done == 4
    files = assert_no_key(tmp_path, capsys.readouterr())
    assert {f.name for f in files} >= {"config.json", "predictions.jsonl", "scores.json", "responses.sqlite"}
    assert fake.stats()["auth"] == [f"Bearer {KEY}"]  # the key was used, and only sent to the server


def test_progress_is_quiet_off_a_terminal(fake, tmp_path, capsys):
    run(make_tiny_benchmark(tmp_path, n=3), fake.uri(), tmp_path / "run", progress=True)
    out = capsys.readouterr()
    assert out.err == "" and out.out == ""


def test_baselines_run_through_the_same_runner(tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=6))
    for name in ("random", "constant-B", "majority"):
        summary = run(bench.path, f"baseline:{name}", tmp_path / name, progress=False)
        assert summary.done == 6 and summary.scored
    assert {p["answer"] for p in _predictions(tmp_path / "constant-B")} == {"B"}
    # the tiny items' answers cycle A..E over one label set, so A's label is the commonest of their one subtype
    assert {p["answer"] for p in _predictions(tmp_path / "majority")} == {"A"}
    config = json.loads((tmp_path / "majority" / "config.json").read_text())
    assert config["model"]["identity"]["prior"] == {"single_emergence": {"T1 → T2": 2, "T2 → T3": 1, "T3 → T4": 1,
                                                                         "T4 → T5": 1, "No appearance": 1}}
    assert not (tmp_path / "cache").exists()  # baselines are never cached


def test_a_folder_holding_another_run_is_refused(tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=3)
    run(bench, "baseline:constant-A", tmp_path / "run", progress=False)
    before = (tmp_path / "run" / "predictions.jsonl").read_bytes()
    with pytest.raises(InvalidInputError, match="another model.uri"):
        run(bench, "baseline:constant-B", tmp_path / "run", progress=False)
    with pytest.raises(InvalidInputError, match="another generation"):
        run(bench, "baseline:constant-A", tmp_path / "run", config=GenerateConfig(max_tokens=5), progress=False)
    assert (tmp_path / "run" / "predictions.jsonl").read_bytes() == before


def test_a_partial_last_line_from_a_crash_is_cut_and_the_run_resumes(tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=4))
    run(bench.path, "baseline:random", tmp_path / "run", limit=3, progress=False)
    path = tmp_path / "run" / "predictions.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + whole.splitlines()[0][:40])
    summary = run(bench.path, "baseline:random", tmp_path / "run", progress=False)
    assert (summary.skipped_existing, summary.done) == (3, 1)
    lines = path.read_bytes().splitlines()
    assert len(lines) == 4 and path.read_bytes().startswith(whole)
    with open(path, "ab") as fh:
        fh.write(b"not json\n")
    with pytest.raises(InvalidInputError, match="line 5"):
        run(bench.path, "baseline:random", tmp_path / "run", progress=False)


def test_missing_images_are_named_before_anything_runs(fake, tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=2))
    with pytest.raises(InvalidInputError, match="image root .* does not exist; pass --image-root"):
        run(bench.path, fake.uri(), tmp_path / "run", image_root=tmp_path / "nowhere", progress=False)
    (bench.image_root / bench.items[1].images[0].path).unlink()
    with pytest.raises(InvalidInputError, match=r"1 of 10 images are missing .*first: img/p1_1.png"):
        run(bench.path, fake.uri(), tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists() and not fake.stats()["counts"]
    # a baseline reads no pixels: it runs, the missing image named in the prompt instead of sent
    assert run(bench.path, "baseline:random", tmp_path / "baseline", progress=False).done == 2


def test_bad_options_fail_in_one_sentence(tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=1)
    with pytest.raises(InvalidInputError, match="--limit must be zero or more"):
        run(bench, "baseline:random", tmp_path / "r", limit=-1)
    with pytest.raises(InvalidInputError, match="--concurrency must be a whole number from 1 to 1024, not 0"):
        run(bench, "baseline:random", tmp_path / "r", concurrency=0)
    with pytest.raises(InvalidInputError, match="--concurrency must be a whole number from 1 to 1024, not 100000"):
        run(bench, "baseline:random", tmp_path / "r", concurrency=100_000)
    with pytest.raises(InvalidInputError, match="--max-pixels must be zero"):
        run(bench, "baseline:random", tmp_path / "r", max_pixels=-1)


def test_waiting_for_a_concurrency_slot_does_not_count_against_the_request_timeout(fake, tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=3)
    fake.configure(latency=0.3)  # each request takes 0.3 s of its 0.5 s; the items queue for the single slot
    summary = run(bench, fake.uri(), tmp_path / "run", concurrency=1, retry=FAST, progress=False)
    assert (summary.done, summary.requests, sum(fake.stats()["counts"].values())) == (3, 3, 3)
