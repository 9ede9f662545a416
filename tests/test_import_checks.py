"""``import-predictions`` checks what it matches (issue 32 §3, §6): rows matched by position are cross-checked with
the tool's own answer column and a misaligned file is refused; lmms-eval's ``filtered_resps`` as a dict is read;
repeated rows with different outputs are reported; a killed import is finished by the same command."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from helpers.tiny import make_tiny_benchmark

from medtemporal.benchmark import load
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.export import export
from medtemporal.interop.imports import import_predictions
from medtemporal.runs import CONFIG, PREDICTIONS, RunFolder


@pytest.fixture
def bench(tmp_path):
    return load(make_tiny_benchmark(tmp_path / "tiny", n=5))


def _results(bench, tmp_path) -> pd.DataFrame:
    export(bench, "vlmevalkit", tmp_path / "tiny.tsv")
    results = pd.read_csv(tmp_path / "tiny.tsv", sep="\t", dtype=str, keep_default_na=False)
    results["prediction"] = [f"The answer is {a}." for a in results["answer"]]  # every row right
    return results


def test_a_shifted_index_without_ids_is_refused_by_the_tools_own_answer_column(bench, tmp_path):
    results = _results(bench, tmp_path).drop(columns=["id"])
    results.to_csv(tmp_path / "aligned.tsv", sep="\t", index=False)
    summary = import_predictions(bench, tmp_path / "aligned.tsv", tmp_path / "ok", tool="vlmevalkit")
    assert summary.imported == 5 and RunFolder(tmp_path / "ok").scores().score("overall", "accuracy").value == 1.0
    shifted = results.assign(index=[str(int(i) + 1) for i in results["index"]])  # off by one, as the red team's
    shifted.to_csv(tmp_path / "shifted.tsv", sep="\t", index=False)
    with pytest.raises(InvalidInputError, match=r"shifted.tsv, line 2 gives the answer 'A' but was matched to item "
                                                r".*do not line up with the items"):
        import_predictions(bench, tmp_path / "shifted.tsv", tmp_path / "bad", tool="vlmevalkit")
    assert not (tmp_path / "bad" / PREDICTIONS).exists()


def test_lmms_eval_filtered_resps_as_a_dict_and_conflicting_repeats(bench, tmp_path, capsys):
    log = tmp_path / "20261123_samples_medtemporal_tiny_TEL.jsonl"
    rows = [{"doc_id": n, "target": item.answer, "filter": "flexible-extract",
             "filtered_resps": {"strict-match": ["[invalid]"], "flexible-extract": [f"The answer is {item.answer}."]}}
            for n, item in enumerate(bench.items)]
    rows.append({**rows[0], "filtered_resps": {"flexible-extract": ["The answer is E."]}})  # item 0 again, another answer
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    assert main(["import-predictions", str(bench.path), str(log), "--from", "lmms-eval", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "1 item(s) had repeated rows with different outputs, the last one kept" in said and bench.items[0].id in said
    answers = {json.loads(x)["item_id"]: json.loads(x)["answer"] for x in (out / PREDICTIONS).read_text().splitlines()}
    assert answers == {item.id: ("E" if k == 0 else item.answer) for k, item in enumerate(bench.items)}


def test_a_killed_import_is_finished_by_the_same_command(bench, tmp_path, monkeypatch):
    results = _results(bench, tmp_path)
    results.to_csv(tmp_path / "r.tsv", sep="\t", index=False)
    out = tmp_path / "run"
    argv = ["import-predictions", str(bench.path), str(tmp_path / "r.tsv"), "--from", "vlmevalkit", "--out", str(out)]
    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # killed after the config and predictions, before the scores

    monkeypatch.setattr("medtemporal.scoring.score_run", killed)
    assert main(argv) == 130  # "interrupted; ... run the same command to resume"
    assert (out / CONFIG).is_file() and not (out / "scores.json").exists()
    monkeypatch.undo()
    assert main(argv) == 0
    assert RunFolder(out).scores().score("overall", "accuracy").value == 1.0


def test_a_run_folder_answering_an_item_twice_differently_is_reported_when_scored(bench, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["run", str(bench.path), "--model", "baseline:constant-A", "--out", str(run), "--no-progress"]) == 0
    lines = (run / PREDICTIONS).read_text().splitlines()
    first = json.loads(lines[0])
    again = {**first, "raw_output": "B", "answer": "B"}  # a hand-edited or merged file
    (run / PREDICTIONS).write_text("\n".join([*lines, json.dumps(again)]) + "\n")
    capsys.readouterr()
    assert main(["score", str(run)]) == 0
    err = capsys.readouterr().err
    assert "answers 1 item(s) twice with different outputs; the last answer of each is scored" in err, err
