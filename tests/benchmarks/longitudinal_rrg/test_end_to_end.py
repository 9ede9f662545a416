"""longitudinal-rrg end to end: phantoms → build → run (the copy-prior baseline; a model on loopback through the
real openai client, answering as VLMs do) → score → report, and what ``medtemporal audit`` says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers.fake_openai import TEST_API_KEY, FakeOpenAI

from medtemporal.benchmark import load
from medtemporal.cli import main
from medtemporal.runs import RunFolder

pytestmark = pytest.mark.slow  # a tiny MAIRA-2 run and pycocoevalcap's Java scoring: about a minute

REPLIES = [
    ["PRIOR_REPORT", "<think>The prior shows an effusion; compare.</think>\n**Findings:** Interval worsening of the "
                     "right pleural effusion. No pneumothorax.\n\n**Impression:** Worsening effusion."],
    ["Provide", "FINDINGS: The lungs are clear. No pleural effusion.\nIMPRESSION: No acute cardiopulmonary process."],
]
"""Scripted outputs: a whole report with headers in Markdown after a reasoning block where the prior report is
shown, a plain whole report elsewhere."""


def _predictions(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def copy_prior_run(rrg_bench: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("rrg-copy") / "run"
    assert main(["run", str(rrg_bench), "--model", "longitudinal_rrg:copy-prior", "--out", str(run),
                 "--no-progress"]) == 0
    return run


@pytest.fixture(scope="module")
def model_run(rrg_bench: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    tmp = tmp_path_factory.mktemp("rrg-model")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", TEST_API_KEY)
        mp.setenv("MEDTEMPORAL_CACHE", str(tmp / "cache.sqlite"))
        with FakeOpenAI.start() as server:
            server.configure(keep_bodies=True, replies=REPLIES)
            assert main(["run", str(rrg_bench), "--model", server.uri("fake-vlm"), "--concurrency", "4",
                         "--out", str(tmp / "run"), "--no-progress"]) == 0
            bodies = server.stats()["bodies"]
    return tmp / "run", bodies


def test_the_model_gets_maira2_s_layout_with_the_papers_generation_settings(rrg_bench, model_run):
    _, bodies = model_run
    items = {i.question: i for i in load(rrg_bench).items}
    assert len(bodies) == len(load(rrg_bench).items)
    for body in bodies:
        assert body["temperature"] == 0.0 and body["max_tokens"] == 300
        parts = body["messages"][-1]["content"]
        text = [p["text"] for p in parts if p["type"] == "text"]
        images = sum(p["type"] == "image_url" for p in parts)
        with_prior = any(t.startswith("PRIOR_REPORT: ") for t in text)
        assert text[-1].startswith(("Provide a description of the findings", "Provide the impression"))
        assert ("in comparison to the prior frontal image" in text[-1]) == with_prior
        assert images == len(text) - 1 - with_prior  # one caption per image
        assert any(t.startswith("Prior study (visit 1, ") for t in text) == with_prior
    assert set(items) == {"Provide a description of the findings in the radiology study.",
                          "Provide the impression of the radiology study."}


def test_the_asked_section_is_scored_and_the_whole_output_beside_it(rrg_bench, model_run):
    run, _ = model_run
    items = {i.id: i for i in load(rrg_bench).items}
    predictions = _predictions(run)
    assert len(predictions) == len(items)
    assert all(p["extraction"].startswith("longitudinal_rrg_section") for p in predictions)
    for p in predictions:
        item = items[p["item_id"]]
        want = {("findings", True): "Interval worsening of the right pleural effusion. No pneumothorax.",
                ("impression", True): "Worsening effusion.",
                ("findings", False): "The lungs are clear. No pleural effusion.",
                ("impression", False): "No acute cardiopulmonary process."}[(item.task, item.subtype == "with_prior")]
        assert p["answer"] == want
    scores = RunFolder(run).scores()
    groups = {s.group for s in scores.scores}
    assert {"overall", "task:findings", "task:impression", "subtypes:findings/With prior",
            "subtypes:findings/No prior", "subtypes:impression/With prior", "subtypes:impression/No prior"} <= groups
    overall = {s.metric: s for s in scores.scores if s.group == "overall"}
    findings = [i for i in items.values() if i.task == "findings"]
    assert overall["r2gen_rouge_l"].n == len(findings)  # Overall is the findings task, the field's headline
    assert "whole output" in scores.variants


def test_copy_prior_restates_the_prior_and_has_nothing_on_no_prior_items(rrg_bench, copy_prior_run):
    items = {i.id: i for i in load(rrg_bench).items}
    for p in _predictions(copy_prior_run):
        item = items[p["item_id"]]
        prior = item.meta["prior"]
        assert p["answer"] == (prior[item.task] or prior["findings"] or prior["impression"] if prior else None)
    scores = RunFolder(copy_prior_run).scores()
    # the empty answers of no-prior items score 0 on every metric the run scored (report-metrics.md), R2Gen-cleaned
    # included; Libra's formula as released is the one that pays them (1.0 where the reference names no change)
    no_prior = [s for s in scores.scores if s.group in ("subtypes:findings/No prior", "subtypes:impression/No prior")]
    assert {s.metric for s in no_prior} >= {"r2gen_bleu_4", "r2gen_meteor", "coco_rouge_l", "temporal_entity_f1"}
    for s in no_prior:
        if s.metric != "temporal_entity_f1_libra" and not s.unavailable:
            assert s.value == pytest.approx(0, abs=1e-9) and s.invalid == s.n > 0, (s.group, s.metric)


def test_the_report_puts_copy_prior_first_and_each_run_against_it(rrg_bench, copy_prior_run, model_run, tmp_path):
    out = tmp_path / "report"
    assert main(["report", str(model_run[0]), str(copy_prior_run), "--out", str(out)]) == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "longitudinal_rrg:copy-prior" in html and "| Run | findings: With prior | findings: No prior |" in md
    assert "Text-only floor of open answers" in html
    tables = (out / "longitudinal-rrg_tables.md").read_text(encoding="utf-8")
    bench = load(rrg_bench)
    findings = [i for i in bench.items if i.task == "findings"]
    with_prior = sum(i.subtype == "with_prior" for i in findings)
    assert f"{len(findings)} studies of {bench.manifest.config['patients']} patients" in tables
    lexical = tables.split("### findings: Lexical, R2Gen-cleaned text")[1].split("###")[0]
    rows = [line for line in lexical.splitlines() if line.startswith("| ") and not line.startswith(("| Run", "| ---"))]
    assert [r.split(" | ")[1].split(" (n")[0] for r in rows] == ["all items", "with prior", "no prior"] * 2
    assert all(r.startswith("| longitudinal_rrg:copy-prior (reference) |") for r in rows[:3])
    assert f"| with prior (n = {with_prior}) |" in rows[1] and "fake-vlm" in rows[3]
    assert "### findings: Temporal" in tables and "| temporal_entity_f1 |" in tables
    delta = tables.split("each run minus copy-prior on with-prior items")[1].split("###")[0]
    assert re.search(r"\| [^|]*fake-vlm \| [+-]\d", delta)
    assert "[The side-by-side viewer](longitudinal-rrg_viewer.html)" in tables
    assert (out / "longitudinal-rrg_viewer.html").is_file() and (out / "longitudinal-rrg_viewer-0.js").is_file()
    cxrmate = (out / "longitudinal-rrg_longitudinal-rrg-copy-prior_cxrmate.csv").read_text(encoding="utf-8")
    assert cxrmate.splitlines()[0] == "findings,impression,study_id"
    assert len(cxrmate.strip().splitlines()) == 1 + len(findings)
    mlrg = (out / "longitudinal-rrg_longitudinal-rrg-copy-prior_mlrg.csv").read_text(encoding="utf-8")
    assert mlrg.splitlines()[0] == "dicom_id,labels,report"


def test_audit_prints_the_text_only_floor_and_flags_nothing(rrg_bench, capsys):
    assert main(["audit", str(rrg_bench)]) == 0
    out = capsys.readouterr().out
    assert "Text-only floor of open answers" in out and "| findings | with_prior |" in out
    floor = load(rrg_bench).manifest.audit["text_floor"]["rows"]
    copy = {(r["task"], r["subtype"]): r["value"] for r in floor if r["baseline"] == "copy-prior"}
    assert copy[("findings", "no_prior")] == 0 and copy[("findings", "with_prior")] > 0


def test_a_metric_that_cannot_be_computed_here_leaves_the_delta_table_standing(copy_prior_run, model_run,
                                                                                monkeypatch):
    """A run scored with GREEN or an encoder, reported where its per-item statistics cannot be recomputed: the
    reference's unavailable metric is left out, a run's shows "unavailable"; the other metrics are still paired."""
    from medtemporal.benchmarks.longitudinal_rrg import report
    from medtemporal.errors import UnavailableError
    from medtemporal.report import load_runs

    runs = report.ordered(load_runs([model_run[0], copy_prior_run]))
    per_item = report.per_item

    def partly(outcomes, name):
        reference = outcomes is runs[0].outcomes
        if name == "r2gen_cider" and reference or name == "r2gen_meteor" and not reference:
            raise UnavailableError(f"{name}: no stored verdicts")
        return per_item(outcomes, name)

    monkeypatch.setattr(report, "per_item", partly)
    table = report.delta_table(runs, "findings")
    header, _, row = table.splitlines()[:3]
    assert "r2gen_cider" not in header and "r2gen_meteor" in header and "r2gen_bleu_4" in header
    cells = dict(zip(header.strip("| ").split(" | "), row.strip("| ").split(" | ")))
    assert cells["r2gen_meteor"] == "unavailable" and re.match(r"[+-]\d", cells["r2gen_bleu_4"])


def test_the_terminal_table_shows_the_headline_metrics_split_by_prior_and_no_repeated_rows(copy_prior_run, capsys):
    assert main(["score", str(copy_prior_run), "--no-progress"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("| Task |"))
    assert header == "| Task | Metric | Score [CI] | With prior | No prior | Chance | n | Invalid | Missing |"
    rows = [line.split(" | ") for line in out.splitlines() if line.startswith(("| findings", "| impression"))]
    assert {r[1] for r in rows} == {"r2gen_bleu_1", "r2gen_bleu_4", "r2gen_meteor", "r2gen_rouge_l", "r2gen_cider",
                                    "temporal_entity_f1"}
    assert "Overall" not in out  # Overall covers findings alone: it would repeat the findings rows
    bleu4 = next(r for r in rows if r[0] == "| findings" and r[1] == "r2gen_bleu_4")
    assert float(bleu4[3]) > 0 and float(bleu4[4]) == 0  # copy-prior restates the prior: nothing without one
    assert f"`medtemporal runs show {copy_prior_run}`" in out
    assert main(["runs", "show", str(copy_prior_run)]) == 0
    full = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| findings")]
    assert len(full) > len([r for r in rows if r[0] == "| findings"]) and any("coco_cider" in line for line in full)
