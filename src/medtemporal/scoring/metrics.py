"""Metrics: per-sample scoring functions registered with how they aggregate.

A metric is registered under kind ``metric`` with its metadata in the same
call::

    @register("metric", "accuracy", higher_is_better=True, aggregation="mean",
              chance=chance_level, percent=True, description="...")
    def accuracy(items, answers) -> np.ndarray: ...

The function scores every sample, ``(items, answers) -> array``: shape
``(n,)``, or ``(n, k)`` sufficient statistics for metrics that are not a
mean of per-sample values (corpus BLEU, micro F1). An answer is None when it
was invalid or missing; metrics score it as wrong. ``aggregation`` turns the
column sums of those statistics over a group, with the group's item count,
into the group's value: ``"mean"`` (sum / count), or any function
``reduce(sums[..., k], counts[...]) -> values[...]`` that works on leading
batch axes, so the clustered bootstrap (`medtemporal.scoring.ci`) stays
vectorised. ``chance`` maps one item to its chance-level score (or None);
``percent`` asks reports to show the value × 100. A metric that cannot be
computed at all on this machine (its encoder or data files cannot be had, or
an optional package is missing) raises one of `UNAVAILABLE`; scoring then
reports it as unavailable with that sentence and scores the others. A metric registered with
``reads_output=True`` is called as ``(items, answers, outputs)`` with the raw
outputs too (None where missing); ``settings`` is a function returning the
options it runs with, recorded in ``scores.json``.

Registered here: ``accuracy`` (exact match, `is_correct`) and ``yesno_macro_f1``
(macro F1 over Yes/No, as scikit-learn's). BERTScore is in `medtemporal.scoring.text_metrics`;
a paper's own report metrics are in its family's package.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from medtemporal.errors import InvalidInputError, MissingDependencyError, UnavailableError
from medtemporal.registry import lookup, register
from medtemporal.schema import Item

Answer = str | list[str] | None
"""An extracted answer: a letter, Yes/No or text, an ordering, or None (invalid or missing)."""
SampleFn = Callable[[Sequence[Item], Sequence[Answer]], np.ndarray]
Reduce = Callable[[np.ndarray, np.ndarray], np.ndarray]
UNAVAILABLE = (UnavailableError, MissingDependencyError)
"""What a metric raises when it cannot be computed on this machine: reported as unavailable, not an error."""


def reduce_mean(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Mean of per-sample values: ``sums[..., 0] / counts``."""
    return sums[..., 0] / counts


AGGREGATIONS: dict[str, Reduce] = {"mean": reduce_mean}
"""Built-in aggregations by name; a metric may also pass its own ``reduce`` function."""


@dataclass(frozen=True)
class Metric:
    """A registered metric with its declared metadata resolved."""

    name: str
    score: SampleFn
    """Per-sample scoring: ``(items, answers) -> (n,) or (n, k) array``."""
    reduce: Reduce
    """Aggregation from summed statistics and item counts to the group value."""
    aggregation: str
    higher_is_better: bool
    chance: Callable[[Item], float | None] | None = None
    percent: bool = False
    description: str = ""
    reads_output: bool = False
    """Scored from ``(items, answers, outputs)``: the raw outputs too (e.g. a rationale beside an ordering)."""
    settings: Callable[[], dict[str, Any]] | None = None
    """The options the metric is computed with as resolved now (encoder, weights), recorded in ``scores.json``."""
    needs_judge: bool = False
    """Scored from ``(items, answers, verdicts)``: the LLM judge's verdicts (`medtemporal.scoring.judge`)."""
    corpus: bool = False
    """An item's statistics depend on the other items scored with it (CIDEr's document frequencies come from all
    the references): scored over every item of the run whose task has the metric, never a subset alone."""

    def per_sample(self, items: Sequence[Item], answers: Sequence[Any], outputs: Sequence[str | None],
                   verdicts: Sequence[Any] = ()) -> np.ndarray:
        """Per-sample statistics as a float array, passing the raw outputs or the judge's verdicts to the
        metrics that read them."""
        args: list[Sequence[Any]] = [items, answers]
        if self.reads_output:
            args.append(outputs)
        if self.needs_judge:
            args.append(verdicts)
        return np.asarray(self.score(*args), dtype=float)

    def summary(self) -> dict[str, Any]:
        """JSON-ready metadata recorded in ``scores.json`` (with ``settings`` where the metric has any)."""
        summary = {
            "higher_is_better": self.higher_is_better,
            "aggregation": self.aggregation,
            "percent": self.percent,
            "description": self.description,
        }
        if self.settings is not None:
            summary["settings"] = self.settings()
        return summary


