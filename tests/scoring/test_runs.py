import json
import math
import os

import pytest

from medtemporal.errors import InvalidInputError, UndefinedMetricWarning
from medtemporal.registry import register
from medtemporal.benchmark import Manifest
from medtemporal.contract import BenchmarkSpec, ScoreGroups
from medtemporal.scoring import score_run
from medtemporal.runs import RunFolder

from helpers.scored_runs import SUBTYPES, make_items, prediction, write_run, wrong_letter

# Tiny runs have subtypes seen in one patient only: their missing interval is expected (see test_ci).
SMALL = pytest.mark.filterwarnings("ignore::medtemporal.errors.UndefinedMetricWarning")


def by_group(scores):
    return {s.group: s for s in scores if s.metric == "accuracy"}


def test_groups_values_invalid_missing_and_chance(tmp_path):
    items = make_items(patients=12, per_patient=3)
    right, wrong, invalid = items[:20], items[20:30], items[30:33]  # items[33:] have no prediction
    preds = ([prediction(i, f"The answer is {i.answer}.") for i in right]
             + [prediction(i, f"({wrong_letter(i)})") for i in wrong]
             + [prediction(i, "A or B") for i in invalid])
    run = write_run(tmp_path, items, preds)
    scores = by_group(score_run(run, resamples=200))

    overall = scores["overall"]
    assert overall.value == pytest.approx(20 / 36)
    assert (overall.n, overall.invalid, overall.missing) == (36, 3, 3)
    assert overall.chance == pytest.approx(0.2)
    assert overall.ci_low < overall.value < overall.ci_high

    expected = {"overall", *(f"task:{t}" for t in SUBTYPES), *(f"subtype:{s}" for subs in SUBTYPES.values()
                                                                   for s in subs),
                "subtypes:TEL/Single (E/R)", "subtypes:TEL/Multiple (E/R)", "subtypes:ICR/ICR",
                "subtypes:GTS/Single Abnormality", "subtypes:GTS/Multi Abnormality"}
    assert set(scores) == expected
    for task, subtypes in SUBTYPES.items():
        members = [k for k, i in enumerate(items) if i.task == task]
        assert scores[f"task:{task}"].n == len(members)
        assert scores[f"task:{task}"].value == pytest.approx(sum(k < 20 for k in members) / len(members))
        assert sum(scores[f"subtype:{s}"].n for s in subtypes) == len(members)
    single = scores["subtypes:TEL/Single (E/R)"]
    assert single.n == scores["subtype:single_emergence"].n + scores["subtype:single_resolution"].n

    saved = RunFolder(run).scores()
    assert saved.run.model == "baseline:test" and saved.run.benchmark == "scoring-test"
    assert saved.counts["answered"] == 30 and saved.counts["invalid"] == 3 and saved.counts["missing"] == 3
    assert [t.task for t in saved.layout] == ["TEL", "ICR", "GTS"]
    assert saved.metrics["accuracy"]["higher_is_better"] is True
    assert saved.score("overall", "accuracy") == overall


@SMALL
def test_last_prediction_wins(tmp_path):
    items = make_items(patients=2, per_patient=3)
    first = [prediction(i, wrong_letter(i)) for i in items]
    second = [prediction(i, i.answer) for i in items[:4]]
    third = [prediction(items[0], "I cannot tell.")]
    run = write_run(tmp_path, items, first + second + third)
    overall = by_group(score_run(run, resamples=100))["overall"]
    assert overall.value == pytest.approx(3 / 6)  # items 1-3 right, item 0 now invalid, 4-5 wrong
    assert overall.invalid == 1 and overall.missing == 0
    assert RunFolder(run).scores().counts["superseded"] == 5


@SMALL
def test_errors_and_unknown_items_are_counted(tmp_path):
    items = make_items(patients=2, per_patient=3)
    stranger = make_items(patients=1, per_patient=1, seed=9)[0].model_copy(update={"id": "not-in-benchmark"})
    preds = [prediction(i, i.answer) for i in items[1:]]
    preds += [prediction(items[0], None, error="timeout"), prediction(stranger, "A")]
    run = write_run(tmp_path, items, preds)
    overall = by_group(score_run(run, resamples=100))["overall"]
    assert overall.value == pytest.approx(5 / 6) and overall.missing == 1
    counts = RunFolder(run).scores().counts
    assert counts["errors"] == 1 and counts["unknown_items"] == 1


