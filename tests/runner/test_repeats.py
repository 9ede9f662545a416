"""--repeats: each repeat its own sample at temperature above 0, served from the cache at 0, resumable."""

import json

from helpers.tiny import make_tiny_benchmark

from medtemporal.backends.base import GenerateConfig
from medtemporal.benchmark import load
from medtemporal.errors import InvalidInputError
from medtemporal.runner import run
from medtemporal.runner.repeats import derived_seed
from medtemporal.runs import RunFolder

import pytest


def _lines(folder):
    return [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]


def _answers(folder):
    """(item id, repeat) → extracted answer."""
    return {(p["item_id"], p["repeat"]): p["answer"] for p in _lines(folder)}


def test_sampled_repeats_are_distinct_samples_never_cached_copies(fake, tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=10))
    fake.configure(sample=True)
    hot = GenerateConfig(temperature=0.7)
    summary = run(bench.path, fake.uri(), tmp_path / "run", config=hot, repeats=4, progress=False)
    assert (summary.total, summary.done, summary.cache_hits) == (40, 40, 0)
    assert "4 repeats per item" in str(summary)
    assert sorted(fake.stats()["counts"].values()) == [4] * 10  # every repeat went to the model
    answers = _answers(tmp_path / "run")
    assert len(answers) == 40
    per_item = [{answers[(i.id, r)] for r in range(4)} for i in bench.items]
    assert any(len(a) > 1 for a in per_item), "unseeded sampled repeats all gave one answer"
    hashes = {p["request_hash"] for p in _lines(tmp_path / "run")}
    assert len(hashes) == 40  # repeat index is part of the request identity

    # The same command again asks nothing: repeat identity survives resume.
    again = run(bench.path, fake.uri(), tmp_path / "run", config=hot, repeats=4, progress=False)
    assert (again.done, again.skipped_existing, again.requests) == (0, 40, 0)
    assert _answers(tmp_path / "run") == answers

    # More repeats later: only the new repeat is asked for.
    more = run(bench.path, fake.uri(), tmp_path / "run", config=hot, repeats=5, progress=False)
    assert (more.done, more.skipped_existing, more.requests) == (10, 40, 10)
    assert {p["repeat"] for p in _lines(tmp_path / "run")} == {0, 1, 2, 3, 4}

    scores = RunFolder(tmp_path / "run").scores()
    assert scores.repeats is not None and scores.repeats["n"] == 5
    overall = next(r for r in scores.repeats["scores"] if r["group"] == "overall" and r["metric"] == "accuracy")
    assert len(overall["values"]) == 5
    pooled = scores.score("overall", "accuracy")
    assert pooled.n == 50 and pooled.value == pytest.approx(overall["mean"])
    flips = scores.repeats["consistency"]["overall"]
    final = _answers(tmp_path / "run")
    changed = sum(len({final[(i.id, r)] for r in range(5)}) > 1 for i in bench.items)
    assert flips["flipped_items"] == changed >= 1
    assert flips["answer_agreement"] == pytest.approx(1 - changed / 10)


def test_seeded_repeats_send_derived_seeds_and_reproduce(fake, tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=6))
    fake.configure(sample=True, keep_bodies=True)
    hot = GenerateConfig(temperature=0.7, seed=11)
    run(bench.path, fake.uri(), tmp_path / "a", config=hot, repeats=3, progress=False, no_cache=True)
    seeds = sorted({b["seed"] for b in fake.stats()["bodies"]})
    assert seeds == sorted({11, derived_seed(11, 1), derived_seed(11, 2)})
    run(bench.path, fake.uri(), tmp_path / "b", config=hot, repeats=3, progress=False, no_cache=True)
    first, second = _answers(tmp_path / "a"), _answers(tmp_path / "b")
    assert first == second  # the same seed gives the same samples
    assert any(len({first[(i.id, r)] for r in range(3)}) > 1 for i in bench.items)


def test_at_temperature_zero_the_cache_serves_later_repeats(fake, tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=5))
    fake.configure(sample=True)
    summary = run(bench.path, fake.uri(), tmp_path / "run", repeats=3, concurrency=1, progress=False)
    assert summary.done == 15 and summary.requests + summary.cache_hits == 15
    assert summary.cache_hits >= 8  # later repeats are the same request (two may race for one item)
    assert RunFolder(tmp_path / "run").scores().repeats["consistency"]["overall"]["answer_agreement"] == 1.0


def test_a_killed_repeat_is_asked_again_and_only_it(fake, tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=4))
    fake.configure(sample=True)
    hot = GenerateConfig(temperature=1.0)
    run(bench.path, fake.uri(), tmp_path / "run", config=hot, repeats=3, progress=False, no_cache=True)
    path = tmp_path / "run" / "predictions.jsonl"
    kept = [line for line in path.read_text().splitlines() if json.loads(line)["repeat"] != 1]
    path.write_text("\n".join(kept) + "\n" + kept[0][:20])  # repeat 1 lost, a torn last line
    fake.reset()
    fake.configure(sample=True)
    summary = run(bench.path, fake.uri(), tmp_path / "run", config=hot, repeats=3, progress=False, no_cache=True)
    assert (summary.done, summary.skipped_existing, summary.requests) == (4, 8, 4)
    assert sorted((p["repeat"]) for p in _lines(tmp_path / "run")).count(1) == 4


def test_predictions_record_the_rendered_prompt_with_images_as_paths(fake, tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=2))
    run(bench.path, fake.uri(), tmp_path / "run", progress=False,
        config=GenerateConfig(system_prompt="Be brief."))
    line = _lines(tmp_path / "run")[0]
    item = next(i for i in bench.items if i.id == line["item_id"])
    roles = [m["role"] for m in line["prompt"]]
    assert roles == ["system", "user"]
    parts = line["prompt"][1]["parts"]
    assert [p["image"] for p in parts if "image" in p] == [ref.path for ref in item.images]
    assert any(item.question in p.get("text", "") for p in parts)
    assert "base64" not in (tmp_path / "run" / "predictions.jsonl").read_text()


def test_repeats_below_one_are_refused(fake, tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=2)
    with pytest.raises(InvalidInputError, match="--repeats"):
        run(bench, fake.uri(), tmp_path / "run", repeats=0, progress=False)
    assert not (tmp_path / "run").exists()


def test_cli_repeats_flag_is_recorded(tmp_path):
    from medtemporal.cli import main

    bench = make_tiny_benchmark(tmp_path, n=3)
    out = tmp_path / "run"
    assert main(["run", str(bench), "--model", "baseline:random", "--temperature", "0.5", "--seed", "1",
                 "--repeats", "2", "--out", str(out), "--no-progress"]) == 0
    assert json.loads((out / "config.json").read_text())["repeats"] == 2
    assert sorted(p["repeat"] for p in _lines(out)) == [0, 0, 0, 1, 1, 1]
    assert main(["run", str(bench), "--model", "baseline:random", "--repeats", "0", "--out",
                 str(tmp_path / "bad"), "--no-progress"]) == 2
