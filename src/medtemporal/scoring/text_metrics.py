"""Report-generation metrics exactly as TemMed-Bench's release computes them, and BERTScore.

Per sample, both texts are stripped and lowercased (an empty output, or an
empty reference, makes the output a single space) and tokenised with
``nltk.word_tokenize``; then

- BLEU = ``sentence_bleu([ref], hyp, weights=(1, 0, 0, 0), smoothing_function=method1)`` (BLEU-1),
- ROUGE-L = ``rouge_score`` F-measure with stemming on the space-joined tokens,
- METEOR = ``nltk.translate.meteor_score.meteor_score([ref], hyp)`` with its defaults.

Each is averaged over samples and multiplied by 100; ``Avg.`` is the mean of
the three. Registered as metrics ``bleu_1``, ``rouge_l``, ``meteor`` and
``report_avg`` (per-sample values; reports show the mean × 100).

BERTScore (metric ``bertscore_f1``; not in the released recipe) is
`bert_score`'s per-sample F1. Its encoder is the environment variable
``MEDTEMPORAL_BERTSCORE_MODEL``: a local model folder, or the name of a model
already in the Hugging Face cache (``$HF_HOME``, by default
``~/.cache/huggingface``). Unset, it is ``roberta-large``, bert-score's
encoder for English. The layer compared is the one bert-score tuned for that
name (17 for ``roberta-large``; a folder named after a model bert-score knows
counts as that model), else the encoder's last layer. Nothing is downloaded:
an encoder that is not on disk fails with one sentence. For example::

    MEDTEMPORAL_BERTSCORE_MODEL=/models/roberta-large medtemporal score runs/r1

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
from medtemporal.scoring.metrics import Answer
from medtemporal.scoring.nltk_data import require_nltk_data

BERTSCORE_MODEL_ENV = "MEDTEMPORAL_BERTSCORE_MODEL"
"""Environment variable naming the BERTScore encoder (a local folder or a cached model name)."""
DEFAULT_BERTSCORE_MODEL = "roberta-large"
"""bert-score's encoder for English (``bert_score.utils.lang2model["en"]``)."""


@lru_cache(maxsize=1)
def _scorers() -> tuple:
    """(word_tokenize, sentence_bleu, smoothing method1, meteor_score, ROUGE-L scorer), once nltk's data is checked."""
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


def bertscore_encoder(model: str | Path = DEFAULT_BERTSCORE_MODEL) -> tuple[Path, int]:
    """The local folder of BERTScore encoder ``model`` and the layer bert-score compares.

    Args:
        model: A local model folder, or a model name already in the Hugging Face cache.

    Returns:
        The folder, and bert-score's tuned layer for the name (or the folder's name), else the last layer.

    Raises:
        InvalidInputError: the encoder is not on this machine (nothing is downloaded).
    """
    bert_score_utils = require("bert_score.utils", "bertscore")
    name = str(model)
    folder = Path(name).expanduser()
    if not folder.is_dir():
        hub = require("huggingface_hub", "bertscore")
        hub_errors = require("huggingface_hub.errors", "bertscore")
        try:
            folder = Path(hub.snapshot_download(name, local_files_only=True))
        except (hub_errors.LocalEntryNotFoundError, hub_errors.HFValidationError):
            raise InvalidInputError(
                f"The BERTScore encoder {name!r} is neither a local folder nor in the Hugging Face cache; "
                f"set {BERTSCORE_MODEL_ENV} to a local model folder (nothing is downloaded)."
            ) from None
    has_weights = any(folder.glob("*.safetensors")) or any(folder.glob("*.bin"))
    if not (folder / "config.json").is_file() or not has_weights:
        raise InvalidInputError(
            f"The BERTScore encoder folder {folder} lacks config.json or weights; "
            f"set {BERTSCORE_MODEL_ENV} to a complete Hugging Face model folder."
        )
    layer = bert_score_utils.model2layers.get(name, bert_score_utils.model2layers.get(folder.name))
    if layer is None:
        transformers = require("transformers", "bertscore")
        layer = int(transformers.AutoConfig.from_pretrained(str(folder)).num_hidden_layers)
    return folder, int(layer)


