"""Medical-Diff-VQA end to end: phantoms → build → run (a baseline; a model on loopback through the real openai
client, answering as VLMs do) → score (checked against pycocoevalcap on the run's own pairs) → report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.fake_openai import TEST_API_KEY, FakeOpenAI

from medtemporal.benchmark import load
from medtemporal.benchmarks.medical_diff_vqa import metrics as diffvqa_metrics
from medtemporal.cli import main
from medtemporal.phantoms.cxr import CxrPhantom
from medtemporal.runs import RunFolder

pytestmark = pytest.mark.slow  # pycocoevalcap's Java scoring of several runs: about 45 s

needs_java = pytest.mark.skipif(not diffvqa_metrics.java_status()[0],
                                reason=f"pycocoevalcap cannot run here: {diffvqa_metrics.java_status()[1]}")
REPLIES = [
    ["Answer yes or no.", "Yes, there is."],
    ["which view", "This is a PA view."],
    ["what level", "moderate"],
    ["what abnormalities", "Pleural effusion, edema."],
    ["one sentence per change", "the main image has an additional finding of edema than the reference image."],
]
"""Scripted outputs by prompt; other open questions get the server's default "The answer is X." """


@pytest.fixture(scope="module")
def bench(diffvqa: Path, cxr_phantoms: CxrPhantom, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("diffvqa-e2e") / "bench"
    assert main(["build", "medical-diff-vqa", "--diff-vqa", str(diffvqa), "--mimic-cxr-jpg",
                 str(cxr_phantoms.mimic_cxr_jpg), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def model_run(bench: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    tmp = tmp_path_factory.mktemp("diffvqa-run")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", TEST_API_KEY)
        mp.setenv("MEDTEMPORAL_CACHE", str(tmp / "cache.sqlite"))
        with FakeOpenAI.start() as server:
            server.configure(keep_bodies=True, replies=REPLIES)
            assert main(["run", str(bench), "--model", server.uri("fake-vlm"), "--out", str(tmp / "run"),
                         "--no-progress"]) == 0
            bodies = server.stats()["bodies"]
    return tmp / "run", bodies


def test_both_images_go_out_reference_first_with_our_prompt_per_task(bench, model_run):
    _, bodies = model_run
    items = load(bench).items
    assert len(bodies) == len(items)
    for body in bodies:
        parts = body["messages"][-1]["content"]
        assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url", "text"]
        assert (parts[0]["text"], parts[2]["text"]) == ("Last visit image (reference image):",
                                                        "Current visit image (main image):")
        assert parts[-1]["text"].startswith("You are given two chest X-ray images of the same patient")
        assert body["temperature"] == 0.0 and body["max_tokens"] == 256
    endings = {b["messages"][-1]["content"][-1]["text"].splitlines()[-1][:20] for b in bodies}
    assert endings == {"Answer yes or no.", "Answer with a short ", "Answer in lower case"}


@needs_java
def test_scores_equal_pycocoevalcap_on_the_runs_own_pairs_and_exact_match_accuracy(bench, model_run):
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    run, _ = model_run
    items = {it.id: it for it in load(bench).items}
    predictions = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == len(items)
    pairs = [(items[p["item_id"]], p["answer"]) for p in predictions]
    tokenizer = PTBTokenizer()
    gts = tokenizer.tokenize({i: [{"caption": it.reference}] for i, (it, _) in enumerate(pairs)})
    res = tokenizer.tokenize({i: [{"caption": a or ""}] for i, (_, a) in enumerate(pairs)})
    scores = RunFolder(run).scores()
    bleu, _ = Bleu(4).compute_score(gts, res, verbose=0)
    for n in (1, 2, 3, 4):
        assert scores.score("overall", f"diffvqa_bleu_{n}").value == pytest.approx(bleu[n - 1], abs=1e-12)
    assert scores.score("overall", "diffvqa_meteor").value == pytest.approx(
        diffvqa_metrics.meteor_scorer().compute_score(gts, res)[0], abs=1e-12)
    assert scores.score("overall", "diffvqa_rouge_l").value == pytest.approx(Rouge().compute_score(gts, res)[0])
    assert scores.score("overall", "diffvqa_cider").value == pytest.approx(Cider().compute_score(gts, res)[0])
    closed = [it for it, _ in pairs if it.task == "closed"]
    assert scores.score("task:closed", "accuracy").value == pytest.approx(np.mean([it.answer == "Yes" for it in closed]))
    levels = [it for it, _ in pairs if it.subtype == "level"]
    assert scores.score("subtype:level", "accuracy").value == pytest.approx(np.mean([it.answer == "moderate"
                                                                                    for it in levels]))
    assert scores.score("subtype:view", "accuracy").value == pytest.approx(np.mean(
        [it.answer == "Yes" for it, _ in pairs if it.subtype == "view" and it.task == "closed"] +
        [False for it, _ in pairs if it.subtype == "view" and it.task == "open"]))  # "This is a PA view." ≠ "PA view"
    assert scores.score("task:difference", "accuracy") is None  # EKAID's acc leaves difference questions out
    assert scores.score("overall", "accuracy").n == len(items) - sum(it.task == "difference" for it in items.values())


@needs_java
def test_the_ekaid_variant_equals_ekaids_evaluation_of_the_raw_outputs(bench, model_run):
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    run, _ = model_run
    items = {it.id: it for it in load(bench).items}
    rows = [(items[p["item_id"]], p["raw_output"]) for p in
            map(json.loads, (run / "predictions.jsonl").read_text().splitlines())]
    ekaid = {(s["group"], s["metric"]): s["value"] for s in RunFolder(run).scores().variants["EKAID"]["scores"]}
    counted = [(it, out) for it, out in rows if "what has changed" not in it.question]  # evaluate_score.py L232
    right = [it.reference == out.strip() for it, out in counted]
    closed = [ok for (it, _), ok in zip(counted, right) if it.reference in ("yes", "no")]
    assert ekaid[("overall", "diffvqa_ekaid_accuracy")] == pytest.approx(np.mean(right))
    assert ekaid[("task:closed", "diffvqa_ekaid_accuracy")] == pytest.approx(np.mean(closed)) == 0.0  # "Yes, there is."
    tokenizer = PTBTokenizer()
    for qtype in ("abnormality", "level", "difference"):
        subset = [(it, out) for it, out in rows if it.meta["question_type"] == qtype]
        gts = tokenizer.tokenize({i: [{"caption": it.reference}] for i, (it, _) in enumerate(subset)})
        res = tokenizer.tokenize({i: [{"caption": out}] for i, (_, out) in enumerate(subset)})
        assert ekaid[(f"subtype:{qtype}", "diffvqa_bleu_1")] == pytest.approx(
            Bleu(4).compute_score(gts, res, verbose=0)[0][0], abs=1e-12)
        assert ekaid[(f"subtype:{qtype}", "diffvqa_cider_by_type")] == pytest.approx(
            Cider().compute_score(gts, res)[0], abs=1e-12)


@needs_java
def test_baselines_and_the_report_in_ekaids_layout(bench, model_run, tmp_path):
    oracle = tmp_path / "oracle"
    assert main(["run", str(bench), "--model", "baseline:oracle", "--out", str(oracle), "--no-progress"]) == 0
    scores = RunFolder(oracle).scores()
    assert scores.score("overall", "accuracy").value == 1.0 and scores.score("overall", "diffvqa_bleu_1").value == \
        pytest.approx(1.0) and scores.score("overall", "diffvqa_rouge_l").value == pytest.approx(1.0)
    assert main(["report", str(oracle), str(model_run[0]), "--out", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "medical-diff-vqa_tables.md").read_text()
    for heading in ("## All questions (EKAID `caption_metric`)", "## Difference questions, on their own",
                    "## Per question type", "## Accuracy (EKAID `acc`; difference questions excluded)",
                    "### Audit (shared audit"):
        assert heading in text
    assert "| Run | BLEU-1 | BLEU-2 | BLEU-3 | BLEU-4 | METEOR | ROUGE-L | CIDEr | n | Test set |" in text
    assert "| Text alone (the audit's best reader) |" in text and "| baseline:oracle | 100.0 | 100.0 | 100.0 |" in text
    assert "## As EKAID scores it (variant `EKAID`)" in text and "### Per question type: baseline:oracle" in text
    tables = [block for block in text.split("\n\n") if block.startswith("| Run |")]
    assert tables and all("| Test set |" in t and "the release's test split" in t for t in tables)
    assert "### EKAID (arXiv 2307.11986), as a third party transcribed it, difference questions" in text
    assert "(secondary)" in text and "| EKAID (published) | 62.8 | 55.3 | 49.1 | 43.4 | 33.9 | 57.7 | 102.7 |" in text
    assert (tmp_path / "report" / "medical-diff-vqa_types.png").stat().st_size > 10_000


@needs_java
def test_the_java_tokenizer_prints_nothing_to_the_user(model_run, tmp_path, capfd, monkeypatch):
    """Issue 31, point 6: pycocoevalcap's PTB tokenizer writes "PTBTokenizer tokenized …" on its stderr, which is
    the user's terminal unless captured; scoring open answers through the CLI shows none of it."""
    import shutil

    from pycocoevalcap.tokenizer import ptbtokenizer

    shutil.copytree(model_run[0], tmp_path / "run")
    calls = []
    tokenize = ptbtokenizer.PTBTokenizer.tokenize
    monkeypatch.setattr(ptbtokenizer.PTBTokenizer, "tokenize", lambda self, c: calls.append(len(c)) or tokenize(self, c))
    diffvqa_metrics.score_texts.cache_clear()
    diffvqa_metrics.tokenized.cache_clear()
    capfd.readouterr()
    assert main(["score", str(tmp_path / "run"), "--no-progress"]) == 0
    err = capfd.readouterr().err
    assert calls and "PTBTokenizer" not in err and "tokens at" not in err, err
    assert not np.isnan(RunFolder(tmp_path / "run").scores().score("overall", "diffvqa_bleu_1").value)


@needs_java
def test_a_failing_tokenizer_is_an_error_not_empty_tokens(monkeypatch):
    import subprocess
    import sys

    real = subprocess.Popen

    def failing_java(cmd, **kwargs):
        return real([sys.executable, "-c", "import sys; sys.stderr.write('no class'); sys.exit(1)"], **kwargs)

    monkeypatch.setattr(subprocess, "Popen", failing_java)
    with pytest.raises(subprocess.CalledProcessError):
        diffvqa_metrics.tokenize(["An open answer."])


def test_without_java_scoring_goes_on_and_the_report_says_why(bench, model_run, tmp_path, monkeypatch):
    run = tmp_path / "run"
    import shutil

    shutil.copytree(model_run[0], run)
    monkeypatch.setenv("PATH", str(tmp_path))
    diffvqa_metrics.java_status.cache_clear()
    try:
        assert main(["score", str(run)]) == 0
        assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    finally:
        diffvqa_metrics.java_status.cache_clear()
    scores = RunFolder(run).scores()
    assert np.isnan(scores.score("overall", "diffvqa_meteor").value)
    assert scores.metrics["diffvqa_meteor"]["settings"]["java"].startswith("unavailable: no `java` on PATH")
    assert not np.isnan(scores.score("overall", "accuracy").value)
    assert "**The text metrics are unavailable** (no `java` on PATH" in (
        tmp_path / "report" / "medical-diff-vqa_tables.md").read_text()


def test_no_judge_is_offered_and_exports_keep_every_question(bench, model_run, tmp_path, capsys):
    assert main(["score", str(model_run[0]), "--judge", "scripted-judge:overlap"]) == 2
    assert "has no metric an LLM judge decides" in capsys.readouterr().err
    assert main(["export", str(bench), "--format", "parquet", "--out", str(tmp_path / "d.parquet")]) == 0
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "d.parquet").to_pylist()
    assert len(table) == len(load(bench).items) and table[0]["visit_labels"] == [
        "Last visit image (reference image)", "Current visit image (main image)"]
    assert main(["export", str(bench), "--format", "vlmevalkit", "--out", str(tmp_path / "d.tsv")]) == 0
    assert (tmp_path / "d_yorn.tsv").is_file() and (tmp_path / "d_vqa.tsv").is_file()
