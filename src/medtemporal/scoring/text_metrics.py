"""Report-generation metrics exactly as TemMed-Bench's release computes them.

Per sample, both texts are stripped and lowercased (an empty output, or an
empty reference, makes the output a single space) and tokenised with
``nltk.word_tokenize``; then

- BLEU = ``sentence_bleu([ref], hyp, weights=(1, 0, 0, 0), smoothing_function=method1)`` (BLEU-1),
- ROUGE-L = ``rouge_score`` F-measure with stemming on the space-joined tokens,
- METEOR = ``nltk.translate.meteor_score.meteor_score([ref], hyp)`` with its defaults.

Each is averaged over samples and multiplied by 100; ``Avg.`` is the mean of
the three. BERTScore (not in the released recipe) is `bert_score` F1 with an
encoder the user names.

>>> s = report_scores("Stable left pleural effusion.", "stable left pleural effusion.")
>>> round(s["bleu1"], 4), round(s["rouge_l"], 4)
(1.0, 1.0)
"""

from __future__ import annotations

import os
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from medtemporal.errors import InvalidInputError, require
from medtemporal.registry import register
from medtemporal.schema import Item
from medtemporal.scoring.nltk_data import require_nltk_data

Answer = str | list[str] | None

REPORT_METRICS = ("bleu1", "rouge_l", "meteor")
"""Per-sample metric names, in the paper's column order."""


@lru_cache(maxsize=1)
def _scorers() -> tuple:
    require_nltk_data()
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


def corpus_report_scores(references: Sequence[str], candidates: Sequence[str | None]) -> dict[str, float]:
    """Sample means × 100 of BLEU-1, ROUGE-L and METEOR, plus their average ``avg``.

    >>> corpus_report_scores(["No change."], ["No change."])["avg"]
    100.0
    """
    if len(references) != len(candidates):
        raise InvalidInputError(f"Got {len(references)} references but {len(candidates)} outputs; pass one of each per sample.")
    if not references:
        raise InvalidInputError("No samples to score; pass at least one reference and output.")
    rows = [report_scores(r, c) for r, c in zip(references, candidates)]
    out = {name: 100.0 * float(np.mean([row[name] for row in rows])) for name in REPORT_METRICS}
    out["avg"] = float(np.mean([out[name] for name in REPORT_METRICS]))
    return out


def bertscore_f1(
    references: Sequence[str],
    candidates: Sequence[str | None],
    model: str | Path,
    num_layers: int | None = None,
    batch_size: int = 32,
    device: str | None = None,
) -> list[float]:
    """Per-sample BERTScore F1 (0–1) with the encoder at ``model`` (a local path or a name).

    An empty output scores 0 (bert_score cannot encode an empty string with transformers 5).

    Args:
        references: Reference reports.
        candidates: Outputs (None counts as empty).
        model: Encoder for `bert_score.score` (``model_type``); a local folder works offline.
        num_layers: Layer whose embeddings are compared; default: the encoder's last layer.
        batch_size: Encoder batch size.
        device: torch device; default: CUDA when available, else CPU.
    """
    bert_score = require("bert_score", "bertscore")
    if num_layers is None:
        transformers = require("transformers", "bertscore")
        num_layers = int(transformers.AutoConfig.from_pretrained(str(model)).num_hidden_layers)
    cands = [(c or "").strip() for c in candidates]
    keep = [i for i, c in enumerate(cands) if c]
    out = [0.0] * len(cands)
    if keep:
        _, _, f1 = bert_score.score(
            [cands[i] for i in keep], [references[i].strip() for i in keep], model_type=str(model),
            num_layers=num_layers, batch_size=batch_size, device=device, verbose=False,
        )
        for i, value in zip(keep, f1.tolist()):
            out[i] = float(value)
    return out


# --- registered metrics -------------------------------------------------------------------


@lru_cache(maxsize=65536)
def _cached_scores(reference: str, candidate: str | None) -> tuple[float, float, float]:
    row = report_scores(reference, candidate)
    return row["bleu1"], row["rouge_l"], row["meteor"]


