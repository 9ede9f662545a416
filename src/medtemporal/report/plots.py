"""Bar charts from `Score` records: one per task family, a bar per subtype and run.

Error bars are the clustered confidence intervals; a dashed line over each
subtype marks its chance level; each run has its own `colour` in every chart. A family with many bars (subtypes × runs above
`FACET_ABOVE`) is drawn as small multiples, one panel per subtype. Charts are
sized to fit the report's page width with text of at least `FONT_PT`
points at `DPI`, the legend above the plot (never over it; the HTML report draws one legend for all its
charts instead). Figures are drawn
with matplotlib's Agg backend (no display needed) and returned as PNG bytes
without time stamps, so the same scores give the same file; each PNG records
the size of its smallest text in pixels (`min_font_px`), which the report and
its browser tests check against the displayed size.
"""

from __future__ import annotations

import io
import math
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from medtemporal.report.loaded import ReportRun
from medtemporal.report.tables import chance_of, is_percent, subtype_families
from medtemporal.schema import Score

if TYPE_CHECKING:
    import matplotlib.pyplot as plt

DPI = 110
"""Resolution of the report's charts; a chart at most `MAX_WIDTH_IN` wide is shown at its own size."""
MAX_WIDTH_IN = 10.0
"""Widest chart (inches at `DPI`: 1,100 px), within the report's page width."""
FONT_PT = 9
"""Size of the smallest text in a chart (tick labels, legend): about 14 px at `DPI`."""
FACET_ABOVE = 24
"""Above this many bars (subtypes × runs) a family is drawn as one panel per subtype."""
MIN_FONT_KEY = "min-font-px"
"""PNG text key holding the size of the chart's smallest text, in pixels at its own size."""
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
"""Run k's colour in every chart (matplotlib's tab10); the HTML report's shared legend uses the same."""


