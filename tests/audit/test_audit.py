"""The blind-solvability audit flags planted leaks and passes clean random builds."""

from __future__ import annotations

import json
import random

import pytest

from medtemporal.audit import audit_items
from medtemporal.cli import main
from medtemporal.report.audit import audit_html, audit_markdown
from medtemporal.schema import Item

WORDS = "effusion edema opacity atelectasis pneumothorax cardiomegaly consolidation nodule".split()
CHANGES = "improved worsened resolved appeared persisted increased decreased".split()


def choice_items(n: int, seed: int, leak: str | None) -> list[Item]:
    """A five-way builder: each option is a random change sentence. ``leak`` plants a shortcut:
    ``longest`` (the answer is padded), ``prior`` (the answer is usually C) or ``word`` (the answer says 'new')."""
    rng = random.Random(seed)
    items = []
    for i in range(n):
        letters = "ABCDE"
        answer = "C" if leak == "prior" and rng.random() < 0.7 else rng.choice(letters)
        options = {x: f"Between T{rng.randint(1, 4)} and T{rng.randint(2, 5)}, {rng.choice(WORDS)} "
                      f"{rng.choice(CHANGES)}." for x in letters}
        if leak == "longest":
            options[answer] = options[answer][:-1] + " over the interval in both lungs."
        if leak == "word":
            options[answer] = options[answer].replace(".", " again, new.")
        items.append(Item.create(benchmark="b", task="T", subtype="s", images=(), question=f"Which is true? #{i}",
                                 options=options, answer_type="choice", answer=answer,
                                 meta={"patient_id": f"p{i // 3}"}))
    return items


def yesno_items(n: int, seed: int, leak: bool) -> list[Item]:
    """Yes/no questions about a change; with ``leak`` the severity word gives the answer away."""
    rng = random.Random(seed)
    items = []
    for i in range(n):
        answer = rng.choice(["Yes", "No"])
        word = ("markedly" if answer == "Yes" else "slightly") if leak else rng.choice(["markedly", "slightly"])
        q = f"Has the {rng.choice(WORDS)} {word} {rng.choice(CHANGES)} since the last visit?"
        items.append(Item.create(benchmark="b", task="V", subtype="vqa", images=(), question=q, answer_type="yesno",
                                 answer=answer, meta={"patient_id": f"p{i // 2}"}))
    return items


@pytest.mark.parametrize("leak", ["longest", "prior", "word"])
def test_a_leaking_choice_builder_is_flagged(leak: str) -> None:
    audit = audit_items(choice_items(300, 1, leak))
    (row,) = audit["subtypes"]
    assert row["flagged"] and audit["flagged"] == ["T/s"]
    assert max(row["heuristic"]["accuracy"], row["classifier"]["accuracy"]) > row["chance"] + 0.3
    assert row[row["best"]]["accuracy"] == max(row[r]["accuracy"] for r in ("heuristic", "classifier", "question"))


def test_a_clean_random_builder_is_not_flagged() -> None:
    for seed in (1, 2):
        audit = audit_items(choice_items(300, seed, None) + yesno_items(300, seed, False))
        assert audit["flagged"] == []
        for row in audit["subtypes"]:
            for reader in ("heuristic", "classifier", "question"):
                assert abs(row[reader]["accuracy"] - row["chance"]) <= 0.05 + 0.06  # within noise of chance
        assert {r["chance"] for r in audit["subtypes"]} == {0.2, 0.5}


def test_a_yesno_leak_is_caught_by_the_classifier() -> None:
    (row,) = audit_items(yesno_items(300, 3, True))["subtypes"]
    assert row["flagged"] and row["classifier"]["accuracy"] > 0.9


def category_items(n: int, seed: int, leak: bool = False) -> list[Item]:
    """Four options, each a change of a random finding; the subtype names the answer's change (as MMXU's
    content_type does). Without ``leak`` the options are exchangeable; with it the answer is padded."""
    rng = random.Random(seed)
    items = []
    for i in range(n):
        changes = [rng.choice(CHANGES[:4]) for _ in "ABCD"]
        options = {x: f"The {rng.choice(WORDS)} {c}." for x, c in zip("ABCD", changes)}
        answer = rng.choice("ABCD")
        if leak:
            options[answer] = options[answer][:-1] + " over the interval in both lungs."
        items.append(Item.create(benchmark="b", task="T", subtype=changes["ABCD".index(answer)], images=(),
                                 question=f"What changed? #{i}", options=options, answer_type="choice",
                                 answer=answer, meta={"patient_id": f"p{i // 3}"}))
    return items


