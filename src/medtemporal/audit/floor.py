"""The text-only floor of open answers: what the family's own text-only baselines score.

Blind accuracy against chance (the audit of closed questions) has no meaning for an open answer such as a
written report: there is no chance level, and every report shares words with every other. What a reader of
the item's *text* alone can write is the measure instead. A family names registered baselines that answer
from the item alone (`medtemporal.contract.AuditRules.baselines`, e.g. longitudinal-rrg's copy-prior and
constant normal report) and the model-free metrics to score them with (`AuditRules.floor_metrics`); the audit
asks each baseline through the one owner of model calls and scores it per task and subtype (and each task over
all its items), with 95% intervals clustered by patient. A model's score says something about the images only
above these rows. Nothing is flagged: the floor is the task's own, not a defect of the build.
"""

from __future__ import annotations

import asyncio
import warnings
from collections import defaultdict
from typing import Any, Sequence

from medtemporal.backends.base import GenerateConfig, Request
from medtemporal.backends.session import DataUse, ModelSession, Reply
from medtemporal.contract import AuditRules
from medtemporal.errors import BackendError, UndefinedMetricWarning
from medtemporal.schema import Item
from medtemporal.scoring.ci import cluster_bootstrap
from medtemporal.scoring.metrics import metric

RESAMPLES = 1000
ALL = "(all)"
"""The subtype label of a task's row over all its items."""


def baseline_answers(uri: str, items: Sequence[Item], use: DataUse) -> list[str | None]:
    """Baseline ``uri``'s answer to each item (fitted on ``items``, as a run fits it); None where it has none."""
    session = ModelSession.open(uri, use=use, no_cache=True)
    session.backend.fit_items(items)
    answers: list[str | None] = [None] * len(items)

    def keep(k: int, reply: Reply | None, error: BackendError | None) -> None:
        answers[k] = (reply.response.text or None) if reply is not None else None

    async def ask_all() -> None:
        try:
            await session.ask_each([Request((), GenerateConfig(), item=i.id) for i in items], keep,
                                   desc=f"audit: {uri}", progress=False)
        finally:
            await session.aclose()

    asyncio.run(ask_all())
    return answers


def text_floor(items: Sequence[Item], rules: AuditRules, use: DataUse) -> dict[str, Any] | None:
    """The floor's rows (module doc) for the open items of one family: per task and subtype (and the task over all
    items), each baseline's value of each metric with its interval; None when the family names no baseline."""
    items = [it for it in items if it.answer_type == "open"]
    if not rules.baselines or not items:
        return None
    answers = {uri: dict(zip((i.id for i in items), baseline_answers(uri, items, use))) for uri in rules.baselines}
    groups: dict[tuple[str, str], list[Item]] = defaultdict(list)
    for item in items:
        groups[(item.task, item.subtype)].append(item)
        groups[(item.task, ALL)].append(item)
    rows = []
    for (task, subtype), group in sorted(groups.items()):
        for uri in rules.baselines:
            given = [answers[uri][item.id] for item in group]
            for metric_name in rules.floor_metrics:
                m = metric(metric_name)
                values = m.per_sample(group, given, given)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UndefinedMetricWarning)
                    est = cluster_bootstrap(values, [i.cluster for i in group], m.reduce, resamples=RESAMPLES, rng=0)
                rows.append({"task": task, "subtype": subtype, "n": len(group), "patients": est.clusters,
                             "baseline": uri.partition(":")[2], "metric": metric_name, "value": round(est.value, 4),
                             "ci_low": None if est.low is None else round(est.low, 4),
                             "ci_high": None if est.high is None else round(est.high, 4)})
    return {"description": rules.floor_description, "rows": rows}
