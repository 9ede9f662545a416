"""What the question text alone answers in Medical-Diff-VQA (ours): the commonest answer of the question.

The shared audit (`medtemporal.audit`) reads closed questions only. Most Medical-Diff-VQA questions are
open, and their answers are decided by templates: "which view is this image taken?" is answered "PA view"
far more often than "AP view" (the generator keeps 5% of AP studies), and a difference question's
commonest answer may be "nothing has changed.". This reader answers every question, closed or open, with
the answer the same question text had most often among *other* patients (5-fold ``GroupKFold`` by patient;
a question text never seen in training gets its type's commonest answer), and is scored by the same exact
match as models (`medtemporal.scoring.metrics.is_correct`). Reports show it beside each model's accuracy.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Sequence

import numpy as np

from medtemporal.schema import Item
from medtemporal.scoring.metrics import is_correct

FOLDS = 5


def _key(item: Item) -> str:
    return " ".join(str(item.answer).split()).casefold()


def _commonest(counts: Counter[str]) -> str:
    return min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def blind_answers(items: Sequence[Item], folds: int = FOLDS) -> list[str | None]:
    """Each item's held-out answer from its question text (None when fewer than two patients)."""
    from sklearn.model_selection import GroupKFold

    groups = [it.cluster for it in items]
    n = min(folds, len(set(groups)))
    if n < 2:
        return [None] * len(items)
    picks: list[str | None] = [None] * len(items)
    shown = {_key(it): str(it.answer) for it in items}
    for train, test in GroupKFold(n_splits=n).split(np.zeros(len(items)), groups=groups):
        by_question: dict[str, Counter[str]] = defaultdict(Counter)
        by_type: dict[str, Counter[str]] = defaultdict(Counter)
        for i in train:
            by_question[items[i].question][_key(items[i])] += 1
            by_type[items[i].subtype][_key(items[i])] += 1
        for i in test:
            counts = by_question.get(items[i].question) or by_type.get(items[i].subtype)
            picks[i] = shown[_commonest(counts)] if counts else None
    return picks


def blind_accuracy(items: Sequence[Item]) -> dict[str, tuple[int, float]]:
    """Group → (items, blind exact-match accuracy) for ``overall`` (non-difference questions, as model
    accuracy), ``closed``, ``open`` and each question type (difference included)."""
    picks = blind_answers(items)
    right = [is_correct(it, p) for it, p in zip(items, picks)]
    groups: dict[str, list[bool]] = defaultdict(list)
    for it, ok in zip(items, right):
        groups[f"subtype:{it.subtype}"].append(ok)
        groups[f"task:{it.task}"].append(ok)
        if it.task != "difference":
            groups["overall"].append(ok)
    return {g: (len(v), float(np.mean(v))) for g, v in groups.items()}
