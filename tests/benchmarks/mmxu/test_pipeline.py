"""MMXU end to end on phantoms: build (audit, blind picks) → run (baselines, a loopback model) → score → report,
the exports and the demo section."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from helpers.fake_openai import TEST_API_KEY, FakeOpenAI

from medtemporal.audit import READERS
from medtemporal.benchmark import load
from medtemporal.contract import spec
from medtemporal.benchmarks.mmxu.release import CURRENT_LABEL, PRIOR_LABEL
from medtemporal.cli import main
from medtemporal.interop.parquet import item_from_row
from medtemporal.prompts import PromptSet
from medtemporal.protocols.direct import format_options
from medtemporal.report.audit import READER_NAMES
from medtemporal.scoring.extraction import rule_id
from medtemporal.runs import RunFolder


def test_the_build_audits_across_content_types_and_keeps_each_blind_pick(bench: Path, release: Path,
                                                                         tmp_path: Path) -> None:
    b = load(bench)
    audit = b.manifest.audit
    assert b.manifest.licence == "synthetic" and audit["method"]["fit"] == "task"
    rows = {r["subtype"]: r for r in audit["subtypes"]}
    assert set(rows) == {"no change", "worsen", "improved", "(all)"} and rows["(all)"]["n"] == len(b.items)
    assert "change/(all)" not in audit["flagged"] and all(rows[t].get("breakdown") for t in ("no change", "worsen",
                                                                                              "improved"))
    assert audit["flagged"] == [f"change/{t}" for t in ("improved", "no change", "worsen") if rows[t]["flagged"]]
    assert all(abs(rows["(all)"][r]["accuracy"] - 0.25) < 0.08 for r in READERS)  # the text alone says nothing
    assert all(i.meta["blind_pick"] in i.options for i in b.items)
    best = rows["(all)"]["best"]
    assert b.manifest.config["blind_reader"] == best and b.manifest.config["blind_picks"] is True
    right = sum(i.meta["blind_pick"] == i.answer for i in b.items) / len(b.items)
    assert right == pytest.approx(rows["(all)"][best]["accuracy"], abs=1e-4)  # the picks are the best reader's
    assert main(["build", "mmxu", "--official", str(release), "--mimic-cxr-jpg", str(b.image_root),
                 "--out", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again" / "items.jsonl").read_bytes() == (bench / "items.jsonl").read_bytes()


def test_baselines_run_score_and_report_the_audit_beside_the_score(bench: Path, tmp_path: Path) -> None:
    runs = []
    for model in ("baseline:oracle", "baseline:random"):
        runs.append(tmp_path / model.split(":")[1])
        assert main(["run", str(bench), "--model", model, "--out", str(runs[-1]), "--no-progress"]) == 0
    oracle = RunFolder(runs[0]).scores()
    for metric in ("accuracy", "mmxu_blind_hard_accuracy", "mmxu_blind_adjusted"):
        for group in ("overall", "subtype:no change", "subtype:worsen", "subtype:improved"):
            assert oracle.score(group, metric).value == 1.0
    random = RunFolder(runs[1]).scores().score("overall", "accuracy")
    assert random.ci_low < 0.3 and random.chance == 0.25
    assert main(["report", *map(str, runs), "--out", str(tmp_path / "report")]) == 0
    tables = (tmp_path / "report" / "mmxu_tables.md").read_text()
    assert "| System | Overall | no change | worsen | improved | Invalid | Missing |" in tables
    reader = READER_NAMES[load(bench).manifest.config["blind_reader"]]
    assert "| baseline:oracle | 100.0 [100.0, 100.0] |" in tables and f"| Blind reader (text only: {reader}) |" in tables
    assert "| Content type | n | Chance | Heuristic (95% CI) | Rule | Options (95% CI) | Question + options" in tables
    assert "## Accuracy where the blind reader is wrong (ours)" in tables and "## Blind-adjusted accuracy (ours)" in tables
    assert "| Overall |" in tables.split("## Blind-solvability audit by content type")[1]
    assert (tmp_path / "report" / "mmxu_accuracy.png").read_bytes().startswith(b"\x89PNG")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "## Blind-solvability audit of bench" in md and "| change | (all) |" in md and "| change | worsen |" in md


def test_a_loopback_model_sees_prior_then_current_and_our_prompt_at_temperature_0(
        bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(tmp_path / "cache.sqlite"))
    items = load(bench).items
    right, wrong, vague = items[:3]
    other = next(x for x in "ABCD" if x != wrong.answer)
    replies = [[format_options(right.options), f"**Answer: {right.answer}**\n\nThe effusion has increased."],
               [format_options(wrong.options), f"Comparing both images, the answer is ({other})."],
               [format_options(vague.options), "It is either A or B; the images are hard to compare."]]
    with FakeOpenAI.start() as server:
        server.configure(keep_bodies=True, replies=replies)
        main(["run", str(bench), "--model", server.uri(), "--out", str(tmp_path / "run"), "--no-progress"])
        bodies = server.stats()["bodies"]
    assert len(bodies) == len(items)
    prompts = PromptSet()
    by_text = {}
    for body in bodies:
        assert body["temperature"] == 0
        parts = body["messages"][-1]["content"]
        assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url", "text"]
        assert (parts[0]["text"], parts[2]["text"]) == (PRIOR_LABEL, CURRENT_LABEL)
        by_text[parts[4]["text"]] = body
    for item in items:  # exactly our template: no subtype, no blind pick, nothing else
        text = prompts.render("mmxu_direct", question=item.question, options=format_options(item.options))
        assert text in by_text and "content_type" not in text and "##" not in text
    answers = {}
    for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines():
        row = json.loads(line)
        answers[row["item_id"]] = row["answer"]
    assert (answers[right.id], answers[wrong.id], answers[vague.id]) == (right.answer, other, None)
    scores = RunFolder(tmp_path / "run").scores()
    assert scores.score("overall", "accuracy").invalid >= 1
    assert scores.score("overall", "mmxu_blind_adjusted") is not None


@pytest.mark.parametrize("mode", ["line", "lines"])
def test_a_model_that_echoes_the_options_is_invalid_on_every_item(bench: Path, tmp_path: Path, mode: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(tmp_path / "cache.sqlite"))
    with FakeOpenAI.start() as server:
        server.configure(echo=mode)
        assert main(["run", str(bench), "--model", server.uri("echo-vlm"), "--out", str(tmp_path / "run"),
                     "--no-progress"]) == 0
    rows = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    first = load(bench).items[0]
    assert rows[0]["raw_output"] == ("\n" if mode == "lines" else " ").join(format_options(first.options).splitlines())
    assert all(r["answer"] is None for r in rows)
    scores = RunFolder(tmp_path / "run").scores()
    assert scores.counts["rules"] == {rule_id("letter"): len(rows)} and rule_id("letter") == "letter@3"
    for metric in ("accuracy", "mmxu_blind_hard_accuracy"):
        s = scores.score("overall", metric)
        assert s.value == 0.0 and s.invalid == s.n == len(rows)


def test_exports_to_parquet_vlmevalkit_lmms_eval_and_the_release(bench: Path, release: Path, tmp_path: Path) -> None:
    items = load(bench).items
    assert main(["export", str(bench), "--format", "mmxu", "--out", str(tmp_path / "MMXU-test.jsonl")]) == 0
    assert (tmp_path / "MMXU-test.jsonl").read_bytes() == release.read_bytes()
    assert main(["export", str(bench), "--format", "parquet", "--out", str(tmp_path / "b.parquet")]) == 0
    rows = pq.read_table(tmp_path / "b.parquet").to_pylist()
    assert rows[0]["visit_labels"] == ["Prior image", "Current image"]
    assert [item_from_row(r) for r in rows] == items  # every field, the blind pick included
    assert main(["export", str(bench), "--format", "vlmevalkit", "--out", str(tmp_path / "b.tsv")]) == 0
    tsv = pd.read_csv(tmp_path / "b.tsv", sep="\t")
    assert len(tsv) == len(items) and list(tsv["answer"]) == [i.answer for i in items]
    assert tsv["hint"][0] == "The 2 images are shown in order: image 1 is Prior image, image 2 is Current image."
    assert main(["export", str(bench), "--format", "lmms-eval", "--out", str(tmp_path / "lmms")]) == 0
    assert list((tmp_path / "lmms").glob("*mmxu*.yaml"))


def test_the_demo_section_writes_its_phantoms_once_and_ends_in_its_report(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(tmp_path / "cache.sqlite"))
    section = spec("mmxu").demo(tmp_path, 30, 0)
    commands = section.commands()
    assert [c[:2] for c in commands[:3]] == [["phantoms", "cxr"], ["phantoms", "mmxu"], ["build", "mmxu"]]
    for argv in commands:
        assert main(argv) == 0, argv
    assert section.report.is_file() and (section.report.parent / "mmxu_tables.md").is_file()
    assert [c[0] for c in spec("mmxu").demo(tmp_path, 30, 0).commands()] == ["build", "run", "run", "report"]


def test_baselines_run_on_the_questions_alone_and_a_model_that_reads_images_is_refused(release: Path, tmp_path,
                                                                                         capsys) -> None:
    """As 3D-RAD's baselines run without volumes: the released questions, imported without images, run with a
    baseline (each image named in the prompt, not sent); a model that reads images is refused before it starts."""
    bench = tmp_path / "questions"
    assert main(["build", "mmxu", "--official", str(release), "--no-verify-images", "--no-audit", "--out",
                 str(bench)]) == 0
    for model in ("baseline:random", "baseline:majority"):
        assert main(["run", str(bench), "--model", model, "--out", str(tmp_path / model), "--no-progress"]) == 0
        assert RunFolder(tmp_path / model).scores().counts["answered"] == len(load(bench).items)
    prompt = json.loads((tmp_path / "baseline:random" / "predictions.jsonl").read_text().splitlines()[0])["prompt"]
    texts = [p["text"] for p in prompt[0]["parts"] if "text" in p]
    assert texts[0].startswith(f"{PRIOR_LABEL} Image files/") and texts[0].endswith("(not sent: this model reads no "
                                                                                  "images).")
    capsys.readouterr()
    with FakeOpenAI.start() as server:
        assert main(["run", str(bench), "--model", server.uri("vlm"), "--out", str(tmp_path / "vlm"),
                     "--no-progress"]) == 2
    assert "images are missing under" in capsys.readouterr().err
