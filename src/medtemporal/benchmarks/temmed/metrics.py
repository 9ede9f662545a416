"""TemMed-Bench's report-generation metrics, exactly as its release computes them.

Per sample, both texts are stripped and lowercased (an empty output, or an
empty reference, makes the output a single space) and tokenised with
``nltk.word_tokenize``; then

- BLEU = ``sentence_bleu([ref], hyp, weights=(1, 0, 0, 0), smoothing_function=method1)`` (BLEU-1),
- ROUGE-L = ``rouge_score`` F-measure with stemming on the space-joined tokens,
- METEOR = ``nltk.translate.meteor_score.meteor_score([ref], hyp)`` with its defaults.

Each is averaged over samples and multiplied by 100; ``Avg.`` is the mean of
the three. Registered as metrics ``temmed_bleu_1``, ``temmed_rouge_l``,
``temmed_meteor`` and ``temmed_report_avg`` (per-sample values; reports show the
mean × 100). Runs scored while these were core metrics name them ``bleu_1``,
``rouge_l``, ``meteor`` and ``report_avg`` in ``scores.json`` (`LEGACY_NAMES`):
the paper-layout tables read either, and ``medtemporal score RUN`` rewrites
them under the new names.

>>> s = report_scores("Stable left pleural effusion.", "stable left pleural effusion.")
>>> round(s["bleu1"], 4), round(s["rouge_l"], 4)
(1.0, 1.0)
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from typing import Sequence

import numpy as np

from medtemporal.family import Answer, Item, register
from medtemporal.scoring.nltk_data import ensure_nltk_data
from medtemporal.scoring.text_metrics import reference_texts

LEGACY_NAMES = {"temmed_bleu_1": "bleu_1", "temmed_rouge_l": "rouge_l", "temmed_meteor": "meteor",
                "temmed_report_avg": "report_avg"}
"""Metric → the name a run's ``scores.json`` gave it when these were core metrics (same recipe, same values)."""


@lru_cache(maxsize=1)
def _scorers() -> tuple:
    """(word_tokenize, sentence_bleu, smoothing method1, meteor_score, ROUGE-L scorer), once nltk's data is checked."""
    ensure_nltk_data()
    from nltk.tokenize import word_tokenize
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    from nltk.translate.meteor_score import meteor_score
    from rouge_score import rouge_scorer

    rouge = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    return word_tokenize, sentence_bleu, SmoothingFunction().method1, meteor_score, rouge


def report_scores(reference: str, candidate: str | None) -> dict[str, float]:
    """BLEU-1, ROUGE-L and METEOR of one output (values in 0–1, as the release before ×100).

    Args:
        reference: The reference report.
        candidate: The model's output; None (no output) counts as empty.

    Returns:
        ``{"bleu1": ..., "rouge_l": ..., "meteor": ...}``.
    """
    word_tokenize, sentence_bleu, smoothing, meteor_score, rouge = _scorers()
    answer = (candidate or "").strip().lower()
    label = reference.strip().lower()
    if not answer or not label:
        answer = " "
    ref_tokens = word_tokenize(label)
    hyp_tokens = word_tokenize(answer)
    with warnings.catch_warnings():  # nltk warns on zero n-gram overlap; the score is still defined
        warnings.simplefilter("ignore", UserWarning)
        bleu = sentence_bleu([ref_tokens], hyp_tokens, weights=(1.0, 0.0, 0.0, 0.0), smoothing_function=smoothing)
    rouge_l = rouge.score(" ".join(ref_tokens), " ".join(hyp_tokens))["rougeL"].fmeasure
    meteor = meteor_score([ref_tokens], hyp_tokens)
    return {"bleu1": float(bleu), "rouge_l": float(rouge_l), "meteor": float(meteor)}


@lru_cache(maxsize=65536)
def _cached_scores(reference: str, candidate: str | None) -> tuple[float, float, float]:
    row = report_scores(reference, candidate)
    return row["bleu1"], row["rouge_l"], row["meteor"]


def _report_column(items: Sequence[Item], answers: Sequence[Answer], column: int | None) -> np.ndarray:
    """One of BLEU-1, ROUGE-L, METEOR (``column`` 0–2) per sample, or their mean (``column`` None)."""
    rows = []
    for ref, text in zip(*reference_texts(items, answers), strict=True):
        scores = _cached_scores(ref, text)
        rows.append(sum(scores) / 3 if column is None else scores[column])
    return np.asarray(rows, dtype=float)


_INFO = dict(higher_is_better=True, aggregation="mean", percent=True)


@register("metric", "temmed_bleu_1", description="TemMed's released BLEU-1 (nltk sentence_bleu, method1)", **_INFO)
def bleu_1(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample BLEU-1 against ``item.reference``; see `report_scores`."""
    return _report_column(items, answers, 0)


@register("metric", "temmed_rouge_l", description="TemMed's released ROUGE-L F (rouge_score, stemming) on nltk tokens",
          **_INFO)
def rouge_l(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample ROUGE-L F-measure against ``item.reference``; see `report_scores`."""
    return _report_column(items, answers, 1)


@register("metric", "temmed_meteor", description="TemMed's released METEOR (nltk meteor_score defaults, WordNet 3.0)",
          **_INFO)
def meteor(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample METEOR against ``item.reference``; see `report_scores`."""
    return _report_column(items, answers, 2)


@register("metric", "temmed_report_avg", description="TemMed's Avg.: mean of its BLEU-1, ROUGE-L and METEOR",
          **_INFO)
def report_avg(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample mean of the three; its average equals the mean of the three averages."""
    return _report_column(items, answers, None)