@lru_cache(maxsize=2)
def _bert_scorer(folder: str, layer: int, device: str | None):  # noqa: ANN202  (a bert_score.BERTScorer)
    """bert-score's scorer for an encoder, loaded once per process (callers that score one sample at a time,
    such as lmms-eval's per-sample hooks, would otherwise load the encoder on every call)."""
    bert_score = require("bert_score", "bertscore")
    return bert_score.BERTScorer(model_type=folder, num_layers=layer, device=device)


def bertscore_f1(
    references: Sequence[str],
    candidates: Sequence[str | None],
    model: str | Path = DEFAULT_BERTSCORE_MODEL,
    num_layers: int | None = None,
    batch_size: int = 32,
    device: str | None = None,
) -> list[float]:
    """Per-sample BERTScore F1 (0–1) with the encoder ``model`` (see `bertscore_encoder`).

    An empty output or reference scores 0 (bert_score cannot encode an empty string with transformers 5).

    Args:
        references: Reference reports.
        candidates: Outputs (None counts as empty).
        model: A local model folder, or a model name already in the Hugging Face cache.
        num_layers: Layer whose embeddings are compared; default: as `bertscore_encoder` chooses.
        batch_size: Encoder batch size.
        device: torch device; default: CUDA when available, else CPU.

    Raises:
        InvalidInputError: different numbers of references and outputs, or the encoder is not on disk.
    """
    if len(references) != len(candidates):
        raise InvalidInputError(f"Got {len(references)} references but {len(candidates)} outputs; pass one of each per sample.")
    folder, layer = bertscore_encoder(model)
    cands = [(c or "").strip() for c in candidates]
    refs = [r.strip() for r in references]
    keep = [i for i in range(len(cands)) if cands[i] and refs[i]]
    out = [0.0] * len(cands)
    if keep:
        scorer = _bert_scorer(str(folder), layer if num_layers is None else num_layers, device)
        _, _, f1 = scorer.score([cands[i] for i in keep], [refs[i] for i in keep], batch_size=batch_size)
        for i, value in zip(keep, f1.tolist(), strict=True):
            out[i] = float(value)
    return out


# --- registered metrics -------------------------------------------------------------------


@lru_cache(maxsize=65536)
def _cached_scores(reference: str, candidate: str | None) -> tuple[float, float, float]:
    row = report_scores(reference, candidate)
    return row["bleu1"], row["rouge_l"], row["meteor"]


def _texts(items: Sequence[Item], answers: Sequence[Answer]) -> tuple[list[str], list[str | None]]:
    """Reference reports and output texts (a list answer joined by spaces) of report items."""
    refs, texts = [], []
    for item, answer in zip(items, answers, strict=True):
        if item.reference is None:
            raise InvalidInputError(f"Item {item.id} has no reference report; report metrics need one.")
        refs.append(item.reference)
        texts.append(answer if isinstance(answer, str) or answer is None else " ".join(answer))
    return refs, texts


def _report_column(items: Sequence[Item], answers: Sequence[Answer], column: int | None) -> np.ndarray:
    """One of BLEU-1, ROUGE-L, METEOR (``column`` 0–2) per sample, or their mean (``column`` None)."""
    rows = []
    for ref, text in zip(*_texts(items, answers), strict=True):
        scores = _cached_scores(ref, text)
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


@register("metric", "bertscore_f1", **_REPORT_INFO,
          description=f"BERTScore F1 (bert-score); encoder from ${BERTSCORE_MODEL_ENV}, default {DEFAULT_BERTSCORE_MODEL}")
def bertscore_f1_metric(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample BERTScore F1 with the encoder named by ``$MEDTEMPORAL_BERTSCORE_MODEL`` (see the module doc)."""
    model = os.environ.get(BERTSCORE_MODEL_ENV) or DEFAULT_BERTSCORE_MODEL
    return np.asarray(bertscore_f1(*_texts(items, answers), model), dtype=float)
