"""Exact top-k search and the retrievers built on it.

Every retriever scores a query against every corpus entry (cosine similarity
of unit vectors is a dot product) and keeps the ``k`` best, best first, ties
by lower index. Scores are computed in blocks of query rows, so 2,000 queries
over 17,144 pairs need no more than a few tens of MB at once.

- `PairwiseImageRetriever`: sim(hist, hist') + sim(cur, cur'), the paper's eq. (2);
  computed as one product of concatenated [hist, cur] vectors.
- `ImageRetriever`: sim(cur, cur') only (image→image).
- `ImageTextRetriever`: sim(cur, report') in a joint image-text space (image→text).
- `TfidfRetriever`: cosine of TF-IDF vectors (scikit-learn) of a statement and each report.

>>> keys = np.eye(3, dtype=np.float32)
>>> top_k(np.array([[0.1, 0.9, 0.2]], dtype=np.float32), keys, 2)[0].tolist()
[[1, 2]]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from medtemporal.errors import InvalidInputError

BLOCK = 256
"""Query rows scored at once."""

CHUNK = 64
"""Columns per chunk whose maxima bound a row's k-th best score (see `_best`)."""


def top_k(queries: np.ndarray, keys: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and scores of the ``k`` keys with the largest dot product, per query.

    Args:
        queries: (m, d) array.
        keys: (n, d) array.
        k: How many to keep (at most n).

    Returns:
        ``(indices, scores)``, both (m, k), best first; among equal scores the lower index wins,
        exactly as a stable sort of all scores would choose.
    """
    keys = np.asarray(keys, dtype=np.float32)
    if keys.ndim != 2:
        raise InvalidInputError(f"Corpus vectors must form a matrix, not shape {keys.shape}; embed the corpus again.")
    return _top_k(queries, np.ascontiguousarray(keys.T), k)


def _top_k(queries: np.ndarray, keys_t: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """`top_k` with the keys already transposed to (d, n), so a retriever prepares them once."""
    queries = np.asarray(queries, dtype=np.float32)
    if queries.ndim != 2 or queries.shape[1] != keys_t.shape[0]:
        raise InvalidInputError(
            f"Query vectors {queries.shape} and corpus vectors {keys_t.shape[::-1]} do not match; "
            "embed both with one embedder."
        )
    n = keys_t.shape[1]
    if not 1 <= k <= n:
        raise InvalidInputError(f"top-k of {k} is out of range for a corpus of {n}; use 1 to {n}.")
    out_idx = np.empty((queries.shape[0], k), dtype=np.int64)
    out_score = np.empty((queries.shape[0], k), dtype=np.float32)
    for start in range(0, queries.shape[0], BLOCK):
        stop = start + BLOCK
        out_idx[start:stop], out_score[start:stop] = _best(queries[start:stop] @ keys_t, k)
    return out_idx, out_score


def _best(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and values of the ``k`` largest scores per row, best first, lower index first among equals.

    Equal to the first ``k`` of a stable descending sort of each row, but without sorting or
    partitioning whole rows: the rows are cut into chunks of `CHUNK` columns (at least ``k``
    chunks) and a row's k-th largest chunk maximum ``t`` is a lower bound of its k-th largest
    score (the top ``k`` chunk maxima are ``k`` distinct scores >= ``t``). So every score of
    the stable top ``k`` is >= ``t``; only those candidates (about ``k`` per row on real data,
    more where many scores tie) are sorted, by (row, -score, index). About 3 x faster than
    ``np.argpartition`` over 17,144 columns, and exact ties need no second pass.
    """
    rows, n = scores.shape
    if not np.isfinite(scores).all():
        raise InvalidInputError("Some similarity scores are not finite (NaN or inf); check the embeddings for NaN.")
    chunk = max(1, min(CHUNK, n // k))  # ceil(n / chunk) >= k chunks
    maxima = np.maximum.reduceat(scores, np.arange(0, n, chunk), axis=1)
    bound = np.partition(maxima, maxima.shape[1] - k, axis=1)[:, maxima.shape[1] - k]
    flat = np.flatnonzero(scores >= bound[:, None])  # 1-D nonzero: far faster than the 2-D one
    row, col = np.divmod(flat, n)
    value = scores.ravel()[flat]
    order = np.lexsort((col, -value, row))
    first = np.searchsorted(row[order], np.arange(rows))  # where each row's candidates begin
    pick = order[first[:, None] + np.arange(k)]
    return col[pick], value[pick]


def _transposed(*blocks: np.ndarray) -> np.ndarray:
    """Corpus vector blocks side by side, as one contiguous (d, n) float32 matrix."""
    return np.ascontiguousarray(np.concatenate([np.asarray(b, dtype=np.float32) for b in blocks], axis=1).T)


class PairwiseImageRetriever:
    """Pairs whose historical and current images are both like the query's (eq. 2)."""

    def __init__(self, historical: np.ndarray, current: np.ndarray) -> None:
        """``historical``/``current``: (n, d) unit vectors of the corpus's historical/current images."""
        if np.shape(historical) != np.shape(current):
            raise InvalidInputError("Corpus historical and current vectors differ in shape; embed both with one embedder.")
        self._keys_t = _transposed(historical, current)

    def search(self, historical: np.ndarray, current: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` corpus pairs for query pairs; scores are sim(h, h') + sim(c, c') in [-2, 2]."""
        if np.shape(historical) != np.shape(current):
            raise InvalidInputError("Query historical and current vectors differ in shape; embed both with one embedder.")
        return _top_k(np.concatenate([historical, current], axis=1), self._keys_t, k)


class ImageRetriever:
    """Corpus pairs whose current image is like the query's current image (image→image)."""

    def __init__(self, current: np.ndarray) -> None:
        self._keys_t = _transposed(current)

    def search(self, current: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` by sim(c, c')."""
        return _top_k(current, self._keys_t, k)


class ImageTextRetriever:
    """Corpus reports whose text embedding is like the query's current image (image→text)."""

    def __init__(self, reports: np.ndarray) -> None:
        """``reports``: (n, d) unit text vectors of the corpus reports, in the image encoder's joint space."""
        self._keys_t = _transposed(reports)

    def search(self, current: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` by sim(c, report')."""
        return _top_k(current, self._keys_t, k)


class TfidfRetriever:
    """Reports most like a statement by TF-IDF cosine (scikit-learn defaults), appendix B.2."""

    def __init__(self, reports: Sequence[str]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        if not reports:
            raise InvalidInputError("The corpus has no reports to retrieve from; build it from more data.")
        self.vectorizer = TfidfVectorizer()
        self.matrix = self.vectorizer.fit_transform(list(reports))

    def search(self, statements: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` reports per statement."""
        n = self.matrix.shape[0]
        if not 1 <= k <= n:
            raise InvalidInputError(f"top-k of {k} is out of range for a corpus of {n}; use 1 to {n}.")
        queries = self.vectorizer.transform(list(statements))
        out_idx = np.empty((queries.shape[0], k), dtype=np.int64)
        out_score = np.empty((queries.shape[0], k), dtype=np.float32)
        for start in range(0, queries.shape[0], BLOCK):
            stop = start + BLOCK
            scores = (queries[start:stop] @ self.matrix.T).toarray().astype(np.float32)
            out_idx[start:stop], out_score[start:stop] = _best(scores, k)
        return out_idx, out_score
