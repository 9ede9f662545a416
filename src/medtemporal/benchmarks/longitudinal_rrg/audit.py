"""What ``medtemporal audit`` says for open report generation: the text-only floor.

Blind accuracy against chance (the audit of closed questions) has no meaning for a written report: there is
no chance level, and every report shares words with every other. What a reader of the item's *text* alone
can write is the measure instead: the **copy-prior** baseline (the prior report restated, which the
``rrg-prior-report`` protocol puts in the prompt) and the **constant normal report**, scored with the
family's model-free metrics (`FLOOR_METRICS`) per task and subtype, with 95% intervals clustered by patient.
A model's score says something about the images only above these rows: the reports print copy-prior as their
reference row. Nothing is flagged: the floor is the task's own, not a defect of the build.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from typing import Any, Sequence

from medtemporal.benchmarks.longitudinal_rrg.baselines import ANSWERS
from medtemporal.errors import UndefinedMetricWarning
from medtemporal.schema import Item
from medtemporal.scoring.ci import cluster_bootstrap
from medtemporal.scoring.metrics import metric

FLOOR_METRICS = ("temporal_entity_f1", "rouge_l_f1")
"""Model-free metrics the floor is scored with, cheap enough for every build: Libra's Temporal Entity F1 and
ROUGE-L F1 by rouge-score (no weights, no Java; the pycocoevalcap metrics start the METEOR jar)."""
FLOOR_BASELINES = {kind: ANSWERS[kind] for kind in ("copy-prior", "normal-report")}
"""The baselines the floor scores (the nearest report needs the build's training reports)."""
RESAMPLES = 1000
ALL = "(all)"


def text_floor(items: Sequence[Item]) -> dict[str, Any]:
    """The floor's rows (module doc): per task and subtype (and the task over all items), each baseline's value
    of each metric with its interval."""
    groups: dict[tuple[str, str], list[Item]] = defaultdict(list)
    for item in items:
        groups[(item.task, item.subtype)].append(item)
        groups[(item.task, ALL)].append(item)
    rows = []
    for (task, subtype), group in sorted(groups.items()):
        for name, answer in FLOOR_BASELINES.items():
            answers = [answer(item) or None for item in group]
            for metric_name in FLOOR_METRICS:
                m = metric(metric_name)
                values = m.per_sample(group, answers, answers)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UndefinedMetricWarning)
                    est = cluster_bootstrap(values, [i.cluster for i in group], m.reduce, resamples=RESAMPLES, rng=0)
                rows.append({"task": task, "subtype": subtype, "n": len(group), "patients": est.clusters,
                             "baseline": name, "metric": metric_name, "value": round(est.value, 4),
                             "ci_low": None if est.low is None else round(est.low, 4),
                             "ci_high": None if est.high is None else round(est.high, 4)})
    return {"description": "Open report generation has no chance level; the floor is what the item's text alone "
                           "writes: the prior report copied (nothing on no_prior items) and a constant normal "
                           "report. Compare models with these rows.", "rows": rows}