def colour(k: int) -> str:
    """The colour of the k-th run."""
    return COLOURS[k % len(COLOURS)]


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend, imported on first use (a run that draws nothing never pays it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    return matplotlib.pyplot


def legend_columns(labels: Sequence[str], width_in: float) -> int:
    """How many legend entries fit side by side in ``width_in`` inches at `FONT_PT`."""
    widest = max((len(label) for label in labels), default=1)
    return max(1, min(len(labels), int(width_in // (0.075 * widest + 0.5))))


def family_subtypes(runs: Sequence[ReportRun], metric: str) -> dict[str, list[str]]:
    """Family → its subtypes that have a ``metric`` score, in table order; subtypes several families share
    (pooled over them) are listed once, under the families' joined name (``perception + reasoning``)."""
    owners = subtype_families(runs)
    families: dict[str, list[str]] = {}
    for run in runs:
        for task in run.scores.layout:
            for s in task.subtypes:
                family = owners.get(s, task.task)
                subtypes = families.setdefault(family, [])
                score = run.scores.score(f"subtype:{s}", metric)
                if s not in subtypes and score is not None and not score.unavailable:
                    subtypes.append(s)
    return {f: s for f, s in families.items() if s}


def _bar(score: Score | None, scale: float) -> tuple[float, float, float] | None:
    """(height, lower error, upper error) of one bar, or None without a value."""
    if score is None or math.isnan(score.value):
        return None
    has_ci = score.ci_low is not None and score.ci_high is not None
    low = (score.value - score.ci_low) * scale if has_ci else 0.0  # type: ignore[operator]
    high = (score.ci_high - score.value) * scale if has_ci else 0.0  # type: ignore[operator]
    return score.value * scale, low, high


def _bars(run: ReportRun, subtype: str, metric: str, scale: float) -> tuple[float, float, float] | None:
    return _bar(run.scores.score(f"subtype:{subtype}", metric), scale)


def worth_drawing(runs: Sequence[ReportRun], subtypes: Sequence[str], metric: str) -> bool:
    """Whether a chart of these subtypes shows anything: some bar above zero."""
    return any((bar := _bars(run, s, metric, 1.0)) is not None and bar[0] + bar[2] > 0
               for run in runs for s in subtypes)


@dataclass(frozen=True)
class Level:
    """A reference level marked across each group's bars: chance, a text-only reader."""

    label: str
    values: Sequence[float | None]
    """One per group, a fraction scaled like the bars; None: no mark over that group."""
    dashed: bool = True
    """A dashed grey mark (chance); else a solid black one (a reader to beat)."""


@dataclass(frozen=True)
class Panel:
    """One plot of grouped bars: in each group a bar per run with its interval, and the groups' levels."""

    groups: Sequence[str]
    scores: Sequence[Sequence[Score | None]]
    """Per run (in the report's order), per group: the score its bar shows (None: no bar)."""
    ylabel: str
    percent: bool = True
    title: str | None = None
    levels: Sequence[Level] = ()


def grouped_bars(runs: Sequence[ReportRun], panels: Sequence[Panel], *, title: str | None = None,
                 legend: bool = True) -> bytes:
    """PNG of grouped bars with interval error bars, one plot per panel side by side, each run in its own
    `colour`; the levels (chance, a text-only reader) marked over their groups; one legend above the plots
    (runs drawn, then levels), under ``title``. The common report's family charts and the families' own figures
    are drawn here."""
    single = len(panels) == 1
    groups = len(panels[0].groups) if single else 0
    fig_width = min(MAX_WIDTH_IN, max(5.0, 1.2 + groups * (0.3 * len(runs) + 0.5))) if single else MAX_WIDTH_IN
    fig, axes = pyplot().subplots(1, len(panels), figsize=(fig_width, 3.6 if single else 4.2), squeeze=False,
                                  layout="constrained")
    width = 0.8 / max(1, len(runs))
    drawn: set[int] = set()
    levels: dict[str, bool] = {}
    for ax, panel in zip(axes[0], panels):
        scale = 100.0 if panel.percent else 1.0
        for k, per_group in enumerate(panel.scores):
            bars = [(x, b) for x, score in enumerate(per_group) if (b := _bar(score, scale)) is not None]
            if not bars:  # nothing of this run here: no legend entry (its colour stays its own elsewhere)
                continue
            drawn.add(k)
            ax.bar([x - 0.4 + width * (k + 0.5) for x, _ in bars], [b[0] for _, b in bars], width * 0.92,
                   yerr=[[b[1] for _, b in bars], [b[2] for _, b in bars]], capsize=3, color=colour(k))
        for level in panel.levels:
            for x, value in enumerate(level.values):
                if value is not None and not math.isnan(value):
                    levels.setdefault(level.label, level.dashed)
                    ax.hlines(value * scale, x - 0.45, x + 0.45, zorder=3,
                              **({"colors": "0.25", "linestyles": "dashed"} if level.dashed
                                 else {"colors": "black", "linewidth": 2}))
        per_label = max(8, int((fig_width / len(panels) - 1.2) * 14 / max(1, len(panel.groups))))
        labels = [textwrap.fill(g.replace("_", " "), per_label) for g in panel.groups]
        long = any(len(line) > per_label for label in labels for line in label.splitlines())
        ax.set_xticks(range(len(panel.groups)), labels, rotation=20 if long else 0, ha="right" if long else "center",
                      fontsize=FONT_PT)
        _axes(ax, panel.ylabel, scale)
        if panel.title:
            ax.set_title(panel.title, fontsize=11 if single else FONT_PT + 1)
    if legend:
        _legend(fig, runs, sorted(drawn), fig_width, title=title, levels=levels)
    elif title and not single:
        fig.suptitle(title, fontsize=11)
    return figure_png(fig)


def family_chart(runs: Sequence[ReportRun], family: str, subtypes: Sequence[str], metric: str, *,
                 legend: bool = True) -> bytes:
    """PNG of one family: grouped bars (subtype × run) with interval error bars and chance lines; one panel
    per subtype when there are more than `FACET_ABOVE` bars. Without ``legend`` the runs are told apart by
    `colour` alone (the HTML report shows one legend for all its charts)."""
    if len(subtypes) > 1 and len(subtypes) * len(runs) > FACET_ABOVE:
        return _faceted_chart(runs, family, subtypes, metric, legend=legend)
    percent = is_percent(runs, metric)
    chance = Level("chance", [chance_of(runs, f"subtype:{s}", metric) for s in subtypes])
    panel = Panel(subtypes, [[run.scores.score(f"subtype:{s}", metric) for s in subtypes] for run in runs],
                  f"{metric} (%)" if percent else metric, percent, family, [chance])
    return grouped_bars(runs, [panel], legend=legend)


def _faceted_chart(runs: Sequence[ReportRun], family: str, subtypes: Sequence[str], metric: str, *,
                   legend: bool) -> bytes:
    """Small multiples: one panel per subtype with a bar per run, under one title (and legend)."""
    scale = 100.0 if is_percent(runs, metric) else 1.0
    cols = 4 if len(subtypes) > 6 else 3
    rows = math.ceil(len(subtypes) / cols)
    plt = pyplot()
    fig, axes = plt.subplots(rows, cols, figsize=(MAX_WIDTH_IN, 2.05 * rows + 0.6), sharey=True, squeeze=False,
                             layout="constrained")
    drawn: set[int] = set()
    chanced = False
    for n, subtype in enumerate(subtypes):
        ax = axes[n // cols][n % cols]
        for k, run in enumerate(runs):
            bar = _bars(run, subtype, metric, scale)
            if bar is not None:
                drawn.add(k)
                ax.bar([k], [bar[0]], 0.8, yerr=[[bar[1]], [bar[2]]], capsize=2, color=colour(k), label=run.label)
        chance = chance_of(runs, f"subtype:{subtype}", metric)
        if chance is not None:
            chanced = True
            ax.axhline(chance * scale, color="0.25", linestyle="dashed", linewidth=1, zorder=3)
        ax.set_xticks([])
        ax.set_xlim(-0.6, len(runs) - 0.4)
        title = textwrap.shorten(subtype.replace("_", " "), 30, placeholder="…")
        ax.set_title(title, fontsize=FONT_PT)
        _axes(ax, f"{metric} (%)" if scale == 100.0 else metric, scale, label=n % cols == 0)
    for n in range(len(subtypes), rows * cols):
        axes[n // cols][n % cols].set_visible(False)
    title = f"{family}: one panel per subtype"
    if legend:
        _legend(fig, runs, sorted(drawn), MAX_WIDTH_IN, title=title, levels={"chance": True} if chanced else {})
    else:
        fig.suptitle(title, fontsize=11)
    return figure_png(fig)


def _axes(ax: Any, ylabel: str, scale: float, *, label: bool = True) -> None:
    if label:
        ax.set_ylabel(ylabel, fontsize=FONT_PT)
    if scale == 100.0:
        ax.set_ylim(0, 104)
    ax.tick_params(labelsize=FONT_PT)
    ax.spines[["top", "right"]].set_visible(False)


def _legend(fig: Any, runs: Sequence[ReportRun], drawn: Sequence[int], width_in: float,
            title: str | None = None, levels: Mapping[str, bool] | None = None) -> None:
    """The runs drawn, then the levels drawn (label → dashed), in one legend above the plot, under ``title``."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle

    labels = [runs[k].label for k in drawn]
    handles: list[Any] = [Rectangle((0, 0), 1, 1, color=colour(k)) for k in drawn]
    for label, dashed in (levels or {}).items():
        handles.append(Line2D([], [], color="0.25", linestyle="dashed") if dashed
                       else Line2D([], [], color="black", linewidth=2))
        labels.append(label)
    fig.legend(handles, labels, loc="outside upper center", ncol=legend_columns(labels, width_in), frameon=False,
               fontsize=FONT_PT, title=title, title_fontproperties={"size": 11})


def min_font_px(fig: plt.Figure, dpi: float) -> float:
    """The size of the figure's smallest visible text, in pixels at ``dpi``."""
    from matplotlib.text import Text

    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return round(min(sizes, default=0.0) * dpi / 72, 1)


def figure_png(fig: plt.Figure, dpi: int = DPI) -> bytes:
    """The figure as PNG bytes (the same figure gives the same file), with its smallest text size; closes it."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight",
                metadata={"Software": None, MIN_FONT_KEY: str(min_font_px(fig, dpi))})
    pyplot().close(fig)
    return buffer.getvalue()


def has_chance(runs: Sequence[ReportRun], subtypes: Sequence[str], metric: str) -> bool:
    """Whether the chart of these subtypes draws any chance line."""
    return any(chance_of(runs, f"subtype:{s}", metric) is not None for s in subtypes)


def family_charts(runs: Sequence[ReportRun], metric: str, *, legend: bool = True) -> dict[str, bytes]:
    """Family → PNG bytes of its chart for ``metric``: families of two or more subtypes with a bar above zero
    (a single subtype's bars repeat the family table; zeros show nothing)."""
    return {family: family_chart(runs, family, subtypes, metric, legend=legend)
            for family, subtypes in family_subtypes(runs, metric).items()
            if len(subtypes) > 1 and worth_drawing(runs, subtypes, metric)}
