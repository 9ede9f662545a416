"""MS-CXR-T's two accuracies: plain and macro (mean per-class recall), per finding and averaged.

The field scores the image task both ways (FACTS §5.1): CheXbench reports plain **accuracy** (the share of
labels answered right; the shared ``accuracy`` metric), MedGemma 1.5 **macro accuracy**: the recall of each
true class (improving, stable, worsening) averaged over the classes present, as scikit-learn's
``balanced_accuracy_score``. The classes are far from balanced (worsening 555, stable 530, improving 241 of
1,326 labels; 67% of pneumonia labels are worsening), so always answering the commonest class scores the
class prior in accuracy but exactly 1/3 in macro accuracy: macro accuracy is the one a text-only reader
of the finding's name cannot inflate.

Registered here:

* ``mscxrt_macro_accuracy`` — macro accuracy over the items of a group (for the sentence task, over
  paraphrase and contradiction);
* ``mscxrt_accuracy_mean`` and ``mscxrt_macro_accuracy_mean`` — the "average" column: each finding's value,
  then their mean over the findings in the group (MedST's ``avg_acc``, ``temporal_test.py`` L204–208); over
  one finding they equal the plain values.

An invalid or missing answer counts as wrong for its true class. Each metric sums per-item statistics, so
the patient-clustered bootstrap resamples them as for accuracy.

>>> import numpy as np
>>> float(reduce_macro(np.array([2., 0, 0, 0, 0, 3, 1, 1, 0, 0]), np.array(7.)))  # recalls 2/3, 0, 0
0.2222222222222222
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from medtemporal.benchmarks.ms_cxr_t.release import CATEGORIES, FINDINGS, PROGRESSIONS
from medtemporal.family import Answer, Item, is_correct, register

CLASSES: tuple[str, ...] = (*PROGRESSIONS, *CATEGORIES)
"""Every true class of the two tasks (the option text of the gold letter)."""


def _class(item: Item) -> int:
    return CLASSES.index(item.options[str(item.answer)])


def _chance(item: Item) -> float:
    return 1.0 / len(item.options)


def class_stats(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per item: (right in its class c, for every class) then (of class c, for every class)."""
    k = len(CLASSES)
    stats = np.zeros((len(items), 2 * k))
    for row, (item, answer) in enumerate(zip(items, answers, strict=True)):
        c = _class(item)
        stats[row, c] = is_correct(item, answer)
        stats[row, k + c] = 1.0
    return stats


def reduce_macro(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Mean recall over the classes present, from summed `class_stats` (any leading batch axes)."""
    k = sums.shape[-1] // 2
    right, seen = sums[..., :k], sums[..., k:]
    recall = np.divide(right, seen, out=np.zeros_like(right), where=seen > 0)
    present = (seen > 0).sum(-1)
    return np.where(present > 0, recall.sum(-1) / np.maximum(present, 1), np.nan)


def _finding(item: Item) -> int:
    return FINDINGS.index(item.subtype)


@register("metric", "mscxrt_macro_accuracy", higher_is_better=True, aggregation=reduce_macro, percent=True,
          chance=_chance, description="macro accuracy: mean over true classes of the share answered right "
          "(balanced accuracy; a constant answer scores 1/#classes)")
def macro_accuracy(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-item `class_stats`, reduced by `reduce_macro`."""
    return class_stats(items, answers)


def reduce_accuracy_mean(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Mean over findings present of right / labels, from summed (right, labels) per finding."""
    f = sums.shape[-1] // 2
    right, seen = sums[..., :f], sums[..., f:]
    acc = np.divide(right, seen, out=np.zeros_like(right), where=seen > 0)
    present = (seen > 0).sum(-1)
    return np.where(present > 0, acc.sum(-1) / np.maximum(present, 1), np.nan)


@register("metric", "mscxrt_accuracy_mean", higher_is_better=True, aggregation=reduce_accuracy_mean, percent=True,
          chance=_chance, description="accuracy of each finding, averaged over the findings (MedST's avg_acc)")
def accuracy_mean(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per item: (right, for its finding) then (1, for its finding)."""
    f = len(FINDINGS)
    stats = np.zeros((len(items), 2 * f))
    for row, (item, answer) in enumerate(zip(items, answers, strict=True)):
        stats[row, _finding(item)] = is_correct(item, answer)
        stats[row, f + _finding(item)] = 1.0
    return stats


def reduce_macro_mean(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Mean over findings present of each finding's macro accuracy, from per-finding `class_stats` blocks."""
    width = 2 * len(CLASSES)
    blocks = [reduce_macro(sums[..., i * width:(i + 1) * width], counts) for i in range(sums.shape[-1] // width)]
    values = np.stack(blocks, -1)
    present = ~np.isnan(values)
    n = present.sum(-1)
    return np.where(n > 0, np.where(present, values, 0.0).sum(-1) / np.maximum(n, 1), np.nan)


@register("metric", "mscxrt_macro_accuracy_mean", higher_is_better=True, aggregation=reduce_macro_mean,
          percent=True, chance=_chance, description="macro accuracy of each finding, averaged over the findings")
def macro_accuracy_mean(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per item: its `class_stats` in its finding's block (one block per finding)."""
    width = 2 * len(CLASSES)
    stats = np.zeros((len(items), len(FINDINGS) * width))
    own = class_stats(items, answers)
    for row, item in enumerate(items):
        start = _finding(item) * width
        stats[row, start:start + width] = own[row]
    return stats
