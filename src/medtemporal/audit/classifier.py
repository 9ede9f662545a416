"""A text-only answer classifier that reads the options one at a time: TF-IDF and logistic regression.

Multiple-choice items are ranked option by option: each (item, option) row
gets TF-IDF word 1–2-grams of the option text marked with the words it shares
with the question and with no other option, its letter, and the structural
scores of `medtemporal.audit.heuristics` standardised within the item; a
logistic regression learns which rows are correct, and an item's pick is its
best-scoring option. Yes/no items are classified from TF-IDF word 1–2-grams
of the question. Both are scikit-learn estimators fitted on training folds
only (`medtemporal.audit.features`: text counted once, vocabulary and idf
from the training items).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression

from medtemporal.audit.features import SubtypeData, tfidf
from medtemporal.audit.heuristics import commonest


class ChoiceRanker:
    """Fit on the training items of a multiple-choice subtype, then pick one option per held-out item."""

    def __init__(self, data: SubtypeData) -> None:
        self.data = data

    def _features(self, rows: np.ndarray) -> sparse.csr_matrix:
        """One row per (item, option) of ``rows``: option TF-IDF and standardised rule scores."""
        d = self.data
        return sparse.hstack([tfidf(d.option_counts, self.train_rows, rows),
                              sparse.csr_matrix(d.structure[rows])]).tocsr()

    def fit(self, train: np.ndarray) -> "ChoiceRanker":
        d = self.data
        self.train_rows = d.rows(train)
        y = d.row_correct[self.train_rows]
        self.prior = commonest(d.answers[i] for i in train)
        self.constant = len(set(y)) < 2
        if not self.constant:
            self.model = LogisticRegression(solver="liblinear", C=1.0).fit(self._features(self.train_rows), y)
        return self

    def predict(self, test: np.ndarray) -> list[str]:
        d = self.data
        if self.constant or len(test) == 0:
            return [self.prior[0] if self.prior and self.prior[0] in d.items[i].options
                    else next(iter(d.items[i].options)) for i in test]
        rows = d.rows(test)
        scores = self.model.decision_function(self._features(rows))
        out, start = [], 0
        for i in test:
            n = len(d.items[i].options)
            out.append(d.row_letters[rows[start + int(np.argmax(scores[start:start + n]))]])
            start += n
        return out


class YesNoClassifier:
    """Fit on the training items of a yes/no subtype from their question text, then answer Yes or No."""

    def __init__(self, data: SubtypeData) -> None:
        self.data = data

    def fit(self, train: np.ndarray) -> "YesNoClassifier":
        labels = [self.data.answers[i] for i in train]
        self.train = train
        self.constant = commonest(labels)[0] if len(set(labels)) < 2 else None
        if self.constant is None:
            self.model = LogisticRegression(solver="liblinear", C=1.0).fit(
                tfidf(self.data.question_tfidf, train, train), labels)
        return self

    def predict(self, test: np.ndarray) -> list[str]:
        if self.constant is not None:
            return [self.constant] * len(test)
        return [str(p) for p in self.model.predict(tfidf(self.data.question_tfidf, self.train, test))]


def classifier_for(data: SubtypeData) -> ChoiceRanker | YesNoClassifier:
    """A fresh option classifier for the subtype ``data`` (multiple choice or yes/no)."""
    return ChoiceRanker(data) if data.answer_type == "choice" else YesNoClassifier(data)


__all__ = ["ChoiceRanker", "YesNoClassifier", "classifier_for"]
