"""A text-only answer classifier: TF-IDF of question and options, logistic regression.

Multiple-choice items are ranked option by option: each (item, option) row
gets TF-IDF features of the option text, of the words it shares with the
question and with the other options, its letter, and the structural scores of
`medtemporal.audit.heuristics` standardised within the item; a logistic
regression learns which rows are correct, and an item's pick is its
best-scoring option. Yes/no items are classified from TF-IDF word 1–2-grams
of the question. Both are scikit-learn estimators fitted on training folds only.
"""

from __future__ import annotations

from collections import Counter
from typing import Mapping, Sequence

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from medtemporal.audit.heuristics import Scores, answers, rules_for, tokens
from medtemporal.schema import Item


def _option_text(item: Item, letter: str) -> str:
    """Words of option ``letter``, marked where they also occur in the question or in other options."""
    own = item.options[letter]
    words = tokens(own)
    question = tokens(item.question)
    others = set().union(*(tokens(v) for k, v in item.options.items() if k != letter))
    shared_q = " ".join(f"q_{w}" for w in sorted(words & question))
    unique = " ".join(f"u_{w}" for w in sorted(words - others))
    return f"{own} {shared_q} {unique} letter_{letter}"


def _structure(items: Sequence[Item], table: Mapping[str, Mapping[str, Scores]]) -> np.ndarray:
    """Rule scores per option row (from ``table``, see `score_table`), standardised within each item."""
    rules = list(rules_for("choice"))
    rows = []
    for item in items:
        scores = table[item.id]
        table_ = np.array([[scores[r][k] for r in rules] for k in item.options], dtype=float)
        std = table_.std(axis=0)
        rows.append((table_ - table_.mean(axis=0)) / np.where(std > 0, std, 1.0))
    return np.vstack(rows) if rows else np.zeros((0, len(rules)))


class ChoiceRanker:
    """Fit on multiple-choice items, then pick one option per item (``table``: their `score_table`)."""

    def __init__(self, table: Mapping[str, Mapping[str, Scores]]) -> None:
        self.table = table
        self.texts: dict[tuple[str, str], str] = {}

    def _texts(self, items: Sequence[Item]) -> list[str]:
        out = []
        for it in items:
            for k in it.options:
                if (it.id, k) not in self.texts:
                    self.texts[(it.id, k)] = _option_text(it, k)
                out.append(self.texts[(it.id, k)])
        return out

    def fit(self, items: Sequence[Item]) -> "ChoiceRanker":
        self.vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=1, sublinear_tf=True, token_pattern=r"[A-Za-z0-9_]+")
        texts = self._texts(items)
        x = sparse.hstack([self.vectorizer.fit_transform(texts), sparse.csr_matrix(_structure(items, self.table))]).tocsr()
        y = np.array([int(k == it.answer) for it in items for k in it.options])
        self.constant = None if len(set(y)) > 1 else int(y[0])
        if self.constant is None:
            self.model = LogisticRegression(solver="liblinear", C=1.0).fit(x, y)
        self.prior = [a for a, _ in Counter(str(it.answer) for it in items).most_common()]
        return self

    def predict(self, items: Sequence[Item]) -> list[str]:
        texts = self._texts(items)
        if self.constant is not None or not texts:
            return [self.prior[0] if self.prior and self.prior[0] in it.options else next(iter(it.options))
                    for it in items]
        x = sparse.hstack([self.vectorizer.transform(texts), sparse.csr_matrix(_structure(items, self.table))]).tocsr()
        scores = self.model.decision_function(x)
        out, i = [], 0
        for it in items:
            letters = list(it.options)
            best = int(np.argmax(scores[i:i + len(letters)]))
            out.append(letters[best])
            i += len(letters)
        return out


class YesNoClassifier:
    """Fit on yes/no items from their question text, then answer Yes or No."""

    def fit(self, items: Sequence[Item]) -> "YesNoClassifier":
        self.prior = [a for a, _ in Counter(str(it.answer) for it in items).most_common()]
        labels = [str(it.answer) for it in items]
        self.constant = self.prior[0] if len(set(labels)) < 2 else None
        if self.constant is None:
            self.vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
            self.model = LogisticRegression(solver="liblinear", C=1.0).fit(
                self.vectorizer.fit_transform([it.question for it in items]), labels)
        return self

    def predict(self, items: Sequence[Item]) -> list[str]:
        if self.constant is not None:
            return [self.constant] * len(items)
        return [str(p) for p in self.model.predict(self.vectorizer.transform([it.question for it in items]))]


def classifier_for(answer_type: str, table: Mapping[str, Mapping[str, Scores]]) -> ChoiceRanker | YesNoClassifier:
    """A fresh classifier for items of ``answer_type`` (``choice`` or ``yesno``; ``table``: their `score_table`)."""
    return ChoiceRanker(table) if answer_type == "choice" else YesNoClassifier()


__all__ = ["ChoiceRanker", "YesNoClassifier", "answers", "classifier_for"]
