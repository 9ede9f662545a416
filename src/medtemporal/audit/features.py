"""What the blind readers see of one subtype, computed once and sliced per cross-validation fold.

Text is tokenised and counted once for all items of a subtype (no answer is
looked at); each fold then keeps the n-grams its training items have
(`tfidf`, `kept`) and scales by training statistics only, so a fold learns
nothing from its held-out patients' answers and the expensive part is not
repeated five times.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize

from medtemporal.audit.heuristics import Scores, rules_for, tokens
from medtemporal.schema import Item

OPTION_TOKENS = r"[A-Za-z0-9_]+"
QUESTION_TOKENS = r"[a-z0-9]+|[^\sa-z0-9]"
"""Words, numbers and single punctuation marks (lower-cased text): ``[0, 1].`` → ``[ 0 , 1 ] .``."""
NUMBERS = re.compile(r"\[\s*(-?\d+(?:\.\d+)?(?:\s*,\s*-?\d+(?:\.\d+)?)*)\s*\]")
"""A bracketed list of numbers in a question (``[0, 1, 1]``): a sequence the question states."""


def option_text(item: Item, letter: str) -> str:
    """Words of option ``letter``, marked where they also occur in the question or in other options."""
    own = item.options[letter]
    words = tokens(own)
    question = tokens(item.question)
    others = set().union(*(tokens(v) for k, v in item.options.items() if k != letter))
    shared_q = " ".join(f"q_{w}" for w in sorted(words & question))
    unique = " ".join(f"u_{w}" for w in sorted(words - others))
    return f"{own} {shared_q} {unique} letter_{letter}"


def structure(items: Sequence[Item], table: Mapping[str, Mapping[str, Scores]]) -> np.ndarray:
    """Rule scores per option row (`medtemporal.audit.heuristics.score_table`), standardised within each item."""
    rules = list(rules_for("choice"))
    rows = []
    for item in items:
        scores = table[item.id]
        values = np.array([[scores[r][k] for r in rules] for k in item.options], dtype=float)
        std = values.std(axis=0)
        rows.append((values - values.mean(axis=0)) / np.where(std > 0, std, 1.0))
    return np.vstack(rows) if rows else np.zeros((0, len(rules)))


def number_features(question: str) -> list[float]:
    """What the first bracketed number list of ``question`` says: present, first, last, max, min, mean, length,
    whether the last is the max (all 0 without a list).

    >>> number_features("Prior timeline: [0, 1, 0].")
    [1.0, 0.0, 0.0, 1.0, 0.0, 0.3333333333333333, 3.0, 0.0]
    """
    m = NUMBERS.search(question)
    if m is None:
        return [0.0] * 8
    v = [float(x) for x in m.group(1).split(",")]
    return [1.0, v[0], v[-1], max(v), min(v), float(np.mean(v)), float(len(v)), float(v[-1] == max(v))]


def _counts(texts: Sequence[str], **options: object) -> sparse.csr_matrix:
    """Counts of n-grams over ``texts`` (an empty matrix when no text has a token)."""
    try:
        return CountVectorizer(dtype=np.float64, **options).fit_transform(texts).tocsr()  # type: ignore[arg-type]
    except ValueError:  # empty vocabulary
        return sparse.csr_matrix((len(texts), 0))


def document_frequency(counts: sparse.csr_matrix, rows: np.ndarray) -> np.ndarray:
    """How many of ``rows`` hold each column."""
    sub = counts[rows]
    return np.bincount(sub.indices, minlength=counts.shape[1])


def tfidf(counts: sparse.csr_matrix, train: np.ndarray, rows: np.ndarray) -> sparse.csr_matrix:
    """``rows`` as `sklearn.feature_extraction.text.TfidfVectorizer` (sublinear tf, smooth idf, l2 norm) fitted
    on the ``train`` rows would give them: columns the training rows lack are dropped."""
    df = document_frequency(counts, train)
    keep = np.flatnonzero(df > 0)
    idf = np.log((1 + len(train)) / (1 + df[keep])) + 1.0
    x = counts[rows][:, keep].tocsr()
    x.data = 1.0 + np.log(x.data)
    return normalize(x @ sparse.diags(idf), norm="l2", copy=False).tocsr()


@dataclass
class SubtypeData:
    """Everything the readers use of one subtype's items, row-aligned: items, and (item, option) rows."""

    items: Sequence[Item]
    table: Mapping[str, Mapping[str, Scores]]

    def __post_init__(self) -> None:
        items = self.items
        self.answer_type = items[0].answer_type
        self.answers = [str(it.answer) for it in items]
        self.questions = [it.question for it in items]
        self.numbers = np.array([number_features(q) for q in self.questions])
        self.question_words = _counts([q.lower() for q in self.questions], token_pattern=QUESTION_TOKENS,
                                      ngram_range=(1, 2), binary=True, lowercase=False)
        if self.answer_type != "choice":
            self.question_tfidf = _counts(self.questions, ngram_range=(1, 2))
            return
        sizes = np.array([len(it.options) for it in items])
        self.offsets = np.concatenate([[0], np.cumsum(sizes)])
        self.row_letters = [k for it in items for k in it.options]
        self.row_item = np.repeat(np.arange(len(items)), sizes)
        self.row_correct = np.array([int(k == it.answer) for it in items for k in it.options])
        self.option_counts = _counts([option_text(it, k) for it in items for k in it.options],
                                     token_pattern=OPTION_TOKENS, ngram_range=(1, 2))
        self.structure = structure(items, self.table)
        self.letters = {k: n for n, k in enumerate(sorted(set(self.row_letters)))}

    def rows(self, item_index: np.ndarray) -> np.ndarray:
        """The option rows of the items ``item_index``, in order."""
        if len(item_index) == 0:
            return np.zeros(0, dtype=int)
        return np.concatenate([np.arange(self.offsets[i], self.offsets[i + 1]) for i in item_index])


__all__ = ["NUMBERS", "OPTION_TOKENS", "QUESTION_TOKENS", "SubtypeData", "document_frequency", "number_features",
           "option_text", "structure", "tfidf"]