@SMALL
def test_stale_rule_answers_are_extracted_again(tmp_path):
    items = make_items(patients=2, per_patient=2)
    a, b, c, d = items
    preds = [
        prediction(a, f"Answer: {a.answer}", extraction="letter@0", answer=wrong_letter(a)),  # old rule: redo
        prediction(b, "gibberish", extraction="letter@3", answer=b.answer),  # current rule: trusted
        prediction(c, f"({c.answer})", extraction=None, answer=None),  # never extracted
        prediction(d, wrong_letter(d)),
    ]
    run = write_run(tmp_path, items, preds)
    overall = by_group(score_run(run, resamples=100))["overall"]
    assert overall.value == pytest.approx(3 / 4)
    counts = RunFolder(run).scores().counts
    assert counts["re_extracted"] == 2 and counts["rules"] == {"letter@3": 4}
    assert counts["re_extracted_from"] == {"letter@0": 1, "none": 1}


def test_declared_column_without_items_is_nan_with_a_warning(tmp_path):
    register("benchmark", "scoring-test-gap")(BenchmarkSpec(
        name="scoring-test-gap", version="1", licence="synthetic", description="",
        add_arguments=lambda p: None, build=lambda a: ([], Manifest(benchmark="x", version="1", licence="synthetic")),
        groups=ScoreGroups(subtypes={"TEL": {"Single": ("single_emergence",), "E→R / R→E": ("emergence_to_resolution",)}}),
    ))
    items = [i.model_copy(update={"benchmark": "scoring-test-gap"}) for i in make_items(2, 3) if i.task == "TEL"]
    run = write_run(tmp_path, items, [prediction(i, i.answer) for i in items])
    with pytest.warns(UndefinedMetricWarning):
        scores = by_group(score_run(run, resamples=100))
    gap = scores["subtypes:TEL/E→R / R→E"]
    assert math.isnan(gap.value) and gap.n == 0
    assert json.loads((run / "scores.json").read_text())  # NaN survives the round trip
    assert math.isnan(RunFolder(run).scores().score("subtypes:TEL/E→R / R→E", "accuracy").value)


def test_scores_are_deterministic_for_a_seed(tmp_path):
    items = make_items(patients=10, per_patient=2)
    run = write_run(tmp_path, items, [prediction(i, i.answer if k % 3 else "E") for k, i in enumerate(items)])
    assert score_run(run, resamples=300, seed=4) == score_run(run, resamples=300, seed=4)


@SMALL
def test_needs_scoring_follows_predictions(tmp_path):
    items = make_items(patients=2, per_patient=2)
    run = write_run(tmp_path, items, [prediction(i, i.answer) for i in items])
    assert RunFolder(run).needs_scoring()
    score_run(run, resamples=50)
    assert not RunFolder(run).needs_scoring()
    later = (run / "scores.json").stat().st_mtime_ns + 10**9
    os.utime(run / "predictions.jsonl", ns=(later, later))
    assert RunFolder(run).needs_scoring()


def test_bad_run_folders_give_one_clear_sentence(tmp_path):
    with pytest.raises(InvalidInputError, match="is not a run folder"):
        score_run(tmp_path)
    items = make_items(patients=1, per_patient=2)
    run = write_run(tmp_path, items, [])
    (run / "predictions.jsonl").unlink()
    with pytest.raises(InvalidInputError, match="has no predictions.jsonl"):
        score_run(run)
    (run / "config.json").write_text(json.dumps({"benchmark": {"path": "nowhere/bench"}}))
    with pytest.raises(InvalidInputError, match="nowhere/bench named in .* does not exist"):
        score_run(run)
    with pytest.raises(InvalidInputError, match="score the run with"):
        RunFolder(run).scores()


def test_only_the_items_a_run_selected_are_scored(tmp_path):
    from medtemporal.runner import run
    from helpers.tiny import make_tiny_benchmark

    bench = make_tiny_benchmark(tmp_path, n=4)
    run(bench, "baseline:random", tmp_path / "r", limit=2, progress=False, no_cache=True)
    scores = json.loads((tmp_path / "r" / "scores.json").read_text())
    overall = next(s for s in scores["scores"] if s["group"] == "overall")
    assert overall["n"] == 2 and overall["missing"] == 0
