"""Which models differ significantly on a family's headline: the report's paired test (`medtemporal.scoring.compare`)
on the items both runs answered, resampling patients, for every pair of a family's runs.

A pair differs significantly when the 95% interval of the difference excludes 0 (and, for accuracy, McNemar's exact
p-value is below 0.05 too). The paired test covers Overall (micro) and each task: a headline over the paper's
weighted Overall is compared on Overall (micro), an Overall of one task on that task (`paired_group`).
"""

from __future__ import annotations

import warnings
from itertools import combinations
from typing import Any, Sequence

from medtemporal.contract import spec
from medtemporal.errors import InvalidInputError, UnavailableError
from medtemporal.leaderboard.cells import Cell
from medtemporal.report.loaded import ReportRun
from medtemporal.scoring.compare import ComparisonWarning, compare_runs

ALPHA = 0.05


def paired_group(family: str, group: str) -> tuple[str, str]:
    """The paired test's group for a headline over ``group``, with a note where it is not the same: the paired test
    covers Overall (micro, every task) and each task, so an Overall over one task is compared as that task."""
    tasks = spec(family).groups.overall_tasks
    if group.startswith("overall") and tasks and len(tasks) == 1:
        return f"task:{tasks[0]}", ""
    if group == "overall:paper":
        return "overall", "the paper's weighted Overall compared as Overall (micro)"
    if group == "overall" and tasks:
        return "overall", f"compared over every task, the headline over {', '.join(tasks)}"
    return group, ""


def pairwise(runs: Sequence[ReportRun], cells: Sequence[Cell]) -> list[dict[str, Any]]:
    """Every pair of runs of one family on its headline metric, A − B in × 100 units, with interval, McNemar p and
    whether they differ; a pair that cannot be compared says why."""
    out = []
    for (ra, ca), (rb, cb) in combinations(list(zip(runs, cells, strict=True)), 2):
        if ca.metric is None or ca.metric != cb.metric:
            continue
        group, note = paired_group(ca.family, str(ca.group))
        row: dict[str, Any] = {"family": ca.family, "a": ca.row, "b": cb.row, "metric": ca.metric, "group": group}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ComparisonWarning)
                result = compare_runs(ra.outcomes, rb.outcomes, metrics=[ca.metric])
        except (InvalidInputError, UnavailableError) as exc:
            out.append({**row, "error": str(exc)})
            continue
        found = next((r for r in result.rows if r.group == group and r.metric == ca.metric), None)
        if found is None:
            why = next((w for w in result.warnings if w.startswith(f"{ca.metric} is left out")), "")
            out.append({**row, "error": why or f"no paired value of {ca.metric} over {group}"})
            continue
        excludes = found.ci_low is not None and (found.ci_low > 0 or found.ci_high < 0)
        p = found.p_mcnemar
        out.append({**row, "n": found.n, "common": result.common, "diff": 100 * found.diff,
                    "ci_low": None if found.ci_low is None else 100 * found.ci_low,
                    "ci_high": None if found.ci_high is None else 100 * found.ci_high, "p_mcnemar": p,
                    "significant": bool(excludes and (p is None or p < ALPHA)), "note": note})
    return out