def test_a_subtype_naming_the_answer_is_audited_across_subtypes() -> None:
    from medtemporal.audit import MARGIN, READERS, run_audit

    items = category_items(600, 7)
    within = audit_items(items)  # fitted within a subtype, a reader learns the answer from the subtype
    assert len(within["flagged"]) == 4 and all(r["classifier"]["accuracy"] > 0.5 for r in within["subtypes"])
    assert "fit" not in within["method"] and not any("breakdown" in r for r in within["subtypes"])
    across = run_audit(items, fit="task")
    rows = {r["subtype"]: r for r in across.section["subtypes"]}
    assert not rows["(all)"]["flagged"] and across.section["method"]["fit"] == "task"
    assert set(rows) == set(CHANGES[:4]) | {"(all)"} and rows["(all)"]["n"] == 600
    assert all(abs(rows["(all)"][r]["accuracy"] - 0.25) < 0.06 for r in READERS)
    # each subtype row is judged too: a reader never shown the subtype that clears chance + 5 on one subtype's items
    # inflates that column of a per-subtype table, and is flagged there
    for change in CHANGES[:4]:
        clears = any(rows[change][r]["ci_low"] > rows[change]["chance"] + MARGIN for r in READERS)
        assert rows[change]["breakdown"] and rows[change]["flagged"] == clears
    assert across.section["flagged"] == [f"T/{c}" for c in sorted(CHANGES[:4]) if rows[c]["flagged"]]
    # the picks are the held-out picks of the pooled row's best reader, and score exactly what that row says
    best = rows["(all)"]["best"]
    assert set(across.picks) == {i.id for i in items} and set(across.readers.values()) == {best}
    right = sum(across.picks[i.id] == i.answer for i in items) / len(items)
    assert right == pytest.approx(rows["(all)"][best]["accuracy"], abs=1e-4)
    for change in CHANGES[:4]:
        mine = [i for i in items if i.subtype == change]
        right = sum(across.picks[i.id] == i.answer for i in mine) / len(mine)
        assert right == pytest.approx(rows[change][best]["accuracy"], abs=1e-4)
    leaking = category_items(600, 7, leak=True)
    assert "T/(all)" in run_audit(leaking, fit="task").section["flagged"]
    declared = run_audit(leaking, fit="task", notes={"T/*": "the paper pads its answers"}).section
    assert declared["flagged"] == [] and declared["by_design"]["T/(all)"] == "the paper pads its answers"
    with pytest.raises(ValueError, match="fit must be one of"):
        run_audit(items, fit="patient")


def test_the_default_fit_picks_by_each_subtypes_best_reader() -> None:
    from medtemporal.audit import run_audit

    items = choice_items(300, 1, "longest") + yesno_items(300, 3, True)
    audit = run_audit(items)
    assert audit.section == audit_items(items)
    for row in audit.section["subtypes"]:
        mine = [i for i in items if i.subtype == row["subtype"]]
        assert {audit.readers[i.id] for i in mine} == {row["best"]}
        right = sum(audit.picks[i.id] == i.answer for i in mine) / len(mine)
        assert right == pytest.approx(row[row["best"]]["accuracy"], abs=1e-4)


def test_folds_never_share_a_patient() -> None:
    from medtemporal.audit.core import _folds

    items = choice_items(60, 4, None)
    for train, test in _folds(items, 5):
        assert not {items[i].cluster for i in train} & {items[i].cluster for i in test}


def test_open_answers_and_tiny_subtypes_are_skipped_with_a_note() -> None:
    open_items = [Item.create(benchmark="b", task="R", subtype="report", images=(), question="Write.",
                              answer_type="open", answer="x", meta={"patient_id": f"p{i}"}) for i in range(20)]
    audit = audit_items(open_items + choice_items(5, 5, None))
    assert audit["subtypes"] == [] and set(audit["skipped"]) == {"R/report", "T/s"}
    assert "Skipped" in audit_markdown(audit)


