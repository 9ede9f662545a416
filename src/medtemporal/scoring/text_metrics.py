"""BERTScore, and the texts report-generation metrics compare.

BERTScore (metric ``bertscore_f1``) is
`bert_score`'s per-sample F1. Its encoder is the environment variable
``MEDTEMPORAL_BERTSCORE_MODEL``: a local model folder or a Hugging Face model
name. Unset, it is ``roberta-large``, bert-score's encoder for English. A name
resolves through the Hugging Face hub cache and is downloaded on first use, as
bert-score's own ``from_pretrained`` would (`medtemporal.hf_models.model_folder`;
``HF_HUB_OFFLINE=1`` forbids it). The layer compared is the one bert-score
tuned for that name (17 for ``roberta-large``; a folder named after a model
bert-score knows counts as that model), else the encoder's last layer; no idf,
no baseline rescaling. An encoder that cannot be had fails with one sentence
(`UnavailableError`), and scoring reports the metric as unavailable. For
example::

    MEDTEMPORAL_BERTSCORE_MODEL=/models/roberta-large medtemporal score runs/r1

A family's own lexical recipe lives in its package (TemMed-Bench's BLEU-1,
ROUGE-L and METEOR in ``medtemporal.benchmarks.temmed.metrics``, 3D-RAD's in
``medtemporal.benchmarks.rad3d.scoring``).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from medtemporal.errors import InvalidInputError, require
from medtemporal.hf_models import model_folder
from medtemporal.registry import register
from medtemporal.schema import Item
from medtemporal.scoring.metrics import UNAVAILABLE, Answer

BERTSCORE_MODEL_ENV = "MEDTEMPORAL_BERTSCORE_MODEL"
"""Environment variable naming the BERTScore encoder (a local folder or a Hugging Face model name)."""
DEFAULT_BERTSCORE_MODEL = "roberta-large"
"""bert-score's encoder for English (``bert_score.utils.lang2model["en"]``)."""


def bertscore_layer(model: str | Path) -> int | None:
    """bert-score's tuned layer for encoder ``model`` (a name, or a folder named after one), else None."""
    layers = require("bert_score.utils", "bertscore").model2layers
    return layers.get(str(model), layers.get(Path(str(model)).name))


def bertscore_encoder(model: str | Path = DEFAULT_BERTSCORE_MODEL) -> tuple[Path, int]:
    """The local folder of BERTScore encoder ``model`` and the layer bert-score compares.

    Args:
        model: A local model folder, or a Hugging Face model name (downloaded into the hub cache on first use).

    Returns:
        The folder, and bert-score's tuned layer for the name (or the folder's name), else the last layer.

    Raises:
        UnavailableError: the encoder is not on disk and cannot be downloaded now (one sentence naming the fix).
    """
    require("bert_score", "bertscore")
    folder = model_folder(model, what="BERTScore encoder",
                          fix=f"set {BERTSCORE_MODEL_ENV}=/path/to/model (a local copy of it, or another encoder)")
    layer = bertscore_layer(model)
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
        model: A local model folder, or a Hugging Face model name (see `bertscore_encoder`).
        num_layers: Layer whose embeddings are compared; default: as `bertscore_encoder` chooses.
        batch_size: Encoder batch size.
        device: torch device; default: CUDA when available, else CPU.

    Raises:
        InvalidInputError: different numbers of references and outputs.
        UnavailableError: the encoder cannot be had (see `bertscore_encoder`).
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


def reference_of(item: Item) -> str:
    """The text an output is compared with: ``item.reference``, else an open item's answer (a short answer is its
    own reference, as the families' released scorers take it).

    Raises:
        InvalidInputError: neither exists.
    """
    if item.reference is not None:
        return item.reference
    if item.answer_type == "open" and isinstance(item.answer, str):
        return item.answer
    raise InvalidInputError(f"Item {item.id} has no reference report; report metrics need Item.reference.")


def reference_texts(items: Sequence[Item], answers: Sequence[Answer]) -> tuple[list[str], list[str | None]]:
    """Each item's reference (`reference_of`) and output text (a list answer joined by spaces; None kept)."""
    refs, texts = [], []
    for item, answer in zip(items, answers, strict=True):
        refs.append(reference_of(item))
        texts.append(answer if isinstance(answer, str) or answer is None else " ".join(map(str, answer)))
    return refs, texts


def bertscore_model() -> str:
    """The BERTScore encoder in use: ``$MEDTEMPORAL_BERTSCORE_MODEL`` or bert-score's English default."""
    return os.environ.get(BERTSCORE_MODEL_ENV) or DEFAULT_BERTSCORE_MODEL


def bertscore_settings() -> dict[str, Any]:
    """The encoder, its layer (None when the encoder cannot be had) and bert-score's options, as recorded in
    ``scores.json``."""
    name = bertscore_model()
    try:
        layer: int | None = bertscore_encoder(name)[1]
    except UNAVAILABLE:
        layer = None
    return {"bertscore_model": name, "bertscore_layer": layer, "bertscore_idf": False,
            "bertscore_rescale_with_baseline": False}


@register("metric", "bertscore_f1", higher_is_better=True, aggregation="mean", percent=True, settings=bertscore_settings,
          description=f"BERTScore F1 (bert-score); encoder from ${BERTSCORE_MODEL_ENV}, default {DEFAULT_BERTSCORE_MODEL}")
def bertscore_f1_metric(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample BERTScore F1 with the encoder named by ``$MEDTEMPORAL_BERTSCORE_MODEL`` (see the module doc)."""
    return np.asarray(bertscore_f1(*reference_texts(items, answers), bertscore_model()), dtype=float)
