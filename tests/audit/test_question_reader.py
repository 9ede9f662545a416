"""The audit reads the question with the options, flags by interval, and says where the paper's design
makes a subtype answerable (3D-RAD Task 6's stated history; MI-CXR's 40-patient build stays quiet)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from medtemporal.audit import audit_items
from medtemporal.report.audit import audit_markdown
from medtemporal.audit.core import MIN_PATIENTS, _estimate
from medtemporal.cli import main
from medtemporal.schema import Item

OPTIONS = {"A": "Worse", "B": "Better", "C": "New", "D": "Absent"}
OFFICIAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "official"


def history_items(n: int, seed: int, noise: float = 0.1) -> list[Item]:
    """Fixed options; the question states a 0/1 history whose last value decides A/B and whose 1s decide C/D
    (as 3D-RAD Task 6's does), right but for ``noise``; the wording around it is random."""
    rng = random.Random(seed)
    items = []
    for i in range(n):
        history = [rng.randint(0, 1) for _ in range(rng.randint(1, 4))]
        answer = ("A" if history[-1] else "B") if any(history) else rng.choice("CDDD")
        if rng.random() < noise:
            answer = rng.choice("ABCD")
        lead = rng.choice(["Prior scans of the finding", "Sequence history", "Earlier status", "Timeline"])
        q = f"{lead}: {history}. (Note: 0 means absent.) {rng.choice(['How now?', 'What applies?'])}"
        items.append(Item.create(benchmark="b", task="T6", subtype="s", images=(), question=q, options=OPTIONS,
                                 answer_type="choice", answer=answer, meta={"patient_id": f"p{i // 4}"}))
    return items


def test_the_question_reader_reads_what_the_question_states():
    (row,) = audit_items(history_items(400, 1))["subtypes"]
    assert row["classifier"]["accuracy"] < row["chance"] + 0.25  # options alone: at most the answer prior
    assert row["question"]["accuracy"] > 0.8 and row["best"] == "question" and row["flagged"]


def test_a_word_in_the_question_that_names_the_letter_is_caught():
    rng = random.Random(2)
    words = {"A": "left", "B": "right", "C": "upper", "D": "lower"}
    items = [Item.create(benchmark="b", task="T", subtype="s", images=(), options=OPTIONS, answer_type="choice",
                         question=f"How has the {words[a]} {rng.choice(['lobe', 'zone', 'field'])} changed? #{i}",
                         answer=a, meta={"patient_id": f"p{i // 3}"})
             for i, a in enumerate(rng.choice("ABCD") for _ in range(300))]
    (row,) = audit_items(items)["subtypes"]
    assert row["question"]["accuracy"] > 0.9 and row["classifier"]["accuracy"] < 0.4 and row["flagged"]


def test_a_point_estimate_over_chance_with_an_interval_that_reaches_it_is_not_flagged():
    # 11 of 31 right (35.5%, chance 20) over 17 patients: the 40-patient MI-CXR case of issue 21
    items = [Item.create(benchmark="b", task="T", subtype="s", images=(), question=f"q{i}", options=OPTIONS,
                         answer_type="choice", answer="A", meta={"patient_id": f"p{i % 17}"}) for i in range(31)]
    picks = ["A" if i < 11 else "B" for i in range(31)]
    est = _estimate(picks, items, 0.2)
    assert est["accuracy"] - 0.2 > 0.05 and est["ci_low"] <= 0.25 and not est["flagged"]
    est = _estimate(["A" if i < 22 else "B" for i in range(31)], items, 0.2)
    assert est["ci_low"] > 0.25 and est["flagged"]


def test_few_patients_are_measured_but_not_flagged():
    items = [it.model_copy(update={"meta": {"patient_id": f"p{k % (MIN_PATIENTS - 1)}"}})
             for k, it in enumerate(history_items(200, 3))]
    audit = audit_items(items)
    (row,) = audit["subtypes"]
    assert row["question"]["accuracy"] > 0.8 and not row["flagged"] and audit["flagged"] == []
    assert "ok (few patients)" in audit_markdown(audit) and "fewer than 5 patients" in audit_markdown(audit)


def test_a_declared_note_turns_a_flag_into_by_design(tmp_path, capsys):
    items = history_items(300, 4)
    audit = audit_items(items, notes={"T6/*": "The paper states the history in the question."})
    assert audit["flagged"] == [] and audit["by_design"] == {"T6/s": "The paper states the history in the question."}
    text = audit_markdown(audit)
    assert "| BY DESIGN |" in text and "**By design** (T6/s): The paper states the history" in text
    assert audit_items(items, notes={"T5/*": "elsewhere"})["flagged"] == ["T6/s"]  # a note elsewhere: still flagged


@pytest.mark.slow  # a 3D-RAD phantom build: about 17 s
def test_3d_rad_phantom_task6_reads_like_the_history_rule_and_is_by_design(tmp_path, capsys):
    from medtemporal.benchmarks.rad3d.baselines import history_answer
    from medtemporal.phantoms.ct_rate import write_ct_rate

    write_ct_rate(tmp_path / "ct", patients=120, seed=17, shape=(16, 16, 8), volumes=False)
    bench = tmp_path / "bench"
    assert main(["build", "3d-rad", "--ct-rate", str(tmp_path / "ct"), "--tasks", "task4,task6",
                 "--no-volume-check", "--seed", "17", "--out", str(bench)]) == 0
    err = capsys.readouterr().err
    assert "answerable blind more than 5 points" not in err and "by the paper's own design" in err
    assert main(["audit", str(bench), "--json", str(tmp_path / "a.json")]) == 0  # clean but for the design
    out = capsys.readouterr().out
    assert "BY DESIGN" in out and "states the label's history" in out
    audit = json.loads((tmp_path / "a.json").read_text())
    rows = [r for r in audit["subtypes"] if r["task"] == "task6"]
    assert rows and all(r["best"] == "question" for r in rows if r["patients"] >= MIN_PATIENTS)
    n = sum(r["n"] for r in rows)
    reader = sum(r["n"] * r["question"]["accuracy"] for r in rows) / n
    from medtemporal.benchmark import load

    audited = {r["subtype"] for r in rows}
    task6 = [i for i in load(bench).items if i.task == "task6" and i.subtype in audited]
    rule = sum(history_answer(i.question, tuple(i.options)) == i.answer for i in task6) / len(task6)
    assert len(task6) == n and abs(reader - rule) < 0.05
    assert max(r["classifier"]["accuracy"] for r in rows) < rule - 0.05  # options alone miss the history
    assert audit["flagged"] == [] and set(audit["by_design"]) >= {f"task6/{r['subtype']}" for r in rows
                                                                if r["patients"] >= MIN_PATIENTS}


def test_a_40_patient_mi_cxr_build_does_not_warn(tmp_path, capsys):
    from helpers.phantoms import make_cxr_phantoms

    data = make_cxr_phantoms(tmp_path, patients=40, seed=0, image_size=64)
    out = tmp_path / "mi-cxr"
    assert main(["build", "mi-cxr", "--mimic-cxr-jpg", str(data.mimic_cxr_jpg), "--qba", str(data.qba),
                 "--out", str(out)]) == 0
    assert "Audit:" not in capsys.readouterr().err
    audit = json.loads((out / "manifest.json").read_text())["audit"]
    above = [r for r in audit["subtypes"] if r["heuristic"]["accuracy"] > r["chance"] + 0.05]
    assert above and audit["flagged"] == []  # point estimates above chance + 5, intervals reaching it


@pytest.mark.skipif(not (OFFICIAL / "3d-rad").is_dir(), reason="../shared/official/3d-rad is absent")
def test_the_official_3d_rad_task6_audit_matches_the_history_rule(tmp_path, capsys):
    bench = tmp_path / "bench"
    assert main(["build", "3d-rad", "--official", str(OFFICIAL / "3d-rad"), "--tasks", "task6",
                 "--out", str(bench)]) == 0
    capsys.readouterr()
    audit = json.loads((bench / "manifest.json").read_text())["audit"]
    rows = audit["subtypes"]
    micro = sum(r["n"] * r["question"]["accuracy"] for r in rows) / sum(r["n"] for r in rows)
    assert abs(micro - 0.8072) < 0.05  # rad3d:history's micro accuracy on the release's Task 6 (80.72)
    assert audit["flagged"] == [] and {"task6/task6_b", "task6/task6_c", "task6/task6_d"} <= set(audit["by_design"])


@pytest.mark.skipif(not (OFFICIAL / "mmxu" / "MMXU-test.jsonl").is_file(), reason="the MMXU file is absent")
def test_the_released_mmxu_file_is_answerable_from_its_options():
    lines = (OFFICIAL / "mmxu" / "MMXU-test.jsonl").read_text().splitlines()[:1000]  # a third, for speed
    rows = [json.loads(line) for line in lines]
    items = [Item.create(benchmark="mmxu", task="mmxu", subtype="all", images=(), question=r["question"],
                         options=r["options"], answer_type="choice", answer=r["answer"],
                         meta={"patient_id": r["cur_image_path"].split("/")[2]}) for r in rows]
    audit = audit_items(items)
    (row,) = audit["subtypes"]
    assert audit["flagged"] == ["mmxu/all"] and row["classifier"]["ci_low"] > 0.45  # FACTS §5.3: 54-57%

