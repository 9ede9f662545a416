"""MS-CXR-T's sentence task as text-embedding models are scored: ``--protocol text-embedding`` and the
``text embedding`` variant.

The paper's models are embedding models, and the field scores the temporal sentence similarity file by the
similarity of the two sentences' embeddings (FACTS §5.1; MedST ``SVT-Yang/MedST`` ed1f7b4,
``medst/models/medst/temporal_test.py`` L219–282):

* the pairs of subset ``RadGraph`` (L225; here every subset, each its own group), label 1 for paraphrase and
  0 for contradiction (L233–234);
* the similarity is the dot product of the two normalised sentence embeddings (L129–134), i.e. their cosine;
* **ROC-AUC** of the similarities against the labels over all pairs (L247, ``roc_auc_score``);
* **accuracy at a threshold** (L250–282): ten folds of the pairs in file order (``KFold(n_splits=10)``); in
  each, the threshold of ``np.arange(0, 1.005, 0.005)`` with the highest accuracy on the training pairs
  (the first such, ``similarity > threshold`` meaning paraphrase), then its accuracy on the held-out
  pairs; the threshold of the fold whose held-out accuracy is highest (the first such) is applied to all
  pairs, and that accuracy is reported.

The protocol runs any Hugging Face text encoder (``--model encoder:NAME``, `medtemporal.backends.encoder`:
loaded as BERTScore's encoder is, mean-pooled and normalised) on both sentences of every pair and writes
their cosine as the output; the variant reads it back (rule ``similarity``) and computes both metrics per
subset and over all pairs. The encoder's pooling is ours (MedST projects its own encoder's output); a
generative model's two-option answer stays the family's own sentence score.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from pathlib import Path
from typing import Sequence

import numpy as np

from medtemporal.family import (
    Answer, Backend, BenchmarkSpec, Generate, GenerateConfig, InvalidInputError, Item, Message, Request, Solution,
    Solver, TextPart, UnavailableError, Variant, register,
)
from medtemporal.backends.encoder import EncoderBackend

NAME = "text embedding"
"""The variant's name in ``scores.json`` and the report."""
PROTOCOL = "text-embedding"
THRESHOLDS = np.arange(0, 1.005, 0.005)
"""The thresholds MedST searches (``temporal_test.py`` L265)."""
FOLDS = 10


def label(item: Item) -> int:
    """1 for a paraphrase, 0 for a contradiction (MedST L233–234)."""
    return int(item.meta["category"] == "paraphrase")


@register("protocol", PROTOCOL, description="MS-CXR-T sentence pairs as text-embedding models are scored: the cosine "
          "of the two sentences' embeddings (run with --model encoder:NAME)")
class TextEmbedding(Solver):
    """Two embedding requests per pair, the cosine of the answers as the output (module doc)."""

    name = PROTOCOL

    def templates_for(self, bench: BenchmarkSpec, tasks: Collection[str]) -> tuple[str, ...]:
        if bench.name != "ms-cxr-t" or set(tasks) - {"sentence_similarity"}:
            raise InvalidInputError("--protocol text-embedding scores MS-CXR-T's sentence pairs with a text encoder; "
                                    "run it on an ms-cxr-t benchmark with --tasks sentence_similarity.")
        return ()

    def check_backend(self, backend: Backend) -> None:
        if not isinstance(backend, EncoderBackend):
            raise InvalidInputError(f"--protocol text-embedding needs a text encoder, not {backend.uri}; pass "
                                    "--model encoder:NAME (a Hugging Face text encoder, local folder or hub name).")

    def needs_images(self, backend: Backend) -> bool:
        return False

    async def solve(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig) -> Solution:
        sentences = (item.meta["sentence_1"], item.meta["sentence_2"])
        vectors = [np.asarray(json.loads((await generate(Request((Message("user", (TextPart(s),)),), config,
                                                                   embed=True, item=item.id))).text), dtype=float)
                   for s in sentences]
        cosine = float(vectors[0] @ vectors[1] / (np.linalg.norm(vectors[0]) * np.linalg.norm(vectors[1])))
        output = f"{cosine:.6f}"
        return Solution(output, [{"similarity": output}])


@register("extractor", "similarity", version="1", answer_types=("choice",),
          description="a similarity written as a number (the text-embedding protocol's output)")
def similarity(item: Item, text: str) -> str | None:
    """The output when it is one finite number, else None."""
    try:
        return text.strip() if math.isfinite(float(text.strip())) else None
    except ValueError:
        return None


