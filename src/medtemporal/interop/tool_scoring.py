"""Scoring inside another tool (lmms-eval's ``process_results`` and ``aggregation``, inspect_ai's scorer and
metrics) as ``medtemporal score`` scores: the benchmark's extraction rule, every metric over all of a task's items
at once, corpus metrics among every item that has them.

A metric that cannot be computed for one item (a library missing, a model that fails) keeps the item's output and
answer and records the error; the task's value for that metric is then NaN and the outputs are left to
``medtemporal import-predictions`` and ``score``. `check_requirements` runs each metric once on one item of each
task when the exported task loads, so a missing package or nltk data stops the tool before its first request.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from medtemporal.errors import MedTemporalError
from medtemporal.schema import Item
from medtemporal.scoring import extract, metric


def metric_names(item: Item) -> list[str]:
    """The metrics the exports compute for the item's task (`medtemporal.interop.lmms_eval.scored_metrics`)."""
    from medtemporal.interop.lmms_eval import scored_metrics

    return scored_metrics(item.benchmark, item.task)


def per_item(item: Item, output: str) -> tuple[Any, dict[str, tuple[float, str | None]]]:
    """The extracted answer and, per metric, the item's own value and the error that stopped it (None when none)."""
    answer = extract(item, output).answer
    values: dict[str, tuple[float, str | None]] = {}
    for name in metric_names(item):
        m = metric(name)
        try:
            stats = m.per_sample([item], [answer], [output]).reshape(1, -1)
            values[name] = (float(m.reduce(stats, np.ones(1))[0]), None)
        except Exception as exc:  # noqa: BLE001  (kept per item: the output must survive a metric that fails)
            values[name] = (float("nan"), str(exc) if isinstance(exc, MedTemporalError) else f"{type(exc).__name__}: {exc}")
    return answer, values


def aggregate(name: str, items: Sequence[Item], answers: Sequence[Any], outputs: Sequence[str | None],
              context: Iterable[Item] = ()) -> float:
    """Metric ``name`` over ``items`` as ``medtemporal score`` computes it: every item's statistics computed together,
    summed and reduced; a corpus metric (`Metric.corpus`) among the ``context`` items that have it too."""
    if not items:
        return float("nan")
    m = metric(name)
    items, answers, outputs = list(items), list(answers), list(outputs)
    rows = np.arange(len(items))
    if m.corpus:
        mine = {item.id for item in items}
        others = [item for item in context if item.id not in mine and name in metric_names(item)]
        rows = np.arange(len(others), len(others) + len(items))
        items, answers, outputs = [*others, *items], [None] * len(others) + answers, [None] * len(others) + outputs
    stats = np.asarray(m.per_sample(items, answers, outputs), dtype=float).reshape(len(items), -1)[rows]
    return float(m.reduce(stats.sum(axis=0)[None], np.asarray([len(rows)], dtype=float))[0])


_CHECKED: set[str] = set()
"""Probe items already checked in this process (lmms-eval executes ``utils.py`` once per ``!function`` tag)."""


def check_requirements(probes: Iterable[Item], where: str) -> None:
    """Compute every metric of each probe item's task on its own answer; raise `SystemExit` with one sentence naming
    what is missing and how to install it when one cannot be computed (an exception another tool's task loader
    does not swallow, so it stops before any model call)."""
    from medtemporal.interop.parquet import answer_text

    for item in probes:
        if item.id in _CHECKED:
            continue
        _, values = per_item(item, answer_text(item))
        for name, (_, error) in values.items():
            if error is not None:
                raise SystemExit(
                    f"{where} cannot compute {name} for task {item.task} in this environment: {error.rstrip('.')}; "
                    "requirements.txt beside it names what scoring needs (`pip install -r requirements.txt`, then "
                    "`medtemporal nltk-data` for the nltk data)."
                )
        _CHECKED.add(item.id)
