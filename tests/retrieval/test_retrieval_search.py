"""Retrievers return exactly the nearest corpus entries (brute force agreement), top-k 1-5."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import cosine_similarity

from medtemporal.errors import InvalidInputError
from medtemporal.retrieval import (
    ImageRetriever,
    PairwiseImageRetriever,
    TfidfRetriever,
    top_k,
)
from medtemporal.retrieval.embedders import normalise_rows
from medtemporal.retrieval import search


def brute(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Stable full sort of every row: best first, lower index first among equals."""
    idx = np.array([sorted(range(len(row)), key=lambda j: (-row[j], j))[:k] for row in scores])
    return idx, np.take_along_axis(scores, idx, axis=1)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_pairwise_equals_brute_force_sum_of_similarities(k: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "BLOCK", 7)  # several blocks
    rng = np.random.default_rng(k)
    ch, cc = normalise_rows(rng.normal(size=(300, 16))), normalise_rows(rng.normal(size=(300, 16)))
    qh, qc = normalise_rows(rng.normal(size=(25, 16))), normalise_rows(rng.normal(size=(25, 16)))
    idx, scores = PairwiseImageRetriever(ch, cc).search(qh, qc, k)
    want = np.array([[float(qh[i] @ ch[j]) + float(qc[i] @ cc[j]) for j in range(300)] for i in range(25)])
    widx, wscores = brute(want, k)
    assert (idx == widx).all()
    assert np.allclose(scores, wscores, atol=1e-5)


def test_image_to_image_uses_the_current_image_only() -> None:
    rng = np.random.default_rng(0)
    cc = normalise_rows(rng.normal(size=(50, 8)))
    idx, scores = ImageRetriever(cc).search(cc[[7, 3]], 1)
    assert idx[:, 0].tolist() == [7, 3]
    assert np.allclose(scores[:, 0], 1.0, atol=1e-6)


def test_ties_keep_the_lowest_index_like_a_stable_sort() -> None:
    keys = np.array([[1.0, 0], [0, 1.0], [1.0, 0], [1.0, 0], [0.5, 0.5]], dtype=np.float32)
    idx, _ = top_k(np.array([[1.0, 0]], dtype=np.float32), keys, 2)
    assert idx.tolist() == [[0, 2]]
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 3, size=(200, 4)).astype(np.float32)  # many exact ties
    queries = rng.integers(0, 3, size=(30, 4)).astype(np.float32)
    for k in (1, 3, 5):
        got, _ = top_k(queries, keys, k)
        want, _ = brute(queries @ keys.T, k)
        assert (got == want).all()


def test_tfidf_equals_brute_force_cosine() -> None:
    reports = ["Stable left pleural effusion.", "Increasing right effusion.", "Improving edema.",
               "No change in cardiomegaly.", "Stable cardiomegaly and edema.", "Resolved pneumothorax."]
    statements = ["stable cardiomegaly", "increasing effusion", "improving mild edema"]
    retriever = TfidfRetriever(reports)
    idx, scores = retriever.search(statements, 3)
    want = cosine_similarity(retriever.vectorizer.transform(statements), retriever.matrix)
    widx, wscores = brute(want, 3)
    assert (idx == widx).all() and np.allclose(scores, wscores, atol=1e-6)
    assert idx[0, 0] in (3, 4) and idx[1, 0] == 1


def test_bad_k_and_shapes_fail_clearly() -> None:
    keys = np.eye(3, dtype=np.float32)
    with pytest.raises(InvalidInputError, match="top-k of 4"):
        top_k(keys, keys, 4)
    with pytest.raises(InvalidInputError, match="do not match"):
        top_k(np.ones((1, 2), dtype=np.float32), keys, 1)


@pytest.mark.parametrize("chunk", [1, 3, 64])
def test_chunked_selection_equals_a_stable_sort_with_ties_across_chunks(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "CHUNK", chunk)
    rng = np.random.default_rng(chunk)
    scores = rng.integers(0, 4, size=(40, 97)).astype(np.float32)  # ties everywhere, uneven last chunk
    scores[0] = 1.0  # a whole row tied
    scores[1, [5, 50, 96]] = 9.0  # the best three in different chunks, the last in the short tail chunk
    for k in (1, 3, 5, 97):
        got_idx, got = search._best(scores, k)
        want_idx, want = brute(scores, k)
        assert (got_idx == want_idx).all() and (got == want).all()
    assert search._best(scores, 3)[0][1].tolist() == [5, 50, 96]
    assert search._best(scores, 4)[0][0].tolist() == [0, 1, 2, 3]


def test_non_finite_vectors_fail_clearly() -> None:
    keys = np.eye(3, dtype=np.float32)
    with pytest.raises(InvalidInputError, match="not finite"):
        top_k(np.array([[np.nan, 0, 0]], dtype=np.float32), keys, 1)
