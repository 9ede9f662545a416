"""`medtemporal compare`: paired differences on constructed runs with a known difference and on identical runs."""

import json

import pytest

from medtemporal.cli import main
from medtemporal.runs import RunConfig
from medtemporal.scoring.compare import ComparisonWarning, compare_runs, mcnemar_exact, setting_differences

from helpers.scored_runs import make_items, prediction, write_run, wrong_letter


def _right(items):
    return [prediction(i, f"The answer is {i.answer}.") for i in items]


@pytest.fixture
def items():
    return make_items(patients=40, per_patient=3)


def test_a_known_difference_is_found_with_its_paired_interval_and_mcnemar(tmp_path, items):
    a = write_run(tmp_path, items, _right(items), name="a")
    # B is wrong on every item of patients divisible by 5 (8 × 3) and on the first item of the other even
    # patients (16): 40 wrong, so A − B = 1/3, all 40 discordant items in A's favour, uneven across patients.
    def b_wrong(k):
        patient = k // 3
        return (patient % 2 == 0 and k % 3 == 0) or patient % 5 == 0

    b_preds = [prediction(i, f"({wrong_letter(i)})") if b_wrong(k) else prediction(i, f"The answer is {i.answer}.")
               for k, i in enumerate(items)]
    b = write_run(tmp_path, items, b_preds, name="b")
    result = compare_runs(a, b, resamples=500)
    overall = result.row("overall", "accuracy")
    assert (overall.n, overall.a, overall.b) == (120, 1.0, pytest.approx(2 / 3))
    assert overall.diff == pytest.approx(1 / 3)
    assert 0 < overall.ci_low < 1 / 3 < overall.ci_high < 1
    assert (overall.a_only, overall.b_only) == (40, 0)
    assert overall.p_mcnemar == pytest.approx(2 * 0.5**40)
    assert result.warnings == [] and result.common == 120
    reverse = compare_runs(b, a, resamples=500).row("overall", "accuracy")
    assert reverse.diff == pytest.approx(-1 / 3) and reverse.p_mcnemar == overall.p_mcnemar
    assert {r.group for r in result.rows} >= {"overall", "task:TEL", "task:ICR", "task:GTS"}


def test_identical_runs_differ_by_nothing_with_p_one(tmp_path, items):
    preds = [prediction(i, f"({wrong_letter(i)})") if k % 2 else prediction(i, f"The answer is {i.answer}.")
             for k, i in enumerate(items)]
    a = write_run(tmp_path, items, preds, name="a")
    b = write_run(tmp_path, items, preds, name="b")
    for row in compare_runs(a, b, resamples=200).rows:
        assert row.diff == 0 and (row.ci_low, row.ci_high) == (0.0, 0.0)
        assert row.p_mcnemar == 1.0 and (row.a_only, row.b_only) == (0, 0)


def test_different_items_and_settings_are_warned_about(tmp_path, items):
    a = write_run(tmp_path, items, _right(items), name="a")
    b = write_run(tmp_path, items, _right(items[:60]), name="b")  # a --limit 60 beside a full run
    config = json.loads((b / "config.json").read_text())
    config["generation"] = {"temperature": 0.7}
    (b / "config.json").write_text(json.dumps(config))
    with pytest.warns(ComparisonWarning) as caught:
        result = compare_runs(a, b, resamples=100)
    text = " ".join(str(w.message) for w in caught)
    assert f"60 answered only in {a} and 0 only in {b}" in text and "generation.temperature" in text
    assert result.common == 60 and result.row("overall", "accuracy").n == 60


def test_nested_settings_differ_key_by_key():
    a = RunConfig(benchmark="b", protocol={"name": "stagewise", "templates": {"mcq_direct": "7a92",
                                                                              "stagewise_decide": "4517"}},
                  generation={"temperature": 0.0})
    b = RunConfig(benchmark="b", protocol={"name": "direct", "templates": {"mcq_direct": "7a92"}},
                  generation={"temperature": 0.0})
    assert setting_differences(a, b) == {
        "protocol.name": ("stagewise", "direct"), "protocol.templates.stagewise_decide": ("4517", None)}
    assert setting_differences(a, a) == {}


def test_mcnemar_exact_matches_the_binomial_definition():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(10, 0) == pytest.approx(2 * 0.5**10)


def test_cli_prints_tables_and_writes_json(tmp_path, items, capsys):
    a = write_run(tmp_path, items, _right(items), name="a")
    b = write_run(tmp_path, items, _right(items[:90]), name="b")
    assert main(["compare", str(a), str(b), "--resamples", "100", "--json", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    assert "Warning: the runs cover different items" in out and "| overall | accuracy | 90 |" in out
    data = json.loads((tmp_path / "c.json").read_text())
    assert data[0]["common"] == 90 and data[0]["rows"][0]["p_mcnemar"] == 1.0


def test_cli_names_the_runs_in_the_order_given(tmp_path, items, capsys):
    base = write_run(tmp_path, items, _right(items[:60]) + [prediction(i, f"({wrong_letter(i)})") for i in items[60:]],
                     name="base")
    better = write_run(tmp_path, items, _right(items), name="better")
    assert main(["compare", str(base), str(better), "--resamples", "100"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [f"A = {base}", f"B = {better}"] and "B − A in points" in out[2]
    row = next(line for line in out if line.startswith("| overall | accuracy |"))
    assert row.startswith("| overall | accuracy | 120 | 50.0 | 100.0 | +50.0 |") and row.endswith("| 0 | 60 |")