def _report_column(items: Sequence[Item], answers: Sequence[Answer], column: int | None) -> np.ndarray:
    rows = []
    for item, answer in zip(items, answers, strict=True):
        if item.reference is None:
            raise InvalidInputError(f"Item {item.id} has no reference report; report metrics need one.")
        text = answer if isinstance(answer, str) or answer is None else " ".join(answer)
        scores = _cached_scores(item.reference, text)
        rows.append(sum(scores) / 3 if column is None else scores[column])
    return np.asarray(rows, dtype=float)


_REPORT_INFO = dict(higher_is_better=True, aggregation="mean", percent=True)


@register("metric", "bleu_1", description="BLEU-1 as TemMed released it (nltk sentence_bleu, method1)", **_REPORT_INFO)
def bleu_1(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample BLEU-1 against ``item.reference``; see `report_scores`."""
    return _report_column(items, answers, 0)


@register("metric", "rouge_l", description="ROUGE-L F (rouge_score, stemming) on nltk tokens", **_REPORT_INFO)
def rouge_l(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample ROUGE-L F-measure against ``item.reference``; see `report_scores`."""
    return _report_column(items, answers, 1)


@register("metric", "meteor", description="METEOR (nltk meteor_score defaults, WordNet 3.0)", **_REPORT_INFO)
def meteor(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample METEOR against ``item.reference``; see `report_scores`."""
    return _report_column(items, answers, 2)


@register("metric", "report_avg", description="mean of BLEU-1, ROUGE-L and METEOR (the paper's Avg.)", **_REPORT_INFO)
def report_avg(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample mean of the three; its average equals the mean of the three averages."""
    return _report_column(items, answers, None)


BERTSCORE_MODEL_ENV = "MEDTEMPORAL_BERTSCORE_MODEL"


@register("metric", "bertscore_f1", description=f"BERTScore F1 with the encoder named by ${BERTSCORE_MODEL_ENV}",
          **_REPORT_INFO)
def bertscore(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample BERTScore F1 with the encoder (local path or name) in ``$MEDTEMPORAL_BERTSCORE_MODEL``."""
    model = os.environ.get(BERTSCORE_MODEL_ENV)
    if not model:
        raise InvalidInputError(
            f"bertscore_f1 needs an encoder; set {BERTSCORE_MODEL_ENV} to a local model folder or name."
        )
    refs = [item.reference or "" for item in items]
    texts = [a if isinstance(a, str) or a is None else " ".join(a) for a in answers]
    return np.asarray(bertscore_f1(refs, texts, model), dtype=float)


_YN = ("Yes", "No")


def _reduce_macro_f1(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Macro F1 over Yes/No from summed (tp, fp, fn, seen) per class; classes never seen are left out."""
    f1s, seen = [], []
    for c in range(len(_YN)):
        tp, fp, fn, present = (sums[..., 4 * c + j] for j in range(4))
        denom = 2 * tp + fp + fn
        f1s.append(np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), 0.0))
        seen.append(present > 0)
    f1 = np.stack(f1s, -1)
    mask = np.stack(seen, -1)
    n = mask.sum(-1)
    return np.where(n > 0, (f1 * mask).sum(-1) / np.where(n > 0, n, 1), np.nan)


@register("metric", "yesno_macro_f1", higher_is_better=True, aggregation=_reduce_macro_f1, percent=True,
          chance=lambda item: 0.5,
          description="macro F1 over Yes/No (scikit-learn's, zero_division=0); invalid answers are misses")
def yesno_macro_f1(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample (tp, fp, fn, seen) for Yes then No; summed and reduced to macro F1.

    Equals ``sklearn.metrics.f1_score(truth, pred, average="macro", zero_division=0)`` over the
    classes present in the truth or the valid answers; an invalid answer is a miss of its true
    class and a prediction of none.
    """
    stats = np.zeros((len(items), 4 * len(_YN)))
    for row, (item, answer) in enumerate(zip(items, answers, strict=True)):
        truth = str(item.answer).strip().rstrip(".").capitalize()
        pred = answer if answer in _YN else None
        for c, label in enumerate(_YN):
            stats[row, 4 * c + 0] = truth == label and pred == label
            stats[row, 4 * c + 1] = truth != label and pred == label
            stats[row, 4 * c + 2] = truth == label and pred != label
            stats[row, 4 * c + 3] = truth == label or pred == label
    return stats
