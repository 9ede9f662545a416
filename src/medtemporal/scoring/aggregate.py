"""Aggregation: per-item outcomes → `Score` records for every group, with clustered CIs.

Groups are named by a fixed scheme that reports and ``runs list`` rely on:

- ``overall``: every item of the benchmark's `ScoreGroups.overall_tasks` (all tasks by default);
- ``task:<task>``: one task family (``task:TEL``);
- ``subtype:<subtype>``: one subtype (``subtype:single_emergence``; subtype
  names are assumed unique across tasks, as in the papers);
- ``subtypes:<task>/<label>``: a column that merges subtypes, declared in the
  benchmark's `ScoreGroups.subtypes` (the paper's "Single (E/R)");
- ``overall:paper``: where the benchmark declares `ScoreGroups.overall_weights`
  (its paper's headline is a weighted mean of table columns), that weighted
  mean of the named groups' values, its interval from the same patient
  bootstrap (each replicate recomputes every column, then the mean).

Each group gets one `Score` per metric its tasks list in `BenchmarkSpec.metrics`.
Invalid answers and missing predictions are scored by the metric (as wrong)
and counted in `Score.invalid` and `Score.missing`. A metric that cannot be
computed on this machine (`medtemporal.scoring.metrics.UNAVAILABLE`: an encoder
or nltk data that cannot be had) gets Scores with a NaN value and its reason in
`Score.unavailable`, and one `MetricUnavailableWarning` per reason; the other
metrics are scored as usual.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, Sequence

import numpy as np

from medtemporal.errors import MetricUnavailableWarning
from medtemporal.progress import progress_bar
from medtemporal.schema import Column, Item, Score, TaskLayout
from medtemporal.scoring.ci import CONFIDENCE, RESAMPLES, cluster_bootstrap
from medtemporal.scoring.metrics import UNAVAILABLE, Answer, Metric, metric

Status = Literal["answered", "invalid", "missing"]
WEIGHTED_OVERALL = "overall:paper"
"""The group of the paper's weighted Overall (`ScoreGroups.overall_weights`)."""


@dataclass(frozen=True)
class Outcome:
    """One item's final answer and whether it was answered, invalid or missing."""

    item: Item
    answer: Answer
    status: Status
    output: str | None = None
    """The raw output the answer was extracted from (None when missing); metrics with ``reads_output`` read it."""
    verdict: Any = None
    """The LLM judge's verdict of the answer (`medtemporal.scoring.judge.Verdict`) when a judge scored the run;
    metrics registered with ``needs_judge`` read it."""


def layout(items: Sequence[Item], subtype_groups: Mapping[str, Mapping[str, Sequence[str]]]) -> list[TaskLayout]:
    """Tasks and their subtypes in table order.

    Tasks come in order of first appearance in ``items`` (the builder's order);
    subtypes follow their declared columns, then first appearance. A task
    without declared columns gets one column per subtype, labelled with the
    task's name when it has a single subtype.
    """
    seen: dict[str, list[str]] = {}
    for item in items:
        subtypes = seen.setdefault(item.task, [])
        if item.subtype not in subtypes:
            subtypes.append(item.subtype)
    result = []
    for task in seen:
        declared = subtype_groups.get(task, {})
        ordered = [s for subs in declared.values() for s in subs if s in seen[task]]
        ordered = list(dict.fromkeys(ordered + seen[task]))
        if declared:
            columns = [Column(label=label, group=f"subtypes:{task}/{label}", subtypes=list(subs))
                       for label, subs in declared.items()]
        else:
            columns = [Column(label=s if len(ordered) > 1 else task, group=f"subtype:{s}", subtypes=[s])
                       for s in ordered]
        result.append(TaskLayout(task=task, group=f"task:{task}", subtypes=ordered, columns=columns))
    return result


