"""Retrieved references and ablation images of TemMed test items, computed at build time.

For each test instance the top `MAX_K` knowledge-corpus entries of each
retriever are stored in the item's ``meta["retrieval"]`` (the released test
file ships its references the same way), so a run needs only the benchmark
folder; the corpus and its cached embeddings lie beside it (``corpus.jsonl``,
``embeddings/``). Retrievers: ``pairwise`` (the paper's default), ``image``
(current image only) and, with an embedder that also embeds text, ``text``
(current image → report); image-pair statements use ``tfidf``. A reference is
``{"id", "historical", "current", "report", "score"}``.

The paper retrieves with learned image and text encoders it does not name
(§3.2, eq. 1–2). `default_embedder` chooses ours: for real data (a manifest
licence other than ``synthetic``) `LEARNED_EMBEDDER`, XrayCLIP (Stanford AIMI's
CLIP ViT-B/16 fine-tuned on chest X-rays, among them CheXpert Plus; CheXagent,
arXiv 2401.12208; CC-BY-NC-4.0), which ``transformers`` loads natively and
embeds images and reports in one space, so all of Table 5's retrievers exist; it is
fetched into the Hugging Face cache on first use. For phantoms,
the offline ``pixel`` thumbnail, which embeds no text (no ``text`` retriever).

``meta["ablation"]`` holds, per instance, a random corpus historical image and
a random corpus current image for the appendix C.2 ablations.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Sequence

import numpy as np

from medtemporal.retrieval import (
    Embedder,
    ImageRetriever,
    ImageTextRetriever,
    PairEntry,
    PairwiseImageRetriever,
    TfidfRetriever,
    image_embeddings,
    load_embedder,
    text_embeddings,
)

MAX_K = 5
"""References stored per retriever (the paper's top-k goes from 1 to 5)."""
LEARNED_EMBEDDER = "clip:StanfordAIMI/XrayCLIP__vit-b-16__laion2b-s34b-b88k"
"""The learned image–text encoder used for real data unless ``--embedder`` says otherwise."""
PHANTOM_EMBEDDER = "pixel"
"""The offline default for phantoms (licence ``synthetic``): no model, no download."""


def default_embedder(licence: str) -> str:
    """`PHANTOM_EMBEDDER` for synthetic data, else `LEARNED_EMBEDDER`."""
    return PHANTOM_EMBEDDER if licence == "synthetic" else LEARNED_EMBEDDER


def describe_encoder(spec: str) -> str:
    """What an embedder spec is, in a few words, for reports."""
    if spec.split(":", 1)[0] == "pixel":
        return "a grey thumbnail, not a learned encoder: the phantom default"
    if spec == LEARNED_EMBEDDER:
        return "XrayCLIP, a CLIP fine-tuned on chest X-rays: our choice of learned encoder"
    return "an encoder chosen with --embedder"


def references(corpus: Sequence[PairEntry], indices: np.ndarray, scores: np.ndarray) -> list[list[dict]]:
    """Reference dicts per query row."""
    return [
        [{"id": int(j), "historical": corpus[j].historical, "current": corpus[j].current,
          "report": corpus[j].report, "score": round(float(s), 6)} for j, s in zip(row, srow)]
        for row, srow in zip(indices.tolist(), scores.tolist())
    ]


def _pairs(embedder, root: Path, historical: list[str], current: list[str], folder: Path) -> tuple[np.ndarray, np.ndarray]:
    vectors = image_embeddings(embedder, root, historical + current, folder)
    return vectors[: len(historical)], vectors[len(historical) :]


def image_references(
    queries: Sequence[tuple[str, str]],
    corpus: Sequence[PairEntry],
    image_root: Path,
    embedder: str | Embedder,
    folder: Path,
    k: int = MAX_K,
) -> list[dict[str, list[dict]]]:
    """Per query pair (historical, current): ``{"pairwise": [...], "image": [...], ("text": [...])}``.

    ``embedder`` is an embedder or its spec (`load_embedder`). Corpus vectors are cached in ``folder``
    (query vectors too), so a rebuild embeds nothing again.
    """
    embedder = load_embedder(embedder) if isinstance(embedder, str) else embedder
    k = min(k, len(corpus))
    ch, cc = _pairs(embedder, image_root, [e.historical for e in corpus], [e.current for e in corpus], folder)
    qh, qc = _pairs(embedder, image_root, [q[0] for q in queries], [q[1] for q in queries], folder)
    found = {
        "pairwise": references(corpus, *PairwiseImageRetriever(ch, cc).search(qh, qc, k)),
        "image": references(corpus, *ImageRetriever(cc).search(qc, k)),
    }
    if embedder.supports_text:
        reports = text_embeddings(embedder, [e.report for e in corpus], folder)
        found["text"] = references(corpus, *ImageTextRetriever(reports).search(qc, k))
    return [{name: rows[i] for name, rows in found.items()} for i in range(len(queries))]


def statement_references(statements: Sequence[str], corpus: Sequence[PairEntry], k: int = MAX_K) -> list[list[dict]]:
    """TF-IDF top-``k`` corpus entries per image-pair statement (appendix B.2)."""
    if not statements:
        return []
    return references(corpus, *TfidfRetriever([e.report for e in corpus]).search(statements, min(k, len(corpus))))


def ablation_images(n: int, corpus: Sequence[PairEntry], rng: random.Random) -> list[dict[str, str]]:
    """Per test instance, a random corpus historical image and a random corpus current image."""
    return [
        {"random_historical": corpus[rng.randrange(len(corpus))].historical,
         "random_current": corpus[rng.randrange(len(corpus))].current}
        for _ in range(n)
    ]
