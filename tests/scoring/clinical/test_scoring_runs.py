"""Report metrics in scoring and comparison: on-request metrics, unavailable ones, GREEN through a served model."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import pytest

from helpers.fake_openai import TEST_API_KEY, FakeOpenAI
from helpers.tiny_report_models import tiny_chexbert
from medtemporal.benchmark import Manifest, save
from medtemporal.cli import main
from medtemporal.contract import BenchmarkSpec
from medtemporal.errors import InvalidInputError
from medtemporal.registry import register
from medtemporal.runs import JUDGEMENTS, RunFolder, RunScores
from medtemporal.schema import Item, Prediction, write_jsonl
from medtemporal.scoring import extract, score_run
from medtemporal.scoring.clinical import (CT_CLINICAL, CXR_CLINICAL, LEXICAL_R2GEN, LEXICAL_RAW, TEMPORAL,
                                          chexbert)
from medtemporal.scoring.clinical.weights import WEIGHTS
from medtemporal.scoring.clinical.green import green_judge, green_value
from medtemporal.scoring.compare import compare_runs

NAME = "reports-test"
METRICS = ("coco_bleu_4", "temporal_entity_f1", "chexbert_f1_14_micro", "green_score")
register("benchmark", NAME)(BenchmarkSpec(
    name=NAME, version="1", licence="synthetic", description="constructed report items for report-metric tests",
    add_arguments=lambda parser: None, build=lambda args: ([], Manifest(benchmark=NAME, version="1",
                                                                          licence="synthetic")),
    extractors={"report": "raw_text"}, metrics={"report": METRICS},
))
FINDINGS = ["Stable small left pleural effusion.", "New right lower lobe opacity.", "Unchanged moderate cardiomegaly.",
            "Improved pulmonary edema.", "The lungs are clear.", "Worsening bibasilar atelectasis."]


PAPER = "reports-paper-test"
register("benchmark", PAPER)(BenchmarkSpec(
    name=PAPER, version="1", licence="synthetic", description="a paper's report task with ours beside its metric",
    add_arguments=lambda parser: None, build=lambda args: ([], Manifest(benchmark=PAPER, version="1",
                                                                          licence="synthetic")),
    extractors={"report": "raw_text"}, metrics={"report": ("coco_bleu_4",)},
    extra_metrics={"report": ("temporal_entity_f1", "chexbert_f1_14_micro")},
))


def read_scores(run: Path) -> RunScores:
    return RunFolder(run).scores()


def _items(benchmark: str = NAME) -> list[Item]:
    return [Item.create(benchmark=benchmark, task="report", subtype="findings", images=[],
                        question=f"Write the findings of study {k}.", answer_type="open", answer=FINDINGS[k % 6],
                        reference=FINDINGS[k % 6], meta={"patient_id": f"p{k // 2}"}) for k in range(24)]


def _run(root: Path, name: str, outputs: list[str], benchmark: str = NAME) -> Path:
    items = _items(benchmark)
    bench = root / f"bench-{benchmark}"
    if not (bench / "items.jsonl").is_file():
        save(bench, items, Manifest(benchmark=benchmark, version="1", licence="synthetic"))
    run = root / name
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"benchmark": {"path": str(bench), "name": benchmark},
                                                 "model": {"uri": f"baseline:{name}"}, "protocol": "direct"}))
    preds = []
    for item, out in zip(items, outputs):
        found = extract(item, out)
        preds.append(Prediction(item_id=item.id, model=f"baseline:{name}", protocol="direct", request_hash=item.id,
                                raw_output=out, answer=found.answer, extraction=found.rule))
    write_jsonl(run / "predictions.jsonl", preds)
    return run


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    copy = _run(tmp_path, "copy", [FINDINGS[k % 6] for k in range(24)])
    normal = _run(tmp_path, "normal", ["The lungs are clear. No effusion."] * 24)
    return copy, normal


def test_default_scoring_leaves_model_based_metrics_out(runs: tuple[Path, Path]) -> None:
    copy, _ = runs
    score_run(copy, resamples=50)
    scores = read_scores(copy)
    assert {s.metric for s in scores.scores} == {"coco_bleu_4", "temporal_entity_f1"}
    assert scores.score("overall", "temporal_entity_f1").value == pytest.approx(1.0)
    assert scores.score("overall", "coco_bleu_4").ci_low is not None


def test_requested_metrics_are_scored_and_an_unavailable_one_is_reported_with_its_reason(
        runs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy, normal = runs
    with pytest.warns(UserWarning, match="chexbert_f1_14_micro: unavailable"):
        score_run(normal, resamples=50, metrics=("chexbert_f1_14_micro",))
    missing = read_scores(normal).score("overall", "chexbert_f1_14_micro")
    assert math.isnan(missing.value) and "HF_HUB_OFFLINE=1" in missing.unavailable
    assert read_scores(normal).score("overall", "temporal_entity_f1").value < 0.5

    checkpoint, backbone = tiny_chexbert(tmp_path / "chexbert")
    monkeypatch.setenv("MEDTEMPORAL_CHEXBERT", str(checkpoint))
    monkeypatch.setenv("MEDTEMPORAL_CHEXBERT_BACKBONE", str(backbone))
    chexbert._labeller.cache_clear()
    chexbert.chexbert_outputs.cache_clear()
    with pytest.warns(UserWarning, match="green_score: unavailable"):
        score_run(copy, resamples=50, metrics=("all",))
    got = read_scores(copy).score("overall", "chexbert_f1_14_micro")
    assert got.value == pytest.approx(1.0) and got.unavailable is None  # the same reports, the same labels
    assert read_scores(copy).metrics["chexbert_f1_14_micro"]["settings"]["present"] == "positive or uncertain"
    assert "--green URI" in read_scores(copy).score("overall", "green_score").unavailable  # "all" without a model
    chexbert._labeller.cache_clear()
    chexbert.chexbert_outputs.cache_clear()


def test_scoring_again_without_metrics_keeps_the_requested_ones(runs: tuple[Path, Path]) -> None:
    _, normal = runs
    with warnings.catch_warnings():  # unavailable offline: said once per process, as scoring does
        warnings.simplefilter("ignore")
        score_run(normal, resamples=50, metrics=("chexbert_f1_14_micro",))
        score_run(normal, resamples=50)  # e.g. `report` rescoring after new predictions
    again = read_scores(normal)
    assert again.requested_metrics == ["chexbert_f1_14_micro"]
    assert again.score("overall", "chexbert_f1_14_micro") is not None


def test_a_requested_metric_the_family_does_not_list_is_refused(runs: tuple[Path, Path],
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InvalidInputError, match="'radgraph_f1_partial' is not listed for any task of reports-test"):
        score_run(runs[0], resamples=50, metrics=("radgraph_f1_partial",))
    assert main(["score", str(runs[0]), "--metrics", "chexbert_f1_14_mikro"]) != 0
    err = capsys.readouterr().err
    assert "Unknown metric 'chexbert_f1_14_mikro'. Did you mean 'chexbert_f1_14_micro'" in err
    assert not (runs[0] / "scores.json").exists()


GREEN_REPLY = ("[Explanation]:\nThe candidate misses one finding.\n\n[Clinically Significant Errors]:\n"
               "(a) False report of a finding in the candidate: 0.\n(b) Missing a finding present in the reference: "
               "1. effusion\n(e) Mentioning a comparison that isn't in the reference: 1. stable\n\n"
               "[Clinically Insignificant Errors]:\nNo errors.\n\n[Matched Findings]:\n2. lungs; heart\n")


def test_green_asks_the_served_model_once_per_answer_and_compare_reads_its_verdicts(
        runs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy, normal = runs
    monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(tmp_path / "cache.sqlite"))
    with FakeOpenAI.start() as server:
        server.configure(replies=[["Candidate Report:\n    The lungs are clear. No effusion.", GREEN_REPLY],
                                  ["Objective: Evaluate", "I cannot assess these reports."]])
        green = green_judge(server.uri("StanfordAIMI/GREEN-radllama2-7b"))
        score_run(normal, resamples=50, green=green)
        score_run(copy, resamples=50, green=green)
        asked = sum(server.stats()["counts"].values())
        score_run(normal, resamples=50, green=green)  # resumed from judgements.jsonl: nothing asked again
        counts = server.stats()["counts"]
        assert sum(counts.values()) == asked == len(counts) >= 2  # each distinct prompt asked once (twins share)
    normal_scores, copy_scores = read_scores(normal), read_scores(copy)
    expected = green_value({"matched": 2, "b": 1, "e": 1})
    assert expected == pytest.approx(0.5)
    assert normal_scores.score("overall", "green_score").value == pytest.approx(expected)
    assert normal_scores.green["counts"]["judged"] == 24 and normal_scores.green["counts"]["from_file"] == 24
    assert copy_scores.green["counts"]["unparseable"] == 24  # a reply without [Matched Findings]
    assert math.isnan(copy_scores.score("overall", "green_score").value)
    lines = (normal / JUDGEMENTS).read_text().splitlines()
    assert len(lines) == 24 and all(json.loads(line)["kind"] == "answer" for line in lines)  # no calibration rows

    comparison = compare_runs(normal, copy, resamples=50, metrics=("temporal_entity_f1", "coco_bleu_4"))
    assert {r.metric for r in comparison.rows} == {"temporal_entity_f1", "coco_bleu_4"}
    row = comparison.row("overall", "temporal_entity_f1")
    assert row.diff < 0 and row.ci_low is not None and row.ci_high < 0
    green_rows = compare_runs(normal, normal, resamples=50, metrics=("green_score",))
    assert green_rows.row("overall", "green_score").a == pytest.approx(expected)


def test_compare_cli_on_a_named_metric(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    copy, normal = runs
    assert main(["compare", str(normal), str(copy), "--metric", "temporal_entity_f1,coco_bleu_4",
                 "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert "| overall | temporal_entity_f1 |" in out and "| overall | coco_bleu_4 |" in out
    with pytest.raises(KeyError, match="Unknown metric 'ratescore_typo'"):
        compare_runs(normal, copy, metrics=("ratescore_typo",))


def test_ours_beside_a_papers_metrics_is_scored_by_default_and_labelled(tmp_path: Path) -> None:
    from medtemporal.report import load_runs
    from medtemporal.report.tables import metric_title

    run = _run(tmp_path, "paper", ["The lungs are clear."] * 24, benchmark=PAPER)
    score_run(run, resamples=50)
    scores = read_scores(run)
    assert {s.metric for s in scores.scores} == {"coco_bleu_4", "temporal_entity_f1"}  # CheXbert: on request
    assert scores.metrics["temporal_entity_f1"]["ours"] is True and "ours" not in scores.metrics["coco_bleu_4"]
    runs = load_runs([run])
    assert metric_title(runs, "temporal_entity_f1") == "temporal_entity_f1 (%), ours (not in the paper)"
    assert metric_title(runs, "coco_bleu_4") == "coco_bleu_4 (%)"


def test_list_shows_what_each_report_metric_needs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "metric"]) == 0
    lines = capsys.readouterr().out.splitlines()
    needs = {lines[k - 1].split()[0]: line.strip() for k, line in enumerate(lines) if line.strip().startswith("needs:")}
    assert "StanfordAIMI/RRG_scorers/chexbert.pth (1.31 GB, or $MEDTEMPORAL_CHEXBERT)" in needs["chexbert_f1_14_micro"]
    assert "on request: score --metrics radgraph_f1_partial" in needs["radgraph_f1_partial"]
    assert "GPU" in needs["green_score"] and "score --green URI" in needs["green_score"]
    assert needs["temporal_entity_f1"].startswith("needs: nothing")
    assert "Java" in needs["r2gen_meteor"]


EVERY = "reports-every-test"
register("benchmark", EVERY)(BenchmarkSpec(
    name=EVERY, version="1", licence="synthetic", description="every report metric on one task",
    add_arguments=lambda parser: None, build=lambda args: ([], Manifest(benchmark=EVERY, version="1",
                                                                          licence="synthetic")),
    extractors={"report": "raw_text"},
    metrics={"report": (*LEXICAL_RAW, *LEXICAL_R2GEN, *TEMPORAL, *CXR_CLINICAL, *CT_CLINICAL)},
))


@pytest.mark.slow  # imports every metric's package (RadEval's RadGraph, medspacy) and starts the METEOR jar
def test_offline_every_model_based_metric_is_unavailable_with_its_reason_and_the_rest_is_scored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for weights in WEIGHTS.values():
        monkeypatch.delenv(weights.env, raising=False)
    run = _run(tmp_path, "every", [FINDINGS[(k + 1) % 6] for k in range(24)], benchmark=EVERY)
    with pytest.warns(UserWarning, match="unavailable"):
        score_run(run, resamples=50, metrics=("all",))
    scores = read_scores(run)
    model_based = dict.fromkeys((*CXR_CLINICAL, *CT_CLINICAL))
    for name in model_based:
        reason = scores.score("overall", name).unavailable
        assert reason and reason.endswith(".") and "\n" not in reason, name
        assert ("HF_HUB_OFFLINE=1" in reason) or ("--green URI" in reason), (name, reason)
    for name in (*LEXICAL_RAW, *LEXICAL_R2GEN, *TEMPORAL):
        got = scores.score("overall", name)
        assert got.unavailable is None and not math.isnan(got.value), name


def test_offline_a_metric_without_its_weights_is_refused_at_once_and_nothing_is_rescored(
        runs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for weights in WEIGHTS.values():
        monkeypatch.delenv(weights.env, raising=False)
    copy, _ = runs
    score_run(copy, resamples=50)
    before = (copy / "scores.json").read_bytes()
    capsys.readouterr()
    assert main(["score", str(copy), "--metrics", "chexbert_f1_14_micro,radgraph_f1_partial"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("medtemporal: error: Nothing scored") and "\n" not in error
    assert "HF_HUB_OFFLINE=1" in error and "MEDTEMPORAL_CHEXBERT=" in error and "MEDTEMPORAL_RADGRAPH_XL=" in error
    assert (copy / "scores.json").read_bytes() == before


@pytest.mark.slow  # every model-based metric on stand-ins (RadGraph twice, CheXbert, RaTEScore, two encoders)
def test_score_all_on_a_constant_no_run_and_short_outputs_exits_0_with_every_metric_a_number_or_unavailable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 41: `score --metrics all` of `baseline:constant-No` (and of "", ".", one non-ASCII character and a
    20,000-character output) exits 0; each metric is a number, or unavailable with one sentence (GREEN: no model)."""
    pytest.importorskip("radeval", reason="RadGraph needs `pip install --no-deps radeval==2.2.1`")
    pytest.importorskip("RaTEScore", reason="RaTEScore needs ratescore and medspacy")
    from helpers.tiny_report_models import tiny_bert_folder, tiny_radgraph, tiny_ratescore

    from medtemporal.scoring.clinical import bertscores, radgraph, ratescore

    checkpoint, backbone = tiny_chexbert(tmp_path / "chexbert")
    ner, encoder = tiny_ratescore(tmp_path / "ratescore")
    bert = tiny_bert_folder(tmp_path / "bert", with_weights=True, layers=6)
    for key, value in (("CHEXBERT", checkpoint), ("CHEXBERT_BACKBONE", backbone), ("RATESCORE_NER", ner),
                       ("RATESCORE_ENCODER", encoder), ("BERTSCORE_DISTILBERT", bert),
                       ("BERTSCORE_DISTILROBERTA", bert), ("CTRATE_CLASSIFIER", tmp_path / "none"),
                       ("RADGRAPH_XL", tiny_radgraph(tmp_path / "rgxl")),
                       ("RADGRAPH", tiny_radgraph(tmp_path / "rg", model_type="radgraph"))):
        monkeypatch.setenv(f"MEDTEMPORAL_{key}", str(value))
    for cache in (chexbert._labeller, chexbert.chexbert_outputs, radgraph._scorer, radgraph.radgraph_rewards,
                  ratescore._scorer, ratescore.ratescores, bertscores._distilbert):
        cache.cache_clear()
    outputs = ["No"] * 20 + ["", ".", "é", "the lungs are clear . " * 910]
    run = _run(tmp_path, "constant-No", outputs, benchmark=EVERY)
    assert main(["score", str(run), "--metrics", "all", "--resamples", "20"]) == 0
    for score in (s for s in read_scores(run).scores if s.group == "overall"):
        if score.unavailable:
            assert score.metric in ("green_score", *CT_CLINICAL[:2]) and score.unavailable.endswith("."), score
        else:
            assert math.isfinite(score.value), score.metric
    for cache in (chexbert._labeller, chexbert.chexbert_outputs, radgraph._scorer, radgraph.radgraph_rewards,
                  ratescore._scorer, ratescore.ratescores, bertscores._distilbert):
        cache.cache_clear()