def groups(
    outcomes: Sequence[Outcome], tasks: Sequence[TaskLayout], overall_tasks: Sequence[str] | None = None
) -> dict[str, tuple[np.ndarray, set[str]]]:
    """Group name → (item indices, tasks covered), in report order; ``overall`` covers ``overall_tasks`` (all when None)."""
    task_of = np.array([o.item.task for o in outcomes], dtype=object)
    subtype_of = np.array([o.item.subtype for o in outcomes], dtype=object)
    in_overall = [t.task for t in tasks if overall_tasks is None or t.task in overall_tasks]
    result: dict[str, tuple[np.ndarray, set[str]]] = {
        "overall": (np.flatnonzero(np.isin(task_of, in_overall)), set(in_overall))}
    for t in tasks:
        in_task = task_of == t.task
        result[t.group] = (np.flatnonzero(in_task), {t.task})
        for s in t.subtypes:  # a subtype name shared by two tasks makes one group covering both
            indices, covered = result.get(f"subtype:{s}", (np.flatnonzero(subtype_of == s), set()))
            result[f"subtype:{s}"] = (indices, covered | {t.task})
        for c in t.columns:
            if c.group not in result:
                result[c.group] = (np.flatnonzero(in_task & np.isin(subtype_of, c.subtypes)), {t.task})
    return result