def _values(items: Sequence[Item], answers: Sequence[Answer]) -> tuple[np.ndarray, np.ndarray]:
    """(similarities, labels); NaN where an answer is no number.

    Raises:
        UnavailableError: no answer is a similarity (the run was not made with the text-embedding protocol).
    """
    sims = np.array([float(a) if isinstance(a, str) else np.nan for a in answers])
    if len(sims) and np.isnan(sims).all():
        raise UnavailableError("no output is a similarity: score runs of --protocol text-embedding")
    return sims, np.array([label(it) for it in items])


def reduce_auc(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """ROC-AUC from summed (paraphrases at similarity rank r, contradictions at rank r): the chance that a
    paraphrase outranks a contradiction, ties counting one half (as ``roc_auc_score``)."""
    k = sums.shape[-1] // 2
    pos, neg = sums[..., :k], sums[..., k:]
    below = np.cumsum(neg, axis=-1) - neg
    pairs = pos.sum(-1) * neg.sum(-1)
    wins = (pos * (below + 0.5 * neg)).sum(-1)
    return np.divide(wins, pairs, out=np.full_like(wins, np.nan), where=pairs > 0)


@register("metric", "mscxrt_similarity_auc", higher_is_better=True, aggregation=reduce_auc, percent=False, corpus=True,
          description="ROC-AUC of the sentence similarities against paraphrase (1) / contradiction (0), as MedST's "
          "temporal_test.py")
def similarity_auc(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per pair, a one-hot of its similarity's rank among the pairs scored, in the paraphrase or the
    contradiction half (a pair without a similarity is left out)."""
    sims, labels = _values(items, answers)
    ranks = {v: r for r, v in enumerate(np.unique(sims[~np.isnan(sims)]))}
    out = np.zeros((len(items), 2 * len(ranks)))
    for row, (s, y) in enumerate(zip(sims, labels)):
        if not np.isnan(s):
            out[row, ranks[s] + (0 if y else len(ranks))] = 1.0
    return out


def medst_threshold(sims: np.ndarray, labels: np.ndarray, folds: int = FOLDS) -> float:
    """The threshold MedST applies (module doc): the best training threshold of the fold that tests best.

    >>> round(medst_threshold(np.array([0.9, 0.8, 0.2, 0.1]), np.array([1, 1, 0, 0]), folds=2), 3)
    0.2
    """
    from sklearn.model_selection import KFold

    chosen, best_test = 0.0, 0.0
    for train, test in KFold(n_splits=min(folds, len(sims))).split(sims):
        best, best_acc = 0.0, 0.0
        for t in THRESHOLDS:
            acc = float(np.mean((sims[train] > t) == labels[train]))
            if acc > best_acc:
                best, best_acc = float(t), acc
        test_acc = float(np.mean((sims[test] > best) == labels[test]))
        if test_acc > best_test:
            chosen, best_test = best, test_acc
    return chosen


@register("metric", "mscxrt_similarity_accuracy", higher_is_better=True, aggregation="mean", percent=True, corpus=True,
          description="accuracy of 'similarity above MedST's threshold means paraphrase', the threshold chosen by "
          "its ten-fold search on each subset")
def similarity_accuracy(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per pair, right (1) or not, at the threshold of its subset (`medst_threshold` over the subset's pairs with a
    similarity, in file order); a pair without one is wrong."""
    sims, labels = _values(items, answers)
    out = np.zeros(len(items))
    for subset in dict.fromkeys(it.subtype for it in items):
        rows = np.array([k for k, it in enumerate(items) if it.subtype == subset and not np.isnan(sims[k])])
        if len(rows) >= 2:
            t = medst_threshold(sims[rows], labels[rows])
            out[rows] = (sims[rows] > t) == labels[rows]
    return out


VARIANT = Variant(
    extractors={"sentence_similarity": "similarity"},
    metrics={"sentence_similarity": ("mscxrt_similarity_auc", "mscxrt_similarity_accuracy")},
    protocols=(PROTOCOL,),
    description="as text-embedding models are scored (MedST temporal_test.py L219-282): ROC-AUC of the cosine "
                "similarities and accuracy at its ten-fold threshold, per subset; runs of --protocol text-embedding",
)
"""The embedding scores of a text encoder's run (`BenchmarkSpec.variants`)."""