def metric(name: str) -> Metric:
    """The registered metric ``name`` with its metadata checked.

    Raises:
        UnknownNameError: no such metric.
        InvalidInputError: it was registered without ``higher_is_better`` or with an unknown aggregation.
    """
    entry = lookup("metric", name)
    info = entry.info
    if "higher_is_better" not in info:
        raise InvalidInputError(f"Metric {name!r} was registered without higher_is_better; add it to @register.")
    aggregation = info.get("aggregation", "mean")
    if callable(aggregation):
        reduce, label = aggregation, getattr(aggregation, "__name__", "custom")
    elif aggregation in AGGREGATIONS:
        reduce, label = AGGREGATIONS[aggregation], aggregation
    else:
        raise InvalidInputError(
            f"Metric {name!r} names unknown aggregation {aggregation!r}; use one of "
            f"{', '.join(AGGREGATIONS)} or pass a reduce function."
        )
    return Metric(
        name=name,
        score=entry.obj,
        reduce=reduce,
        aggregation=label,
        higher_is_better=bool(info["higher_is_better"]),
        chance=info.get("chance"),
        percent=bool(info.get("percent", False)),
        description=str(info.get("description", "")),
        reads_output=bool(info.get("reads_output", False)),
        settings=info.get("settings"),
        needs_judge=bool(info.get("needs_judge", False)),
        corpus=bool(info.get("corpus", False)),
    )


def is_correct(item: Item, answer: Answer) -> bool:
    """Exact match of an extracted answer with ``item.answer`` (None is wrong).

    Letters compare case-insensitively, yes/no and open text after casefolding
    and collapsing spaces, orderings element by element.

    >>> from medtemporal.schema import Item
    >>> item = Item.create(benchmark="x", task="t", subtype="s", images=[], question="?",
    ...     options={"A": "a", "B": "b"}, answer_type="choice", answer="B")
    >>> is_correct(item, "b"), is_correct(item, None)
    (True, False)
    """
    if answer is None:
        return False
    if isinstance(item.answer, list) or isinstance(answer, list):
        if not (isinstance(item.answer, list) and isinstance(answer, list)):
            return False
        return [fold(a) for a in answer] == [fold(a) for a in item.answer]
    return fold(answer) == fold(item.answer)


def fold(text: object) -> str:
    """An answer as compared: case and spaces folded.

    >>> fold("  PA  View ")
    'pa view'
    """
    return " ".join(str(text).split()).casefold()


def chance_level(item: Item) -> float | None:
    """Probability that a uniform guess is right: 1/#options, 1/2 for yes/no, 1/k! for
    orderings of k elements; None for open answers."""
    if item.answer_type == "choice":
        return 1.0 / len(item.options) if item.options else None
    if item.answer_type == "yesno":
        return 0.5
    if item.answer_type == "ordering" and isinstance(item.answer, list) and item.answer:
        return 1.0 / math.factorial(len(item.answer))
    return None


@register(
    "metric",
    "accuracy",
    higher_is_better=True,
    aggregation="mean",
    chance=chance_level,
    percent=True,
    description="share of items answered exactly right; invalid and missing answers count as wrong",
)
def accuracy(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample exact-match correctness (1.0 / 0.0); see `is_correct`."""
    return np.fromiter((is_correct(i, a) for i, a in zip(items, answers, strict=True)), float, len(items))


_YN = ("Yes", "No")


def reduce_yesno_macro_f1(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Macro F1 over Yes/No from summed (tp, fp, fn, seen) per class; classes never seen are left out.

    Works on summed statistics along leading batch axes, so the clustered bootstrap stays vectorised;
    scikit-learn's ``f1_score`` takes label vectors and would need one call per bootstrap replicate.
    Tests check equality with ``f1_score(average="macro", zero_division=0)``.
    """
    f1s, seen = [], []
    for c in range(len(_YN)):
        tp, fp, fn, present = (sums[..., 4 * c + j] for j in range(4))
        denom = 2 * tp + fp + fn
        f1s.append(np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), 0.0))
        seen.append(present > 0)
    f1 = np.stack(f1s, -1)
    mask = np.stack(seen, -1)
    n = mask.sum(-1)
    return np.where(n > 0, (f1 * mask).sum(-1) / np.where(n > 0, n, 1), np.nan)


@register("metric", "yesno_macro_f1", higher_is_better=True, aggregation=reduce_yesno_macro_f1, percent=True,
          chance=lambda item: 0.5,
          description="macro F1 over Yes/No (as scikit-learn's, zero_division=0); invalid answers are misses")
def yesno_macro_f1(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample (tp, fp, fn, seen) for Yes then No; summed and reduced to macro F1.

    Equals ``sklearn.metrics.f1_score(truth, pred, average="macro", zero_division=0)`` over the
    classes present in the truth or the valid answers; an invalid answer is a miss of its true
    class and a prediction of none.
    """
    stats = np.zeros((len(items), 4 * len(_YN)))
    for row, (item, answer) in enumerate(zip(items, answers, strict=True)):
        truth = str(item.answer).strip().rstrip(".").capitalize()
        pred = answer if answer in _YN else None
        for c, label in enumerate(_YN):
            stats[row, 4 * c + 0] = truth == label and pred == label
            stats[row, 4 * c + 1] = truth != label and pred == label
            stats[row, 4 * c + 2] = truth == label and pred != label
            stats[row, 4 * c + 3] = truth == label or pred == label
    return stats
