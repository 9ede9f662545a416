"""Scores over repeats: each repeat's value, their mean and spread, and per-item consistency.

A run with ``--repeats N`` answers every item N times. Its headline scores
(`medtemporal.scoring.runs`) pool all answers, clustered by patient, which for
a mean metric is the mean over repeats; this module adds what pooling hides:
the value of every group and metric in each repeat (point values, no
bootstrap), their mean and standard deviation (``ddof=1``), and how often an
item got the same answer, and the same correctness, in every repeat.

>>> from medtemporal.schema import Item
>>> from medtemporal.scoring.aggregate import Outcome
>>> item = Item.create(benchmark="x", task="t", subtype="s", images=[], question="?",
...     options={"A": "a", "B": "b"}, answer_type="choice", answer="A")
>>> same = consistency([[Outcome(item, "A", "answered")], [Outcome(item, "A", "answered")]])
>>> same["overall"]["answer_agreement"], same["overall"]["flipped_items"]
(1.0, 0)
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from medtemporal.scoring.aggregate import WEIGHTED_OVERALL, Outcome, groups, layout
from medtemporal.scoring.metrics import UNAVAILABLE, is_correct, metric


def point_values(
    outcomes: Sequence[Outcome],
    metrics_for_task: Callable[[str], Sequence[str]],
    subtype_groups: Mapping[str, Mapping[str, Sequence[str]]],
    overall_tasks: Sequence[str] | None = None,
    overall_weights: Mapping[str, float] | None = None,
) -> dict[tuple[str, str], float]:
    """(group, metric) → value of one set of outcomes, groups as in `medtemporal.scoring.aggregate`
    (``overall:paper`` where ``overall_weights`` names groups that all have a value)."""
    tasks = layout([o.item for o in outcomes], subtype_groups)
    named = groups(outcomes, tasks, overall_tasks)
    task_of = np.array([o.item.task for o in outcomes], dtype=object)
    result: dict[tuple[str, str], float] = {}
    for name in dict.fromkeys(m for t in tasks for m in metrics_for_task(t.task)):
        m = metric(name)
        applies = np.isin(task_of, [t.task for t in tasks if name in metrics_for_task(t.task)])
        scored = np.flatnonzero(applies)
        if not len(scored):
            continue
        row = np.full(len(outcomes), -1)
        row[scored] = np.arange(len(scored))
        try:
            stats = m.per_sample([outcomes[i].item for i in scored], [outcomes[i].answer for i in scored],
                                 [outcomes[i].output for i in scored]).reshape(len(scored), -1)  # once per metric
        except UNAVAILABLE:  # reported as unavailable in the scores themselves
            continue
        for group, (idx, covered) in named.items():
            if not any(name in metrics_for_task(t) for t in covered):
                continue
            idx = idx[applies[idx]]
            if not len(idx):
                continue
            result[(group, name)] = float(m.reduce(stats[row[idx]].sum(axis=0), np.float64(len(idx))))
        parts = [(result.get((g, name)), w) for g, w in (overall_weights or {}).items()]
        if parts and all(v is not None for v, _ in parts):
            result[(WEIGHTED_OVERALL, name)] = math.fsum(v * w for v, w in parts) / math.fsum(w for _, w in parts)
    return result


def _key(answer: Any) -> str:
    return json.dumps(answer, sort_keys=True)


def consistency(by_repeat: Sequence[Sequence[Outcome]]) -> dict[str, dict[str, Any]]:
    """Per group (``overall``, ``task:<task>``): share of items with one answer in every repeat
    (``answer_agreement``; invalid and missing count as the answer "none"), share right in all or wrong in
    all repeats (``correct_agreement``, closed answers only), and how many items changed answer."""
    first = by_repeat[0]
    result: dict[str, dict[str, Any]] = {}
    for group in ["overall", *dict.fromkeys(f"task:{o.item.task}" for o in first)]:
        idx = [i for i, o in enumerate(first) if group == "overall" or group == f"task:{o.item.task}"]
        same_answer = [len({_key(r[i].answer) for r in by_repeat}) == 1 for i in idx]
        closed = [i for i in idx if first[i].item.answer_type != "open"]
        same_correct = [len({is_correct(r[i].item, r[i].answer) for r in by_repeat}) == 1 for i in closed]
        result[group] = {
            "items": len(idx),
            "answer_agreement": float(np.mean(same_answer)) if idx else math.nan,
            "flipped_items": int(len(idx) - sum(same_answer)),
            "correct_agreement": float(np.mean(same_correct)) if closed else None,
        }
    return result


def repeat_summary(
    by_repeat: Sequence[Sequence[Outcome]],
    metrics_for_task: Callable[[str], Sequence[str]],
    subtype_groups: Mapping[str, Mapping[str, Sequence[str]]],
    overall_tasks: Sequence[str] | None = None,
    overall_weights: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The ``repeats`` block of ``scores.json``: ``n``, per (group, metric) the value of each repeat with
    mean, sd and range, and `consistency`."""
    values = [point_values(o, metrics_for_task, subtype_groups, overall_tasks, overall_weights) for o in by_repeat]
    rows = []
    for group, name in dict.fromkeys(k for v in values for k in v):
        series = [v.get((group, name), math.nan) for v in values]
        arr = np.asarray(series, dtype=float)
        rows.append({"group": group, "metric": name, "values": series, "mean": float(np.nanmean(arr)),
                     "sd": float(np.nanstd(arr, ddof=1)) if np.isfinite(arr).sum() > 1 else None,
                     "min": float(np.nanmin(arr)), "max": float(np.nanmax(arr))})
    return {"n": len(by_repeat), "scores": rows, "consistency": consistency(by_repeat)}
