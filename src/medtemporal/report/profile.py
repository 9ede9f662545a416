"""A model's profile across benchmarks: each family's headline score against chance, in one figure.

For every run of a report, the primary metric of each task family (the
first metric its scores list for that family's group) is drawn as a dot with
its clustered 95% interval, beside a dashed mark at the family's chance level,
one row per benchmark and family, one colour per model.
"""

from __future__ import annotations

import math
from typing import Sequence

from medtemporal.report.plots import figure_png, pyplot
from medtemporal.report.loaded import ReportRun


def profile_points(runs: Sequence[ReportRun]) -> list[tuple[str, str, str, float, float | None, float | None, float | None]]:
    """(model, "benchmark: family", metric, value, low, high, chance) for each run's task families."""
    points = []
    for run in runs:
        bench = str(run.scores.run.benchmark)
        for task in run.scores.layout:
            score = next((s for s in run.scores.scores if s.group == task.group), None)
            if score is None or math.isnan(score.value) or score.missing >= score.n:
                continue
            points.append((str(run.scores.run.model), f"{bench}: {task.task}", score.metric, score.value,
                           score.ci_low, score.ci_high, score.chance))
    return points


def profile_chart(runs: Sequence[ReportRun]) -> bytes | None:
    """PNG of the profile, or None when the runs cover fewer than two benchmarks."""
    if len({r.scores.run.benchmark for r in runs}) < 2:
        return None
    points = profile_points(runs)
    rows = list(dict.fromkeys(p[1] for p in points))
    models = list(dict.fromkeys(p[0] for p in points))
    fig, ax = pyplot().subplots(figsize=(7.0, 0.45 * len(rows) + 1.4))
    offsets = {m: (k - (len(models) - 1) / 2) * 0.5 / max(1, len(models)) for k, m in enumerate(models)}
    chance_drawn = False
    for model, row, metric, value, low, high, chance in points:
        y = rows.index(row) + offsets[model]
        err = [[value - low], [high - value]] if low is not None and high is not None else None
        ax.errorbar([value], [y], xerr=err, fmt="o", color=f"C{models.index(model) % 10}", capsize=3,
                    label=model if (model, row) == next((p[0], p[1]) for p in points if p[0] == model) else None)
        if chance is not None:
            ax.vlines(chance, rows.index(row) - 0.35, rows.index(row) + 0.35, colors="0.3", linestyles="dashed",
                      label=None if chance_drawn else "chance")
            chance_drawn = True
    ax.set_yticks(range(len(rows)), [f"{r} ({next(p[2] for p in points if p[1] == r)})" for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("headline score (fraction)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.set_title("Profile across benchmarks: each family's headline score against chance")
    return figure_png(fig)
