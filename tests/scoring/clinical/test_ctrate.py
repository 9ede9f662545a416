"""CT-RATE label F1 with a tiny stand-in 18-output classifier (nothing downloaded)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.metrics import f1_score
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from helpers.tiny_report_models import tiny_ct_classifier
from medtemporal.errors import UnavailableError
from medtemporal.schema import Item
from medtemporal.scoring import metric
from medtemporal.scoring.clinical import ctrate

REFS = ["moderate cardiomegaly . small left pleural effusion .", "the lungs are clear .",
        "new right lower lobe opacity .", "stable left lung opacity , mild atelectasis ."]
OUTS = ["cardiomegaly . no effusion .", "the lungs are clear .", None, "new opacity in the left upper lobe ."]


def _items() -> list[Item]:
    return [Item.create(benchmark="x", task="t1", subtype="s", images=[], question=f"Describe {k}.",
                        answer_type="open", answer=r, reference=r, meta={"patient_id": f"p{k}"})
            for k, r in enumerate(REFS)]


def _clear() -> None:
    ctrate._labeller.cache_clear()
    ctrate.ct_label_counts.cache_clear()


def _value(name: str) -> float:
    m = metric(name)
    stats = m.per_sample(_items(), OUTS, [None] * len(REFS)).reshape(len(REFS), -1)
    return float(m.reduce(stats.sum(axis=0), np.float64(len(REFS))))


def test_ctrate_f1_equals_scikit_learn_on_the_classifiers_sigmoid_labels(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tiny_ct_classifier(tmp_path / "radbert-ct")
    monkeypatch.setenv("MEDTEMPORAL_CTRATE_CLASSIFIER", str(folder))
    _clear()
    tok, model = AutoTokenizer.from_pretrained(folder), AutoModelForSequenceClassification.from_pretrained(folder)
    with torch.no_grad():
        def labels(texts: list[str]) -> np.ndarray:
            return (torch.sigmoid(model(**tok(texts, padding=True, return_tensors="pt")).logits) > 0.5).int().numpy()
        truth, pred = labels(REFS), labels([o or "" for o in OUTS])
    assert 0 < truth.sum() < truth.size and not np.array_equal(truth, pred)
    assert _value("ctrate_f1_micro") == pytest.approx(f1_score(truth, pred, average="micro", zero_division=0))
    assert _value("ctrate_f1_macro") == pytest.approx(f1_score(truth, pred, average="macro", zero_division=0))
    _clear()


def test_a_classifier_with_other_outputs_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDTEMPORAL_CTRATE_CLASSIFIER", str(tiny_ct_classifier(tmp_path / "other", labels=14)))
    _clear()
    with pytest.raises(UnavailableError, match="has 14 outputs, not 18"):
        _value("ctrate_f1_micro")
    _clear()


def test_without_weights_offline_ctrate_is_unavailable_in_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEDTEMPORAL_CTRATE_CLASSIFIER", raising=False)
    _clear()
    with pytest.raises(UnavailableError, match="RadBERT-CT' is not in the Hugging Face cache"):
        _value("ctrate_f1_macro")