def score_outcomes(
    outcomes: Sequence[Outcome],
    metrics_for_task: Callable[[str], Sequence[str]],
    subtype_groups: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
    *,
    overall_tasks: Sequence[str] | None = None,
    overall_weights: Mapping[str, float] | None = None,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> list[Score]:
    """`Score` records for every group and metric, with intervals clustered by `Item.cluster`.

    Args:
        outcomes: One per benchmark item.
        metrics_for_task: Task → metric names (from the benchmark's spec).
        subtype_groups: Declared merged columns (`ScoreGroups.subtypes`).
        overall_tasks: The tasks the ``overall`` group covers (`ScoreGroups.overall_tasks`; None: all).
        overall_weights: Group → weight of the ``overall:paper`` score (`ScoreGroups.overall_weights`);
            it is computed for each metric that every weighted group has, when all of them have items.
        resamples: Bootstrap replicates per score.
        confidence: Interval confidence level.
        seed: Base seed; each metric and set of items draws from its own stream derived from it.

    Returns:
        Scores in group order (see the module doc), metrics in declared order.
    """
    tasks = layout([o.item for o in outcomes], subtype_groups or {})
    named = groups(outcomes, tasks, overall_tasks)
    items = [o.item for o in outcomes]
    status = np.array([o.status for o in outcomes], dtype=object)
    clusters = np.array([i.cluster for i in items], dtype=object)
    task_of = np.array([i.task for i in items], dtype=object)

    names = list(dict.fromkeys(m for t in tasks for m in metrics_for_task(t.task)))
    resolved: dict[str, Metric] = {name: metric(name) for name in names}
    values: dict[str, np.ndarray] = {}
    applies: dict[str, np.ndarray] = {}
    unavailable: dict[str, str] = {}
    for name, m in resolved.items():
        applies[name] = np.isin(task_of, [t.task for t in tasks if name in metrics_for_task(t.task)])
        idx = np.flatnonzero(applies[name])
        try:
            scored = m.per_sample([items[i] for i in idx], [outcomes[i].answer for i in idx],
                                  [outcomes[i].output for i in idx], [outcomes[i].verdict for i in idx])
        except UNAVAILABLE as exc:
            unavailable[name] = str(exc)
            continue
        full = np.zeros((len(items), *scored.shape[1:]))
        full[idx] = scored
        values[name] = full
    warn_unavailable(unavailable)

    jobs = [(g, name) for g, (_, covered) in named.items() for name in names
            if any(name in metrics_for_task(t) for t in covered)]
    scores = []
    for group, name in progress_bar(jobs, desc="scoring", unit="score", leave=False):
        m = resolved[name]
        idx = named[group][0]
        idx = idx[applies[name][idx]]
        counts = dict(n=len(idx), invalid=int((status[idx] == "invalid").sum()),
                      missing=int((status[idx] == "missing").sum()), chance=_chance(m, [items[i] for i in idx]),
                      higher_is_better=m.higher_is_better)
        if name in unavailable:
            scores.append(Score(metric=name, value=math.nan, group=group, unavailable=unavailable[name], **counts))
            continue
        est = cluster_bootstrap(
            values[name][idx], clusters[idx], m.reduce, confidence=confidence, resamples=resamples,
            rng=_stream(seed, name, idx),
            label=f"{name} over {group}",
        )
        scores.append(Score(metric=name, value=est.value, group=group, ci_low=est.low, ci_high=est.high, **counts))
    for name in [n for n in names if n not in unavailable] if overall_weights else ():
        parts = [(named[g][0][applies[name][named[g][0]]], w) for g, w in overall_weights.items() if g in named]
        if len(parts) < len(overall_weights) or not all(len(idx) for idx, _ in parts):
            continue
        m = resolved[name]
        idx, stats, reduce = _weighted(values[name], parts, m.reduce)
        est = cluster_bootstrap(stats, clusters[idx], reduce, confidence=confidence, resamples=resamples,
                                rng=_stream(seed, f"{name}:{WEIGHTED_OVERALL}", idx), label=f"{name} over {WEIGHTED_OVERALL}")
        chances = [_chance(m, [items[i] for i in part]) for part, _ in parts]
        chance = (None if any(c is None for c in chances)
                  else round(math.fsum(c * w for c, (_, w) in zip(chances, parts)) / math.fsum(w for _, w in parts), 12))
        scores.append(Score(
            metric=name, value=est.value, group=WEIGHTED_OVERALL, n=len(idx), ci_low=est.low, ci_high=est.high,
            invalid=int((status[idx] == "invalid").sum()), missing=int((status[idx] == "missing").sum()),
            chance=chance, higher_is_better=m.higher_is_better,
        ))
    return scores


_WARNED: set[str] = set()
"""Unavailability messages already shown in this process (each is shown once)."""


def warn_unavailable(reasons: Mapping[str, str]) -> None:
    """One `MetricUnavailableWarning` per distinct reason (``bertscore_f1: unavailable (…)``), once per process."""
    by_reason: dict[str, list[str]] = {}
    for name, reason in reasons.items():
        by_reason.setdefault(reason, []).append(name)
    for reason, names in by_reason.items():
        text = f"{', '.join(names)}: unavailable ({reason.rstrip('.')}); the other metrics are scored"
        if text not in _WARNED:
            _WARNED.add(text)
            warnings.warn(text, MetricUnavailableWarning, stacklevel=3)


def _weighted(values: np.ndarray, parts: Sequence[tuple[np.ndarray, float]], reduce: Callable[..., np.ndarray],
              ) -> tuple[np.ndarray, np.ndarray, Callable[[np.ndarray, np.ndarray], np.ndarray]]:
    """Items, per-item statistics and aggregation of a weighted mean of groups' values.

    Each item gets, per group, its statistics where it belongs to the group (zeros elsewhere) and a 1
    that counts it there, so that one resampled set of patients yields every group's value and the
    weighted mean of them: ``sum_g w_g * reduce(sums_g, count_g) / sum_g w_g``.
    """
    idx = np.unique(np.concatenate([part for part, _ in parts]))
    per_item = values.reshape(len(values), -1)[idx]
    k = per_item.shape[1]
    blocks = []
    for part, _ in parts:
        member = np.isin(idx, part).astype(float)[:, None]
        blocks += [per_item * member, member]
    weights = np.array([w for _, w in parts], dtype=float)

    def weighted(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
        by_group = sums.reshape(*sums.shape[:-1], len(parts), k + 1)
        each = reduce(by_group[..., :k], by_group[..., k])
        return (each * weights).sum(axis=-1) / weights.sum()

    return idx, np.concatenate(blocks, axis=1), weighted


def _stream(seed: int, metric_name: str, idx: np.ndarray) -> np.random.Generator:
    """The bootstrap stream of one metric over one set of items: groups holding the same items
    (a subtype and its single-subtype column) get the same interval."""
    digest = hashlib.sha256(metric_name.encode() + b"\0" + idx.astype(np.int64).tobytes()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little")])


def _chance(m: Metric, items: Sequence[Item]) -> float | None:
    """Mean chance level over ``items``, or None if the metric or any item has none."""
    if m.chance is None or not items:
        return None
    levels = [m.chance(i) for i in items]
    return None if any(v is None for v in levels) else round(math.fsum(levels) / len(levels), 12)
