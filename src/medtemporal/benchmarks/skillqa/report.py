"""ClinicalSkillQA reports: the leaderboard (002 Table 2) and the breakdowns a reader wants.

``skillqa_tables.md`` holds

* the leaderboard in Table 2's layout (Overall Score, Task Accuracy, Pairwise
  Accuracy, BERTScore F1; components as fractions to two decimals, the
  overall score from unrounded components), ranked by the overall score,
  with Invalid and Missing columns, then the same values with their
  clustered 95% intervals;
* Pairwise Accuracy both ways: invalid orders scored 0 (the leaderboard's) and
  with partial credit for the pairs they place right (the other reading of §4.2);
* the scores by procedure (CPR, AED, BMV) and by frame count (4 vs 6);
* position bias: how often a run's valid answers are the identifiers in the
  order shown or its reverse, against what a uniform guess gives (1/n! each)
  and how often the truth itself is the shown order.

``skillqa_positions.png`` is the per-position confusion: for 4- and 6-frame
instances, the share of frames truly at step t that a run put at position p
(valid answers). Values come from ``scores.json``; the bias table and the plot
read the runs' predictions, extracted again with the current rule.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from medtemporal.benchmarks.skillqa.published import TABLES
from medtemporal.report.family import (
    DASH, FamilyReport, ReportRun, caution, cell, figure_png, markdown_table, published_section, pyplot,
    unavailable_notes,
)
from medtemporal.schema import Item

GROUPS = ("CPR", "AED", "BMV", "4 frames", "6 frames")
"""Breakdown columns, declared as merged subtypes of task ``ordering`` (see the package's spec)."""
LEADERBOARD = (("Overall Score", "skillqa_overall"), ("Task Accuracy", "accuracy"),
               ("Pairwise Accuracy", "pairwise_accuracy"), ("BERTScore F1", "skillqa_rationale_bertscore"))
"""Table 2's columns and the metrics behind them."""


def _value(run: ReportRun, group: str, metric: str, *, ci: bool = False) -> str:
    """A cell: the overall score × 100, components as fractions, each to two decimals (`cell`'s rule; a metric that
    could not be computed is "unavailable", its reason under the table)."""
    return cell(run.scores.score(group, metric), scale=100.0 if metric == "skillqa_overall" else 1.0, digits=2, ci=ci)


def leaderboard(runs: Sequence[ReportRun], *, ci: bool = False) -> str:
    """Table 2's layout, runs ranked by the overall score (highest first)."""
    def key(run: ReportRun) -> float:
        s = run.scores.score("overall", "skillqa_overall")
        return -(s.value if s is not None and not math.isnan(s.value) else -1.0)

    rows = []
    for rank, run in enumerate(sorted(runs, key=key), 1):
        first = run.scores.score("overall", "accuracy")
        rows.append([str(rank), run.label, *(_value(run, "overall", m, ci=ci) for _, m in LEADERBOARD),
                     str(first.invalid if first else DASH), str(first.missing if first else DASH)])
    return markdown_table(["Rank", "System", *(c for c, _ in LEADERBOARD), "Invalid", "Missing"], rows)


def pairwise_readings(runs: Sequence[ReportRun]) -> str:
    """Pairwise Accuracy with invalid orders scored 0 and with their correctly placed pairs counted."""
    rows = [[run.label, _value(run, "overall", "pairwise_accuracy", ci=True),
             _value(run, "overall", "pairwise_accuracy_partial", ci=True)] for run in runs]
    return markdown_table(["System", "Invalid orders score 0", "Invalid orders keep their right pairs"], rows)


def breakdown(runs: Sequence[ReportRun], columns: Sequence[str]) -> str:
    """Overall, Task and Pairwise Accuracy of each run over the given columns (groups)."""
    header = ["System", "Metric", *columns]
    rows = []
    for run in runs:
        for title, metric in LEADERBOARD[:3]:
            rows.append([run.label, title, *(_value(run, f"subtypes:ordering/{c}", metric) for c in columns)])
    return markdown_table(header, rows)


def _answers(run: ReportRun) -> list[tuple[Item, list[str] | None]]:
    """(item, extracted order or None) for every item the run answered."""
    return [(o.item, o.answer if isinstance(o.answer, list) else None)
            for o in run.outcomes.by_repeat[0] if o.output is not None]


def position_bias(runs: Sequence[ReportRun], answers: Sequence[list[tuple[Item, list[str] | None]]]) -> str:
    """Shares of valid answers that are the shown order or its reverse, with the uniform and true rates."""
    rows = []
    for run, pairs in zip(runs, answers, strict=True):
        valid = [(i, a) for i, a in pairs if a is not None]
        if not valid:
            rows.append([run.label, "0", DASH, DASH, DASH, DASH])
            continue
        shown = [list(i.options) for i, _ in valid]
        same = np.mean([a == s for (_, a), s in zip(valid, shown)])
        reverse = np.mean([a == s[::-1] for (_, a), s in zip(valid, shown)])
        uniform = np.mean([1 / math.factorial(len(s)) for s in shown])
        truth = np.mean([list(i.answer) == s for (i, _), s in zip(valid, shown)])
        rows.append([run.label, str(len(valid)), f"{same:.3f}", f"{reverse:.3f}", f"{uniform:.3f}", f"{truth:.3f}"])
    return markdown_table(["System", "Valid answers", "Shown order", "Reversed shown order", "Uniform guess (each)",
                           "Truth is shown order"], rows)


def confusion(pairs: Sequence[tuple[Item, list[str] | None]], n: int) -> np.ndarray:
    """``M[t, p]``: share of frames truly at step t (0-based) placed at position p, over valid n-frame answers."""
    counts = np.zeros((n, n))
    for item, answer in pairs:
        if answer is None or len(item.answer) != n:
            continue
        where = {x: k for k, x in enumerate(answer)}
        for t, x in enumerate(item.answer):
            counts[t, where[x]] += 1
    totals = counts.sum(axis=1, keepdims=True)
    return np.divide(counts, totals, out=np.full_like(counts, np.nan), where=totals > 0)


def confusion_png(runs: Sequence[ReportRun], answers: Sequence[list[tuple[Item, list[str] | None]]]) -> bytes:
    """One row per run, one heat map per frame count (4, 6)."""
    fig, axes = pyplot().subplots(len(runs), 2, figsize=(7.5, 3.3 * len(runs)), squeeze=False)
    for r, (run, pairs) in enumerate(zip(runs, answers, strict=True)):
        for c, n in enumerate((4, 6)):
            ax = axes[r][c]
            m = confusion(pairs, n)
            ax.imshow(m, vmin=0, vmax=1, cmap="Blues")
            for t in range(n):
                for p in range(n):
                    if not math.isnan(m[t, p]):
                        ax.text(p, t, f"{m[t, p]:.2f}", ha="center", va="center", fontsize=7,
                                color="white" if m[t, p] > 0.5 else "black")
            ax.set_xticks(range(n), [str(k + 1) for k in range(n)])
            ax.set_yticks(range(n), [str(k + 1) for k in range(n)])
            ax.set_xlabel("predicted position")
            ax.set_ylabel("true step")
            ax.set_title(f"{run.label}: {n} frames", fontsize=9)
    fig.subplots_adjust(hspace=0.45, wspace=0.35)
    return figure_png(fig)


def _layer(layer: int | None) -> str:
    return "not available here" if layer is None else f"layer {layer}"


def write_skillqa_report(ctx: FamilyReport) -> None:
    """Write ``skillqa_tables.md`` and ``skillqa_positions.png`` for the runs."""
    runs = ctx.runs
    answers = [_answers(run) for run in runs]
    alpha_beta = next((r.scores.metrics.get("skillqa_overall", {}).get("settings") for r in runs), None) or {}
    note = (f"Overall = 100·[β(α·TaskAcc + (1−α)·PairAcc) + (1−β)·BERTScore], α = {alpha_beta.get('alpha')}, "
            f"β = {alpha_beta.get('beta')}, from unrounded components; BERTScore encoder "
            f"`{alpha_beta.get('bertscore_model')}` ({_layer(alpha_beta.get('bertscore_layer'))}).")
    notes = list(dict.fromkeys(n for _, m in LEADERBOARD for n in unavailable_notes(runs, m)))
    figure = ctx.write("positions.png", confusion_png(runs, answers))
    ctx.write("tables.md", "\n\n".join([
        "# ClinicalSkillQA", "## Leaderboard (Table 2 layout)", leaderboard(runs), note, *notes,
        "## With clustered 95% intervals", leaderboard(runs, ci=True),
        "## Pairwise Accuracy, both readings of the paper's definition", pairwise_readings(runs),
        "## By procedure", breakdown(runs, GROUPS[:3]),
        "## By frame count", breakdown(runs, GROUPS[3:]),
        "## Position bias", position_bias(runs, answers),
        "## Per-position confusion", f"![per-position confusion]({figure.name})",
        published_section(TABLES, runs, cautions=lambda run: caution(
            run, lambda m: False, "the shared task's hidden test set (scored by the organisers on CodaBench)")),
    ]) + "\n")
