"""CheXbert F1 and SembScore with a tiny stand-in checkpoint laid out as chexbert.pth (nothing downloaded)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.metrics import classification_report
from transformers import BertConfig, BertModel, BertTokenizer

from helpers.tiny_report_models import tiny_chexbert
from medtemporal.errors import UnavailableError
from medtemporal.schema import Item
from medtemporal.scoring import metric
from medtemporal.scoring.clinical import chexbert

REFS = ["the heart is normal size . no pleural effusion .", "moderate cardiomegaly . small left pleural effusion .",
        "new right lower lobe opacity .", "lungs are clear .", "mild edema is improved . tube in the lung .",
        "stable left effusion , worse atelectasis ."]
OUTS = ["the heart is normal .", "cardiomegaly . no effusion .", "lungs are clear .", "lungs are clear .",
        None, "stable effusion ."]


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    checkpoint, backbone = tiny_chexbert(tmp_path)
    monkeypatch.setenv("MEDTEMPORAL_CHEXBERT", str(checkpoint))
    monkeypatch.setenv("MEDTEMPORAL_CHEXBERT_BACKBONE", str(backbone))
    chexbert._labeller.cache_clear()
    chexbert.chexbert_outputs.cache_clear()
    yield checkpoint, backbone
    chexbert._labeller.cache_clear()
    chexbert.chexbert_outputs.cache_clear()


def _independent_labels(checkpoint: Path, backbone: Path, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The stand-in run by hand: its own BertModel and heads from the checkpoint, argmax, positive or uncertain."""
    state = torch.load(checkpoint, weights_only=True)["model_state_dict"]
    bert = BertModel(BertConfig.from_json_file(str(backbone / "config.json"))).eval()
    bert.load_state_dict({k[len("module.bert."):]: v for k, v in state.items() if k.startswith("module.bert.")})
    tok = BertTokenizer(str(backbone / "vocab.txt"))
    labels, embs = [], []
    with torch.no_grad():
        for text in texts:
            cls = bert(**tok([text], return_tensors="pt")).last_hidden_state[:, 0]
            row = []
            for h in range(14):
                w, b = state[f"module.linear_heads.{h}.weight"], state[f"module.linear_heads.{h}.bias"]
                row.append(int((cls @ w.T + b).argmax()) in (1, 3))
            labels.append(row)
            embs.append(cls[0].numpy())
    return np.array(labels, dtype=int), np.array(embs)


def _items() -> list[Item]:
    return [Item.create(benchmark="x", task="report", subtype="report", images=[], question=f"Report {k}.",
                        answer_type="open", answer=r, reference=r, meta={"patient_id": f"p{k}"})
            for k, r in enumerate(REFS)]


def _value(name: str) -> float:
    m = metric(name)
    stats = m.per_sample(_items(), OUTS, [None] * len(REFS)).reshape(len(REFS), -1)
    return float(m.reduce(stats.sum(axis=0), np.float64(len(REFS))))


def test_chexbert_f1_equals_scikit_learns_report_on_the_stand_ins_labels(stand_in: tuple[Path, Path]) -> None:
    truth, _ = _independent_labels(*stand_in, REFS)
    pred, _ = _independent_labels(*stand_in, [o or "" for o in OUTS])
    pred[[o is None for o in OUTS]] = 0  # an empty answer states no observation
    assert 0 < truth.sum() < truth.size and not np.array_equal(truth, pred)  # the stand-in labels vary
    names = list(chexbert.CONDITIONS)
    full = classification_report(truth, pred, target_names=names, output_dict=True, zero_division=0)
    five = [names.index(c) for c in chexbert.TOP5]
    top5 = classification_report(truth[:, five], pred[:, five], output_dict=True, zero_division=0)
    assert _value("chexbert_f1_14_micro") == pytest.approx(full["micro avg"]["f1-score"])
    assert _value("chexbert_f1_14_macro") == pytest.approx(full["macro avg"]["f1-score"])
    assert _value("chexbert_f1_5_micro") == pytest.approx(top5["micro avg"]["f1-score"])
    assert _value("chexbert_f1_5_macro") == pytest.approx(top5["macro avg"]["f1-score"])


def test_semb_score_is_the_cosine_of_the_cls_embeddings(stand_in: tuple[Path, Path]) -> None:
    _, ref_emb = _independent_labels(*stand_in, REFS)
    _, out_emb = _independent_labels(*stand_in, [o or "" for o in OUTS])
    cosine = (ref_emb * out_emb).sum(1) / np.linalg.norm(ref_emb, axis=1) / np.linalg.norm(out_emb, axis=1)
    cosine[[o is None for o in OUTS]] = 0.0  # an empty answer: 0, not the cosine of CheXbert's [CLS] of ""
    got = metric("semb_score").per_sample(_items(), OUTS, [None] * len(REFS))
    assert got == pytest.approx(cosine, abs=1e-5)
    assert got[3] == pytest.approx(1.0, abs=1e-5)  # the same report


def test_without_weights_offline_chexbert_is_unavailable_in_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEDTEMPORAL_CHEXBERT", raising=False)
    chexbert._labeller.cache_clear()
    chexbert.chexbert_outputs.cache_clear()
    with pytest.raises(UnavailableError, match="HF_HUB_OFFLINE=1 forbids downloading it; run once online, or set "
                                               "MEDTEMPORAL_CHEXBERT="):
        _value("chexbert_f1_14_micro")


def test_a_file_that_is_not_a_chexbert_checkpoint_is_named(stand_in: tuple[Path, Path], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other.pth"
    torch.save({"model_state_dict": {"module.encoder.weight": torch.zeros(2)}}, other)
    monkeypatch.setenv("MEDTEMPORAL_CHEXBERT", str(other))
    with pytest.raises(UnavailableError, match="is not a CheXbert checkpoint"):
        _value("chexbert_f1_5_micro")


SHORT = ["", ".", "No", "é", "lungs are clear . " * 1200]
"""Outputs a model can write that break naive scorers: empty, punctuation, one word, one non-ASCII character,
20,000 characters."""


def test_short_and_long_outputs_get_numbers(stand_in: tuple[Path, Path]) -> None:
    items = [_items()[0]] * len(SHORT)
    labels = metric("chexbert_f1_14_micro").per_sample(items, SHORT, [None] * len(SHORT))
    semb = metric("semb_score").per_sample(items, SHORT, [None] * len(SHORT))
    assert np.isfinite(labels).all() and np.isfinite(semb).all()
    assert labels[0].reshape(-1, 3)[:, :2].sum() == 0 and semb[0] == 0.0  # the empty answer: no label, 0
    truth, _ = _independent_labels(*stand_in, [REFS[0]])
    pred, _ = _independent_labels(*stand_in, SHORT[1:4])
    for k in range(3):
        assert labels[k + 1].reshape(-1, 3)[:, 0].tolist() == (truth[0] & pred[k]).tolist()
