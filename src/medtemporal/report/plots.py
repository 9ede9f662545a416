"""Bar charts from `Score` records: one per task family, a bar per subtype and run.

Error bars are the clustered confidence intervals; a dashed line over each
subtype marks its chance level. Figures are drawn with matplotlib's Agg
backend (no display needed) and returned as PNG bytes without metadata, so
the same scores give the same file.
"""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING, Any, Sequence

from medtemporal.report.tables import ReportRun, chance_of, is_percent

if TYPE_CHECKING:
    import matplotlib.pyplot as plt


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend, imported on first use (a run that draws nothing never pays it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    return matplotlib.pyplot


def family_subtypes(runs: Sequence[ReportRun], metric: str) -> dict[str, list[str]]:
    """Family → its subtypes that have a ``metric`` score (not an unavailable one), in table order."""
    families: dict[str, list[str]] = {}
    for run in runs:
        for task in run.scores.layout:
            subtypes = families.setdefault(task.task, [])
            for s in task.subtypes:
                score = run.scores.score(f"subtype:{s}", metric)
                if s not in subtypes and score is not None and not score.unavailable:
                    subtypes.append(s)
    return {f: s for f, s in families.items() if s}


def family_chart(runs: Sequence[ReportRun], family: str, subtypes: Sequence[str], metric: str) -> bytes:
    """PNG of one family: grouped bars (subtype × run) with interval error bars and chance lines."""
    scale = 100.0 if is_percent(runs, metric) else 1.0
    width = 0.8 / len(runs)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(subtypes) * max(1, len(runs)) ** 0.5 + 1.5), 3.6))
    for k, run in enumerate(runs):
        xs, heights, low, high = [], [], [], []
        for x, subtype in enumerate(subtypes):
            score = run.scores.score(f"subtype:{subtype}", metric)
            if score is None or math.isnan(score.value):
                continue
            xs.append(x - 0.4 + width * (k + 0.5))
            heights.append(score.value * scale)
            has_ci = score.ci_low is not None and score.ci_high is not None
            low.append((score.value - score.ci_low) * scale if has_ci else 0.0)
            high.append((score.ci_high - score.value) * scale if has_ci else 0.0)
        if not xs:  # no data for this family: no empty legend entry (its colour stays its own elsewhere)
            continue
        ax.bar(xs, heights, width * 0.92, yerr=[low, high], capsize=3, label=run.label, color=f"C{k % 10}")
    labelled = False
    for x, subtype in enumerate(subtypes):
        chance = chance_of(runs, f"subtype:{subtype}", metric)
        if chance is not None:
            ax.hlines(chance * scale, x - 0.45, x + 0.45, colors="0.25", linestyles="dashed",
                      label=None if labelled else "chance", zorder=3)
            labelled = True
    ax.set_xticks(range(len(subtypes)), [s.replace("_", " ") for s in subtypes], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(f"{metric} (%)" if scale == 100.0 else metric)
    ax.set_ylim(0, 104 if scale == 100.0 else None)
    ax.set_title(family)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return figure_png(fig, dpi=110)


def figure_png(fig: plt.Figure, dpi: int = 110) -> bytes:
    """The figure as PNG bytes without metadata (the same figure gives the same file); closes it."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    pyplot().close(fig)
    return buffer.getvalue()


def has_chance(runs: Sequence[ReportRun], subtypes: Sequence[str], metric: str) -> bool:
    """Whether the chart of these subtypes draws any chance line."""
    return any(chance_of(runs, f"subtype:{s}", metric) is not None for s in subtypes)


def family_charts(runs: Sequence[ReportRun], metric: str) -> dict[str, bytes]:
    """Family → PNG bytes of its chart for ``metric``."""
    return {family: family_chart(runs, family, subtypes, metric)
            for family, subtypes in family_subtypes(runs, metric).items()}