def test_cli_prints_the_table_writes_json_and_fails_on_a_leak(tmp_path, capsys) -> None:
    from medtemporal.benchmark import Manifest, save

    for leak, status in ((None, 0), ("longest", 1)):
        bench = save(tmp_path / str(leak), choice_items(200, 6, leak), Manifest(benchmark="b", version="1", licence="synthetic"))
        assert main(["audit", str(bench), "--json", str(tmp_path / "a.json")]) == status
        out = capsys.readouterr().out
        assert "| T | s | 200 |" in out and ("BLIND-SOLVABLE" in out) == bool(leak)
        assert json.loads((tmp_path / "a.json").read_text())["flagged"] == (["T/s"] if leak else [])


def test_reports_show_the_benchmarks_audit(tmp_path) -> None:
    from helpers.scored_runs import make_items, prediction, write_run

    from medtemporal.benchmark import Manifest, save
    from medtemporal.report import write_report
    from medtemporal.scoring.runs import score_stale

    items = make_items(patients=60, per_patient=3)
    audit = audit_items(items)
    assert audit["subtypes"]
    save(tmp_path / "bench", items, Manifest(benchmark="mi-cxr", version="1", licence="synthetic", audit=audit))
    run = write_run(tmp_path, items, [prediction(i, i.answer) for i in items], bench=tmp_path / "bench")
    score_stale([run])  # as `medtemporal report` does: the report only reads
    write_report([run])
    md, html = (run / "report.md").read_text(), (run / "report.html").read_text()
    assert "## Blind-solvability audit of bench" in md and '<h2 id="audit">Blind-solvability audit of bench' in html
    assert md.count("| Heuristic (95% CI) |") == 1 and html.rstrip().endswith("</html>")
    assert '<div class="scroll"><table><thead><tr><th>Task</th>' in html  # a wide table scrolls
    nothing = audit_html({"subtypes": [], "flagged": [], "skipped": {"TEL/x": "open answers"}})
    assert "<table" not in nothing and "Skipped: TEL/x: open answers." in nothing  # no table of headers alone


def _imports(package: str) -> set[str]:
    """Every ``medtemporal.*`` module named by an import anywhere in ``package`` (function-local ones too)."""
    import ast
    import importlib
    from pathlib import Path

    root = Path(importlib.import_module(package).__file__).parent
    found = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
    return {name for name in found if name.startswith("medtemporal.")}


def test_the_audit_computes_and_never_imports_the_report_that_renders_it():
    """audit <-> report was a two-way tie (audit's renderer borrowed the report's Markdown table)."""
    assert {m for m in _imports("medtemporal.audit") if m.startswith("medtemporal.report")} == set()
    assert "medtemporal.report.tables" in _imports("medtemporal.report")  # the scan sees the report's own imports


def open_items(n: int, seed: int, templated: bool) -> list[Item]:
    """Open questions over five findings; with ``templated`` each finding's answer is mostly one word (as a
    generator's 'what is the level of X?' can be), otherwise drawn uniformly from five."""
    rng = random.Random(seed)
    findings, levels = ["edema", "effusion", "atelectasis", "opacity", "nodule"], ["mild", "small", "moderate",
                                                                                    "large", "severe"]
    items = []
    for i in range(n):
        k = rng.randrange(5)
        answer = levels[k] if templated and rng.random() < 0.8 else rng.choice(levels)
        items.append(Item.create(benchmark="b", task="open", subtype="level", images=(),
                                 question=f"what is the level of the {findings[k]}?", answer_type="open",
                                 answer=answer, meta={"patient_id": f"p{i // 2}"}))
    return items


def test_open_answers_get_the_commonest_answer_of_their_question_text() -> None:
    (row,) = audit_items(open_items(400, 3, templated=True))["subtypes"]
    assert row["chance"] == 0.2 and row["classifier"] is None and row["best"] == "question"
    assert row["question"]["accuracy"] > 0.7 and row["flagged"]
    assert row["heuristic"]["rule"] == "answer_prior" and row["heuristic"]["accuracy"] < 0.4
    (fair,) = audit_items(open_items(400, 3, templated=False))["subtypes"]
    assert not fair["flagged"] and abs(fair["question"]["accuracy"] - 0.2) < 0.08
    table = audit_markdown(audit_items(open_items(400, 3, templated=True)))
    assert "| open | level | 400 | 200 | 20.0 |" in table and "BLIND-SOLVABLE" in table
