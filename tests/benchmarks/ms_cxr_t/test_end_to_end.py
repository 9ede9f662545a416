"""MS-CXR-T end to end: phantoms → build → run (a baseline; a model on loopback through the real openai
client) → score → report, with outputs in the shapes real VLMs write."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.fake_openai import TEST_API_KEY, FakeOpenAI

from medtemporal.benchmark import load
from medtemporal.benchmarks.ms_cxr_t.release import FINDINGS
from medtemporal.cli import main
from medtemporal.phantoms.cxr import CxrPhantom
from medtemporal.runs import RunFolder

REPLIES = [
    ["progression of pleural effusion", "Worsening."],  # the option's text, as a model often answers
    ["progression of edema", "(B) stable"],  # CheXinstruct's option style: the letter decides
    ["progression of consolidation", "The progression is improving, so the answer is A or C."],  # invalid
    ["Sentence 1:", "Paraphrase"],
]


def _parts(body: dict) -> list[dict]:
    """The user message's parts (a text-only request's content is a plain string)."""
    content = body["messages"][-1]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


@pytest.fixture(scope="module")
def bench(mscxrt: Path, cxr_phantoms: CxrPhantom, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mscxrt-e2e") / "bench"
    assert main(["build", "ms-cxr-t", "--ms-cxr-t", str(mscxrt), "--mimic-cxr-jpg", str(cxr_phantoms.mimic_cxr_jpg),
                 "--out", str(out)]) == 0
    return out


def test_a_model_on_loopback_gets_the_chexinstruct_prompt_and_its_answers_are_scored(bench, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(tmp_path / "cache.sqlite"))
    items = load(bench).items
    with FakeOpenAI.start() as server:
        server.configure(keep_bodies=True, replies=REPLIES)
        assert main(["run", str(bench), "--model", server.uri("fake-vlm"), "--out", str(tmp_path / "run"),
                     "--no-progress"]) == 0
        bodies = server.stats()["bodies"]
    assert len(bodies) == len(items)
    image_prompts = [b for b in bodies if "two images" in _parts(b)[-1]["text"]]
    for body in image_prompts:
        parts = _parts(body)
        assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url", "text"]
        assert (parts[0]["text"], parts[2]["text"]) == ("Last visit image (reference image):",
                                                        "Current visit image (new image):")
        text = parts[-1]["text"]
        assert text.startswith("You are given two images: one reference image and one new image. Please identify "
                               "the progression of ") and text.endswith("from the given choices directly.")
        assert body["temperature"] == 0.0 and body["max_tokens"] == 512  # CheXbench: greedy, 512 new tokens
    assert len(image_prompts) == sum(it.task == "progression" for it in items)
    sentence = next(b for b in bodies if "Sentence 1:" in _parts(b)[-1]["text"])
    assert isinstance(sentence["messages"][-1]["content"], str)  # the sentence task has no image
    assert _parts(sentence)[0]["text"].startswith("Identify the relationship between the following two sentences: "
                                                  "Sentence 1: ")

    scores = RunFolder(tmp_path / "run").scores()

    def expected(finding: str, said: str | None) -> float:
        labels = [it for it in items if it.subtype == finding]
        return float(np.mean([said is not None and it.options[it.answer] == said if said != "B" else it.answer == "B"
                              for it in labels]))

    assert scores.score("subtype:pleural_effusion", "accuracy").value == pytest.approx(
        expected("pleural_effusion", "worsening"))
    assert scores.score("subtype:pleural_effusion", "mscxrt_macro_accuracy").value == pytest.approx(1 / 3)
    assert scores.score("subtype:edema", "accuracy").value == pytest.approx(expected("edema", "B"))
    consolidation = scores.score("subtype:consolidation", "accuracy")
    assert consolidation.value == 0.0 and consolidation.invalid == sum(it.subtype == "consolidation" for it in items)
    paraphrase = np.mean([it.options[it.answer] == "paraphrase" for it in items if it.task == "sentence_similarity"])
    assert scores.score("task:sentence_similarity", "accuracy").value == pytest.approx(paraphrase)
    overall = scores.score("overall", "accuracy")
    assert overall.n == sum(it.task == "progression" for it in items)  # the sentence task is not in Overall


def test_baselines_score_and_the_report_holds_the_paper_layout_the_text_levels_and_the_figure(bench, tmp_path):
    runs = []
    for model in ("baseline:majority", "baseline:oracle"):
        runs.append(tmp_path / model.split(":")[1])
        assert main(["run", str(bench), "--model", model, "--out", str(runs[-1]), "--no-progress"]) == 0
    oracle = RunFolder(runs[1]).scores()
    for metric in ("accuracy", "mscxrt_macro_accuracy", "mscxrt_accuracy_mean", "mscxrt_macro_accuracy_mean"):
        assert oracle.score("overall", metric).value == 1.0
    assert main(["report", *map(str, runs), "--out", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "ms-cxr-t_tables.md").read_text()
    present = [f for f in FINDINGS if any(it.subtype == f for it in load(bench).items)]
    header = next(line for line in text.splitlines() if line.startswith("| Run | Consolidation Acc"))
    assert header.count("Acc") == len(present) + 2 and "Average Macro" in header and "All labels Macro" in header
    assert "| Commonest label of the finding (text only) |" in text
    assert "### Blind-solvability audit" in text and "| Finding | n | Chance |" in text
    assert "## Temporal sentence similarity" in text and "Generative models answering paraphrase" in text
    assert (tmp_path / "report" / "ms-cxr-t_findings.png").stat().st_size > 10_000
    assert "| baseline:oracle | 100.0 | 100.0 |" in text


def test_exports_to_parquet_vlmevalkit_and_lmms_eval_keep_both_tasks(bench, tmp_path):
    import pandas as pd
    import pyarrow.parquet as pq

    from medtemporal.interop.parquet import item_from_row

    items = load(bench).items
    assert main(["export", str(bench), "--format", "parquet", "--out", str(tmp_path / "m.parquet")]) == 0
    rows = pq.read_table(tmp_path / "m.parquet").to_pylist()
    assert [item_from_row(r) for r in rows] == items  # round trip, sentence items without images included
    assert rows[0]["visit_labels"] == ["Last visit image (reference image)", "Current visit image (new image)"]
    assert main(["export", str(bench), "--format", "vlmevalkit", "--out", str(tmp_path / "m.tsv")]) == 0
    tsv = pd.read_csv(tmp_path / "m.tsv", sep="\t", keep_default_na=False)
    assert len(tsv) == len(items) and {"A", "B", "C"} <= set(tsv.columns)
    assert main(["export", str(bench), "--format", "lmms-eval", "--out", str(tmp_path / "lmms")]) == 0
    yamls = {p.name for p in (tmp_path / "lmms").glob("*.yaml")}
    assert len(yamls) == 3 and any("progression" in n for n in yamls) and any("sentence" in n for n in yamls), yamls
