"""MI-CXR analyses: error types by rules (the judge's: test_error_judge.py), temperature and stage-wise tables, ICR-V,
source statistics; on constructed items and runs with known answers."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path

import pytest

from helpers.reports import loaded
from helpers.scored_runs import make_items, prediction, write_run, wrong_letter

from medtemporal.benchmark import Manifest, save
from medtemporal.benchmarks.mi_cxr.report import (
    error_taxonomy, icrv_table, rule_label, source_statistics, stagewise_table, temperature_pairs, temperature_table,
    write_mi_cxr_report,
)
from medtemporal.schema import ImageRef, Item
from medtemporal.report.family import FamilyReport
from medtemporal.benchmark import load

pytestmark = pytest.mark.filterwarnings("ignore::medtemporal.errors.UndefinedMetricWarning")

INTERVALS = {"A": "T1 → T2", "B": "T2 → T3", "C": "T3 → T4", "D": "T4 → T5", "E": "There is no new appearance"}


def _tel(answer: str, emergences: list[str]) -> Item:
    return Item.create(benchmark="mi-cxr", task="TEL", subtype="single_emergence", images=[], question="When?",
                       options=INTERVALS, answer_type="choice", answer=answer,
                       meta={"emergences": emergences, "resolutions": [], "null": answer == "E"})


def test_rule_labels_follow_the_item():
    event = _tel("B", ["T2 → T3", "T4 → T5"])
    assert rule_label(event, "B") is None
    assert rule_label(event, "E") == "abstention"
    assert rule_label(event, "D") == "exclusivity"  # the abnormality also newly appears there
    assert rule_label(event, "A") == "wrong_interval"
    assert rule_label(event, None) == "invalid"
    assert rule_label(_tel("E", []), "C") == "forced_choice"
    icr = event.model_copy(update={"task": "ICR"})
    gts = event.model_copy(update={"task": "GTS"})
    assert rule_label(icr, "A") == "contradicted_statement" and rule_label(gts, "A") == "global_integration"


def _cold_and_hot(tmp_path: Path):
    items = make_items(patients=20, per_patient=3)
    cold = write_run(tmp_path, items, [prediction(i, f"The answer is {i.answer}.") for i in items], name="cold")
    hot_preds = []
    for r in range(2):  # repeat 0 wrong on every fourth item, repeat 1 right everywhere
        for k, i in enumerate(items):
            p = prediction(i, f"({wrong_letter(i)})" if r == 0 and k % 4 == 0 else f"The answer is {i.answer}.")
            hot_preds.append(p.model_copy(update={"repeat": r}))
    hot = write_run(tmp_path, items, hot_preds, name="hot")
    config = json.loads((hot / "config.json").read_text())
    config.update(generation={"temperature": 0.7}, repeats=2)
    (hot / "config.json").write_text(json.dumps(config))
    return items, cold, hot


def test_temperature_tables_show_repeats_flips_and_paired_differences(tmp_path):
    items, cold, hot = _cold_and_hot(tmp_path)
    runs = loaded([cold, hot])
    table = temperature_table(runs)
    hot_row = next(line for line in table.splitlines() if "| 0.7 |" in line)
    assert "| 2 |" in hot_row and hot_row.endswith(f"| {100 * 15 / 60:.1f} |")  # 15 of 60 items flipped
    assert f"| {100 * (1 - 15 / 120):.1f} ± " in hot_row  # overall mean over the two repeats
    pairs = temperature_pairs(runs)
    overall = next(line for line in pairs.splitlines() if "| overall |" in line)
    assert "| T=0.7 − T=0 |" in overall and "| 100.0 | 87.5 | -12.5 |" in overall


def test_stagewise_pairs_with_direct_of_the_same_model(tmp_path):
    items = make_items(patients=20, per_patient=3)
    direct = write_run(tmp_path, items, [prediction(i, f"({wrong_letter(i)})") for i in items], name="direct")
    staged = write_run(tmp_path, items, [prediction(i, f"The answer is {i.answer}.") for i in items], name="staged")
    config = json.loads((staged / "config.json").read_text())
    config["protocol"] = {"name": "stagewise", "options": {}}
    (staged / "config.json").write_text(json.dumps(config))
    table = stagewise_table(loaded([direct, staged]))
    overall = next(line for line in table.splitlines() if "| overall |" in line)
    assert "| 0.0 | 100.0 | +100.0 |" in overall
    assert stagewise_table(loaded([direct])) is None and icrv_table(loaded([direct])) is None


def test_error_taxonomy_counts_wrong_answers_by_rule(tmp_path):
    items = make_items(patients=10, per_patient=3)
    run = write_run(tmp_path, items, [prediction(i, f"({wrong_letter(i)})") for i in items[:10]]
                    + [prediction(i, f"The answer is {i.answer}.") for i in items[10:]])
    counts = error_taxonomy(loaded([run])[0])
    assert sum(sum(c.values()) for c in counts.values()) == 10
    expected = Counter(rule_label(i, wrong_letter(i)) for i in items[:10])
    assert sum(counts.values(), Counter()) == expected  # judge labels: test_error_judge.py


def test_source_statistics_from_window_timestamps(tmp_path):
    days = [0, 1, 3, 10, 200]  # gaps 1, 2, 7 and 190 days
    stamps = [(dt.datetime(2110, 1, 1) + dt.timedelta(days=d)).isoformat() for d in days]
    images = [ImageRef(path=f"p/t{v}.png", visit=v + 1, label=f"T{v + 1}", timestamp=stamps[v]) for v in range(5)]
    items = [Item.create(benchmark="mi-cxr", task="TEL", subtype="single_emergence", images=images,
                         question=f"Q{k}?", options=INTERVALS, answer_type="choice", answer="D",
                         meta={"patient_id": "p1", "study_ids": list("abcde"), "window": 0, "abnormality": f"x{k}",
                               "states": ["neg", "neg", "neg", "neg", "pos"]}) for k in range(2)]
    bench = save(tmp_path / "bench", items, Manifest(benchmark="mi-cxr", version="1", licence="synthetic"))
    text = source_statistics(load(bench))
    assert "| neg-neg-neg-neg-pos | 2 |" in text  # two abnormalities of one window
    assert "over 1 distinct windows" in text
    assert "| T4 → T5 | 190.00 | 190.00 |" in text and "| Median | 200.00 |" in text
    assert "| T1 → T2 | 0.0 | 100.0 | 0.0 | 0.0 | 0.0 |" in text and "| T4 → T5 | 0.0 | 0.0 | 0.0 | 0.0 | 100.0 |" in text


def test_write_micxr_report_writes_tables_and_figure(tmp_path):
    _, cold, hot = _cold_and_hot(tmp_path)
    context = FamilyReport("mi-cxr", loaded([cold, hot]), tmp_path)  # runs of a toy family: the writer itself
    write_mi_cxr_report(context)
    written = context.written
    assert [p.name for p in written] == ["mi-cxr_analyses.md", "mi-cxr_errors.png"]
    text = written[0].read_text()
    assert "Temperature sensitivity" in text and "Error types" in text and "Table 12 layout" in text
    assert written[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_stage1_descriptions_are_checked_against_the_annotated_changes(tmp_path):
    items = [_tel("C", ["T3 → T4"]).model_copy(update={"meta": {
        "patient_id": f"p{k}", "emergences": ["T3 → T4"], "resolutions": [],
        "changes": ["absent", "absent", "emergence", "unchanged"]}}) for k in range(2)]
    items = [i.model_copy(update={"id": f"item{k}", "question": f"Q{k}"}) for k, i in enumerate(items)]
    save(tmp_path / "bench", items, Manifest(benchmark="mi-cxr", version="1", licence="synthetic"))
    good = ("T1 → T2: remains absent. T2 → T3: no change. T3 → T4: a new opacity appears. "
            "T4 → T5: stable.")
    bad = "T1 → T2: resolved. T2 → T3: unclear. T3 → T4: worsened or improved. T4 → T5: stable."
    preds = [prediction(items[0], "The answer is C.").model_copy(update={"calls": ({"stage": "describe", "output": good},)}),
             prediction(items[1], "The answer is A.").model_copy(update={"calls": ({"stage": "describe", "output": bad},)})]
    run = write_run(tmp_path, items, preds, bench=tmp_path / "bench")
    from medtemporal.benchmarks.mi_cxr.report import description_check

    c = description_check(loaded([run])[0])
    # good: 4 decided, 4 agree; bad: T1→T2 "resolved" (disagrees), T2→T3 none, T3→T4 two kinds, T4→T5 agrees.
    assert c == {"intervals": 8, "decided": 6, "agree": 5, "items_all_agree": 1, "right_when_all_agree": 1}
