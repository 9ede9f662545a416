"""Scores a reader of the text alone cannot reach for free (ours, beside the paper's plain accuracy).

MMXU's options give much of the answer away (FACTS §5.3: about 55–63% from the options alone, against
25% chance). Every item of a build carries ``meta["blind_pick"]``: the answer the audit's best blind reader
gives it when fitted on other patients (`medtemporal.audit.run_audit`, readers fitted across content
types, which no model sees; the reader with the highest held-out accuracy over all items, named in the
manifest's ``config.blind_reader``; on the release the option classifier; `command`). Two scores compare a
model with that reader on the same items:

* ``mmxu_blind_hard_accuracy`` — accuracy on the items the blind reader gets wrong: of the items whose
  blind pick is wrong, the share the model answers right. The blind reader scores 0 here and a uniform
  guess 25%.
* ``mmxu_blind_adjusted`` — ``(acc − blind) / (1 − blind)``, with ``acc`` the model's and ``blind`` the
  blind reader's accuracy on the same items: the share of what the text leaves open that the model
  gets right. 0 is the blind reader's level, 100 all right; a model worse than the reader is negative.

Both are ratios of summed per-item statistics, so the patient-clustered bootstrap resamples numerator
and denominator together; items without a blind pick (a build with ``--no-audit``) are left out, and a
group with none has no value.

>>> from medtemporal.schema import Item
>>> items = [Item.create(benchmark="mmxu", task="change", subtype="worsen", images=[], question=f"Q{k}?",
...          options={"A": "a", "B": "b"}, answer_type="choice", answer="A", meta={"blind_pick": p})
...          for k, p in enumerate("AABB")]
>>> sums = blind_hard_accuracy(items, ["A", "B", "A", "B"]).sum(0)
>>> float(reduce_ratio(sums, 4.0)), float(reduce_adjusted(blind_adjusted(items, ["A", "B", "A", "B"]).sum(0), 4.0))
(0.5, 0.0)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from medtemporal.family import Answer, Item, chance_level, is_correct, register

PICK = "blind_pick"
"""The ``meta`` key of an item's held-out blind answer."""


def _has_pick(item: Item) -> bool:
    return isinstance(item.meta.get(PICK), str)


def reduce_ratio(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``sums[..., 0] / sums[..., 1]`` (NaN where the denominator is 0)."""
    num, den = sums[..., 0], sums[..., 1]
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def reduce_adjusted(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``(right − blind right) / (with a pick − blind right)`` from summed (right, blind right, with a pick)."""
    right, blind, n = sums[..., 0], sums[..., 1], sums[..., 2]
    den = n - blind
    return np.where(den > 0, (right - blind) / np.where(den > 0, den, 1.0), np.nan)


@register("metric", "mmxu_blind_hard_accuracy", higher_is_better=True, aggregation=reduce_ratio, percent=True,
          chance=chance_level,
          description="ours: accuracy on the items the text-only reader (the audit's best blind reader, held out) "
                      "gets wrong")
def blind_hard_accuracy(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per item: (right and blind wrong, blind wrong), each 0 or 1."""
    out = np.zeros((len(items), 2))
    for row, (item, answer) in enumerate(zip(items, answers, strict=True)):
        if _has_pick(item) and item.meta[PICK] != item.answer:
            out[row] = (is_correct(item, answer), 1.0)
    return out


@register("metric", "mmxu_blind_adjusted", higher_is_better=True, aggregation=reduce_adjusted, percent=True,
          description="ours: (accuracy − blind accuracy) / (1 − blind accuracy) on the same items; "
                      "0 = the text-only reader's level")
def blind_adjusted(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per item: (right, blind right, has a blind pick), each 0 or 1."""
    out = np.zeros((len(items), 3))
    for row, (item, answer) in enumerate(zip(items, answers, strict=True)):
        if _has_pick(item):
            out[row] = (is_correct(item, answer), item.meta[PICK] == item.answer, 1.0)
    return out
