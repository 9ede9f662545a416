"""A blind reader that sees the question and the options together.

The option classifier (`medtemporal.audit.classifier`) ranks options one at a
time, so it cannot use what the question says about the answer: the label
history written into a 3D-RAD Task 6 question ("Prior cardiomegaly timeline:
[0, 1]. ..."), or a finding named in the question that decides which letter is
right. This reader adds to each (item, option) row of that classifier the
question's features **crossed with the option's letter** (one block of
question features per letter, so a logistic regression learns which question
points to which letter; where a subtype's options are the same at every item,
as in 3D-RAD Tasks 4–6, this is a per-letter model of the question):

* binary 1–2-grams of words, numbers and punctuation marks (`QUESTION_TOKENS`:
  ``[0, 1]`` gives ``1 ]``, "the last value is 1"), seen in at least two
  training questions, weighted by `WORD_SCALE`;
* what a bracketed list of numbers in the question says (`features.number_features`:
  first, last, max, min, mean, length), scaled by the training maxima: a stated
  sequence is one fact that many n-grams would only spell out piecewise.

Yes/no items are classified from the same question features. A scikit-learn
logistic regression fitted on training folds only.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression

from medtemporal.audit.classifier import ChoiceRanker
from medtemporal.audit.features import SubtypeData, document_frequency
from medtemporal.audit.heuristics import commonest

WORD_SCALE = 0.3
"""Weight of the n-gram features beside the number features (a stronger penalty on wording: many words each
say little, a stated sequence says much)."""
MIN_DF = 2
"""An n-gram enters a fold's model only if at least this many training questions hold it."""


class QuestionFeatures:
    """Per fold: the question n-grams the training items share (`MIN_DF`) and the scaled number features."""

    def __init__(self, data: SubtypeData, train: np.ndarray) -> None:
        words = data.question_words
        self.columns = np.flatnonzero(document_frequency(words, train) >= MIN_DF)
        self.numbers = data.numbers
        peak = np.abs(self.numbers[train]).max(axis=0) if len(train) else np.zeros(self.numbers.shape[1])
        self.scale = np.where(peak > 0, 1.0 / np.where(peak > 0, peak, 1.0), 0.0)
        self.data = data

    @property
    def width(self) -> int:
        return len(self.columns) + self.numbers.shape[1]

    def of(self, items: np.ndarray) -> sparse.csr_matrix:
        """The question features of ``items`` (one row each)."""
        words = WORD_SCALE * self.data.question_words[items][:, self.columns]
        return sparse.hstack([words, sparse.csr_matrix(self.numbers[items] * self.scale)]).tocsr()


class QuestionRanker(ChoiceRanker):
    """`ChoiceRanker` whose rows also hold the question's features crossed with the option's letter."""

    def fit(self, train: np.ndarray) -> "QuestionRanker":
        self.question = QuestionFeatures(self.data, train)
        return super().fit(train)  # type: ignore[return-value]

    def _features(self, rows: np.ndarray) -> sparse.csr_matrix:
        d, q = self.data, self.question
        per_item = q.of(d.row_item[rows])  # one row per option row: its item's question
        blocks = np.array([d.letters[d.row_letters[r]] for r in rows])
        coo = per_item.tocoo()
        crossed = sparse.csr_matrix((coo.data, (coo.row, coo.col + blocks[coo.row] * q.width)),
                                    shape=(len(rows), q.width * len(d.letters)))
        return sparse.hstack([super()._features(rows), crossed]).tocsr()


class QuestionYesNo:
    """Fit on the training items of a yes/no subtype from their question features, then answer Yes or No."""

    def __init__(self, data: SubtypeData) -> None:
        self.data = data

    def fit(self, train: np.ndarray) -> "QuestionYesNo":
        labels = [self.data.answers[i] for i in train]
        self.constant = commonest(labels)[0] if len(set(labels)) < 2 else None
        if self.constant is None:
            self.question = QuestionFeatures(self.data, train)
            self.model = LogisticRegression(solver="liblinear", C=1.0).fit(self.question.of(train), labels)
        return self

    def predict(self, test: np.ndarray) -> list[str]:
        if self.constant is not None:
            return [self.constant] * len(test)
        return [str(p) for p in self.model.predict(self.question.of(test))]


def question_reader_for(data: SubtypeData) -> QuestionRanker | QuestionYesNo:
    """A fresh question-and-options reader for the subtype ``data`` (multiple choice or yes/no)."""
    return QuestionRanker(data) if data.answer_type == "choice" else QuestionYesNo(data)


__all__ = ["QuestionFeatures", "QuestionRanker", "QuestionYesNo", "question_reader_for"]
