"""MS-CXR-T as others score it (issue 30 §2): CheXbench's prompt and parse, the sentence task as text-embedding
models are scored (MedST), and ``baseline:majority`` as the commonest label. Each number is recomputed here the
way the authors' code computes it (CheXbench ``baseLM.parse_response``, MedST ``temporal_test.text_sim``,
scikit-learn's ``roc_auc_score``), from the run's own outputs."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from helpers.fake_openai import TEST_API_KEY, FakeOpenAI
from helpers.tiny_clip import minilm

from medtemporal.benchmark import load
from medtemporal.cli import main
from medtemporal.phantoms.cxr import CxrPhantom
from medtemporal.runs import RunFolder

REPLIES = [
    ["progression of pleural effusion", "(B) stable"],
    ["progression of edema", "The effusion looks stable."],  # no "(X)": CheXbench draws a letter
    ["progression of consolidation", "Answer: (c)"],  # lower case: no "(X)" either
]


@pytest.fixture(scope="module")
def bench(mscxrt: Path, cxr_phantoms: CxrPhantom, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mscxrt-protocols") / "bench"
    assert main(["build", "ms-cxr-t", "--ms-cxr-t", str(mscxrt), "--mimic-cxr-jpg", str(cxr_phantoms.mimic_cxr_jpg),
                 "--out", str(out), "--no-audit"]) == 0
    return out


def _predictions(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]


def _parse_response(response: str, target: int, n_options: int, item_id: str) -> bool:
    """CheXbench's ``BaseLM.parse_response`` (baseLM.py L27-33), its random fallback drawn from the item's id."""
    choice_style = [chr(i) for i in range(ord("A"), ord("Z") + 1)]
    prediction = re.findall(r"\(([A-Z])\)", response)
    fallback = random.Random(f"chexbench:{item_id}").randrange(n_options)
    prediction = choice_style[fallback] if len(prediction) == 0 else prediction[0]
    return prediction.lower() == choice_style[target].lower()


def test_chexbench_prompt_and_parse_give_chexbenchs_accuracy(bench, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(tmp_path / "cache.sqlite"))
    items = {it.id: it for it in load(bench).items}
    with FakeOpenAI.start() as server:
        server.configure(keep_bodies=True, replies=REPLIES)
        assert main(["run", str(bench), "--model", server.uri("fake-vlm"), "--protocol", "chexbench", "--tasks",
                     "progression", "--out", str(tmp_path / "run"), "--no-progress"]) == 0
        bodies = server.stats()["bodies"]
    for body in bodies:
        parts = body["messages"][-1]["content"]
        assert [p["type"] for p in parts] == ["image_url", "image_url", "text"]  # CheXbench passes the paths only
        question, options, closing = parts[-1]["text"].split("\n")
        assert question.startswith("Please identify the progression of ") and options.startswith("Options: (A) ")
        assert closing == "Directly answer the question by choosing one option: (A), (B), (C)."
    right, guessed = [], []
    for p in _predictions(tmp_path / "run"):
        item = items[p["item_id"]]
        right.append(_parse_response(p["raw_output"], list(item.options).index(item.answer), len(item.options), item.id))
        guessed.append(not re.findall(r"\(([A-Z])\)", p["raw_output"]))
    scores = RunFolder(tmp_path / "run").scores()
    chexbench = {(s["group"], s["metric"]): s["value"] for s in scores.variants["CheXbench"]["scores"]}
    assert chexbench[("overall", "accuracy")] == pytest.approx(np.mean(right))
    assert chexbench[("overall", "mscxrt_chexbench_guessed")] == pytest.approx(np.mean(guessed))
    assert 0 < np.mean(guessed) < 1
    strict = scores.score("subtype:edema", "accuracy")
    assert strict.value == 0.0 and strict.invalid == strict.n  # ours: no letter, no answer
    assert main(["score", str(tmp_path / "run")]) == 0  # scored again: the fallback's letters do not move
    again = {(s["group"], s["metric"]): s["value"] for s in RunFolder(tmp_path / "run").scores().variants["CheXbench"]["scores"]}
    assert again == chexbench
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "ms-cxr-t_tables.md").read_text()
    assert "### As CheXbench scores it (`--protocol chexbench`)" in text
    assert f"| {100 * np.mean(right):.1f} | {100 * np.mean(guessed):.1f} |" in text  # All labels, random fallback


def test_chexbench_is_scored_only_for_its_own_prompt_and_refuses_the_sentence_task(bench, tmp_path, capsys):
    assert main(["run", str(bench), "--model", "baseline:random", "--tasks", "progression", "--out",
                 str(tmp_path / "direct"), "--no-progress"]) == 0
    assert "CheXbench" not in (RunFolder(tmp_path / "direct").scores().variants or {})
    assert main(["run", str(bench), "--model", "baseline:random", "--protocol", "chexbench", "--out",
                 str(tmp_path / "both"), "--no-progress"]) == 2
    assert "--protocol chexbench asks MS-CXR-T's image task as CheXbench does; run it on an ms-cxr-t benchmark with " \
           "--tasks progression." in capsys.readouterr().err


def _medst_accuracy(sims: np.ndarray, labels: np.ndarray) -> float:
    """MedST ``text_sim`` (temporal_test.py L250-279): ten folds, the threshold of the best-testing fold."""
    from sklearn.model_selection import KFold

    overall_threshold, test_max_acc = 0, 0
    for train_index, test_index in KFold(n_splits=10).split(sims):
        best_threshold, best_accuracy = 0, 0
        for threshold in np.arange(0, 1.005, 0.005):
            acc = np.sum((sims[train_index] > threshold) == labels[train_index]) / len(train_index)
            if acc > best_accuracy:
                best_threshold, best_accuracy = threshold, acc
        test_acc = np.sum((sims[test_index] > best_threshold) == labels[test_index]) / len(test_index)
        if test_acc > test_max_acc:
            test_max_acc, overall_threshold = test_acc, best_threshold
    return float(np.sum((sims > overall_threshold) == labels) / len(labels))


def test_a_text_encoder_is_scored_as_medst_scores_embedding_models(bench, tmp_path):
    import torch
    from sklearn.metrics import roc_auc_score
    from transformers import AutoModel, AutoTokenizer

    encoder = minilm()
    run = tmp_path / "encoder"
    assert main(["run", str(bench), "--model", f"encoder:{encoder}", "--protocol", "text-embedding", "--tasks",
                 "sentence_similarity", "--out", str(run), "--no-progress"]) == 0
    tokenizer, model = AutoTokenizer.from_pretrained(encoder), AutoModel.from_pretrained(encoder).eval()

    def embed(text: str) -> np.ndarray:
        tokens = tokenizer([text], return_tensors="pt", truncation=True, max_length=512)
        with torch.no_grad():
            hidden = model(**tokens).last_hidden_state[0]
        vector = hidden.mean(0).numpy()
        return vector / np.linalg.norm(vector)

    items = [it for it in load(bench).items if it.task == "sentence_similarity"]
    sims = np.array([float(embed(it.meta["sentence_1"]) @ embed(it.meta["sentence_2"])) for it in items])
    labels = np.array([int(it.meta["category"] == "paraphrase") for it in items])
    by_item = {p["item_id"]: float(p["raw_output"]) for p in _predictions(run)}
    assert [by_item[it.id] for it in items] == pytest.approx(sims, abs=1e-5)
    variant = {(s["group"], s["metric"]): s["value"] for s in RunFolder(run).scores().variants["text embedding"]["scores"]}
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "ms-cxr-t_tables.md").read_text()
    assert "Text encoders (`--protocol text-embedding`)" in text and "Generative models" not in text
    subsets = Counter(it.subtype for it in items)
    for subset in subsets:
        rows = [k for k, it in enumerate(items) if it.subtype == subset]
        ours = np.array([by_item[items[k].id] for k in rows])
        assert variant[(f"subtype:{subset}", "mscxrt_similarity_auc")] == pytest.approx(roc_auc_score(labels[rows], ours))
        assert variant[(f"subtype:{subset}", "mscxrt_similarity_accuracy")] == pytest.approx(
            _medst_accuracy(ours, labels[rows]))


def test_a_text_encoder_answers_no_question_and_a_generator_embeds_nothing(bench, tmp_path, capsys):
    assert main(["run", str(bench), "--model", f"encoder:{minilm()}", "--tasks", "sentence_similarity",
                 "--out", str(tmp_path / "direct"), "--no-progress"]) in (0, 1)
    errors = [p["error"] for p in _predictions(tmp_path / "direct")]
    assert errors and all("is a text encoder: it embeds texts and answers no question" in e for e in errors)
    assert main(["run", str(bench), "--model", "baseline:random", "--protocol", "text-embedding", "--tasks",
                 "sentence_similarity", "--out", str(tmp_path / "random"), "--no-progress"]) == 2
    assert "--protocol text-embedding needs a text encoder, not baseline:random; pass --model encoder:NAME" in \
        capsys.readouterr().err


def test_majority_answers_the_commonest_label_of_each_finding(bench, tmp_path):
    items = [it for it in load(bench).items if it.task == "progression"]
    assert main(["run", str(bench), "--model", "baseline:majority", "--tasks", "progression", "--out",
                 str(tmp_path / "majority"), "--no-progress"]) == 0
    scores = RunFolder(tmp_path / "majority").scores()
    for finding in {it.subtype for it in items}:
        labels = Counter(it.meta["progression"] for it in items if it.subtype == finding)
        top = min(labels, key=lambda k: (-labels[k], k))  # the commonest label, ties alphabetically
        assert scores.score(f"subtype:{finding}", "accuracy").value == pytest.approx(labels[top] / sum(labels.values()))
