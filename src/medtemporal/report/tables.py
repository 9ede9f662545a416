"""Tables from `Score` records: the paper's Table 1 layout as Markdown and CSV.

Rows are runs (one model + protocol each) and a chance row; columns are the
task families with their subtype columns (merged as the benchmark declares)
and Overall: the micro average over items, and beside it, where the paper's
Overall is a weighted mean of its columns (MI-CXR), "Overall (paper)" next
to "Overall (micro)". Cells show the value with its 95% interval; invalid and missing
answers have their own columns; a metric that could not be computed shows
"unavailable", with its reason under the table's heading (`unavailable_notes`).
Nothing here computes a metric: every number comes from a run's ``scores.json``.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, replace
from typing import Sequence

from medtemporal.report.loaded import ReportRun, protocol_label
from medtemporal.schema import Score
from medtemporal.scoring.aggregate import WEIGHTED_OVERALL

DASH = "–"
UNAVAILABLE = "unavailable"
"""The cell of a metric that could not be computed (`Score.unavailable`)."""


@dataclass(frozen=True)
class TableColumn:
    """A column: the family it sits under, its label and the score group it shows."""

    family: str
    label: str
    group: str


def variant_runs(runs: Sequence[ReportRun], name: str) -> list[ReportRun]:
    """The runs scored by the family's variant ``name`` (`medtemporal.contract.BenchmarkSpec.variants`), each
    with the variant's scores in place of the main ones; runs without it are left out."""
    return [replace(run, scores=scores) for run in runs if (scores := run.scores.variant(name)) is not None]


def metric_names(runs: Sequence[ReportRun]) -> list[str]:
    """Metrics present in any run, in the order first seen (the primary metric first)."""
    return list(dict.fromkeys(s.metric for r in runs for s in r.scores.scores))


def has_value(score: Score | None) -> bool:
    """Whether a score shows a number: computed, not NaN, and not over items the run left all missing."""
    return score is not None and not math.isnan(score.value) and score.missing < score.n


def scored_metrics(runs: Sequence[ReportRun]) -> list[str]:
    """The metrics with a value in some run (`metric_names` less those every run left without one)."""
    return [m for m in metric_names(runs) if any(has_value(s) for r in runs for s in r.scores.scores if s.metric == m)]


def subtype_families(runs: Sequence[ReportRun]) -> dict[str, str]:
    """Subtype → the families it belongs to, joined (``perception + reasoning``), for subtypes that several
    families share: their scores pool every family's items, so they are shown once under all of them."""
    owners: dict[str, list[str]] = {}
    for run in runs:
        for task in run.scores.layout:
            for s in task.subtypes:
                if task.task not in owners.setdefault(s, []):
                    owners[s].append(task.task)
    return {s: " + ".join(tasks) for s, tasks in owners.items() if len(tasks) > 1}


def subtype_columns(runs: Sequence[ReportRun], metric: str) -> list[TableColumn]:
    """The Table 1 columns: each family's declared or per-subtype columns, then Overall."""
    shared = subtype_families(runs)
    columns: dict[str, TableColumn] = {}
    for run in runs:
        for task in run.scores.layout:
            for c in task.columns:
                if run.scores.score(c.group, metric) is not None:
                    family = shared.get(c.group.removeprefix("subtype:"), task.task)
                    columns.setdefault(c.group, TableColumn(family, c.label, c.group))
    return [*columns.values(), *overall_columns(runs, metric)]


def family_columns(runs: Sequence[ReportRun], metric: str) -> list[TableColumn]:
    """One column per task family, then Overall."""
    columns = {t.group: TableColumn(t.task, t.task, t.group) for r in runs for t in r.scores.layout
               if r.scores.score(t.group, metric) is not None}
    return [*columns.values(), *overall_columns(runs, metric)]


def overall_columns(runs: Sequence[ReportRun], metric: str) -> list[TableColumn]:
    """"Overall", naming its tasks where it covers only some (``Overall (findings)``, `overall_tasks`); where a
    run has the paper's weighted Overall, "Overall (paper)" and "Overall (micro)"."""
    if any(r.scores.score(WEIGHTED_OVERALL, metric) is not None for r in runs):
        return [TableColumn("", "Overall (paper)", WEIGHTED_OVERALL), TableColumn("", "Overall (micro)", "overall")]
    covered = {tuple(overall_tasks(r)) for r in runs}
    label = f"Overall ({', '.join(next(iter(covered)))})" if len(covered) == 1 and () not in covered else "Overall"
    return [TableColumn("", label, "overall")]


def overall_tasks(run: ReportRun) -> list[str]:
    """The run's tasks that its family's Overall covers, where that is not all of them (`ScoreGroups.overall_tasks`)."""
    from medtemporal.contract import spec
    from medtemporal.errors import UnknownNameError

    try:
        chosen = spec(str(run.scores.run.benchmark)).groups.overall_tasks
    except UnknownNameError:  # a plugin family no longer installed
        return []
    tasks = [t.task for t in run.scores.layout]
    return [t for t in tasks if t in chosen] if chosen and not set(tasks) <= set(chosen) else []


def is_percent(runs: Sequence[ReportRun], metric: str) -> bool:
    """Whether the metric declared that reports show it in percent."""
    return any(bool(r.scores.metrics.get(metric, {}).get("percent")) for r in runs)


def cell(value: Score | float | None, *, scale: float = 100.0, digits: int = 1, ci: bool = False,
         unavailable: bool = False) -> str:
    """The one cell of every table: ``31.5``, with ``ci`` its interval ``31.5 [28.1, 34.9]`` where defined.

    The one rule for what has no number: a metric that could not be computed (`Score.unavailable`, or
    ``unavailable`` for a value derived from such scores) is "unavailable"; anything else without a value (no
    score, NaN for want of items) is a dash.

    >>> cell(0.315), cell(0.315, scale=1, digits=3), cell(None), cell(float("nan"))
    ('31.5', '0.315', '–', '–')
    >>> cell(Score(metric="accuracy", value=0.5, ci_low=0.25, ci_high=0.75), ci=True)
    '50.0 [25.0, 75.0]'
    >>> cell(Score(metric="accuracy", value=0.5, ci_low=float("nan"), ci_high=float("nan")), ci=True)
    '50.0'
    >>> cell(Score(metric="bertscore_f1", value=float("nan"), unavailable="no encoder"))
    'unavailable'
    """
    if unavailable or (isinstance(value, Score) and value.unavailable):
        return UNAVAILABLE
    number = value.value if isinstance(value, Score) else value
    if number is None or math.isnan(number):
        return DASH
    text = f"{scale * number:.{digits}f}"
    bounds = (value.ci_low, value.ci_high) if ci and isinstance(value, Score) else (None, None)
    if all(b is not None and math.isfinite(b) for b in bounds):  # an interval where it is defined
        text += f" [{scale * bounds[0]:.{digits}f}, {scale * bounds[1]:.{digits}f}]"
    return text


def fmt(value: float | None, percent: bool) -> str:
    """A value as ``31.5`` (percent) or ``0.315`` (`cell`'s rule)."""
    return cell(value, scale=100.0 if percent else 1.0, digits=1 if percent else 3)


def fmt_score(score: Score | None, percent: bool) -> str:
    """``31.5 [28.1, 34.9]`` (percent) or ``0.315 [0.281, 0.349]``; the interval left out where undefined
    (`cell`'s rule)."""
    return cell(score, scale=100.0 if percent else 1.0, digits=1 if percent else 3, ci=True)


def unavailable_notes(runs: Sequence[ReportRun], metric: str) -> list[str]:
    """``bertscore_f1: unavailable (reason)`` once per distinct reason, with the runs' labels when only some
    runs share it; empty when every run computed ``metric``."""
    by_reason: dict[str, list[str]] = {}
    for run in runs:
        reason = next((s.unavailable for s in run.scores.scores if s.metric == metric and s.unavailable), None)
        if reason:
            by_reason.setdefault(reason, []).append(run.label)
    return [f"{metric}: unavailable ({reason.rstrip('.')})" + ("" if len(labels) == len(runs) else
                                                               f" in {', '.join(labels)}")
            for reason, labels in by_reason.items()]


def chance_of(runs: Sequence[ReportRun], group: str, metric: str) -> float | None:
    """The chance level of a group, from the first run that has one."""
    for run in runs:
        score = run.scores.score(group, metric)
        if score is not None and score.chance is not None:
            return score.chance
    return None


def table_rows(runs: Sequence[ReportRun], columns: Sequence[TableColumn], metric: str) -> list[list[str]]:
    """Formatted body rows (runs, then Chance): label, cells, invalid, missing."""
    percent = is_percent(runs, metric)
    rows = []
    for run in runs:
        overall = run.scores.score("overall", metric)
        rows.append([
            run.label,
            *(fmt_score(run.scores.score(c.group, metric), percent) for c in columns),
            str(overall.invalid) if overall else DASH,
            str(overall.missing) if overall else DASH,
        ])
    chance = [fmt(chance_of(runs, c.group, metric), percent) for c in columns]
    if any(c != DASH for c in chance):
        rows.append(["Chance", *chance, "", ""])
    return rows


def column_title(column: TableColumn) -> str:
    """``TEL: Single (E/R)``; a family's own column or Overall is just its name."""
    return column.label if not column.family or column.label == column.family else f"{column.family}: {column.label}"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table (``|`` in cells escaped)."""
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(header), line(["---"] * len(header)), *(line(r) for r in rows)])


def metric_title(runs: Sequence[ReportRun], metric: str) -> str:
    """``accuracy (%)``: the metric with its unit, and "ours" where medtemporal scores it beside the paper's own
    metrics (``scores.json`` marks it, `BenchmarkSpec.extra_metrics`)."""
    title = f"{metric} (%)" if is_percent(runs, metric) else metric
    ours = any(r.scores.metrics.get(metric, {}).get("ours") for r in runs)
    return f"{title}, ours (not in the paper)" if ours else title


def family_table(runs: Sequence[ReportRun], metric: str) -> str:
    """The per-family Markdown table of one metric."""
    columns = family_columns(runs, metric)
    header = ["Run", *(column_title(c) for c in columns), "Invalid", "Missing"]
    return markdown_table(header, table_rows(runs, columns, metric))


def table1(runs: Sequence[ReportRun], metric: str) -> str:
    """The Table 1 layout as Markdown."""
    columns = subtype_columns(runs, metric)
    header = ["Run", *(column_title(c) for c in columns), "Invalid", "Missing"]
    return markdown_table(header, table_rows(runs, columns, metric))


def subtype_rows(runs: Sequence[ReportRun], metric: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the per-subtype table: family, subtype, n, chance, then per run value and
    invalid/missing counts."""
    percent = is_percent(runs, metric)
    header = ["Family", "Subtype", "n", "Chance"]
    for run in runs:
        header += [run.label, "invalid / missing"]
    rows = []
    seen: set[str] = set()
    shared = subtype_families(runs)
    for run in runs:
        for task in run.scores.layout:
            for subtype in task.subtypes:
                group = f"subtype:{subtype}"
                if group in seen or run.scores.score(group, metric) is None:
                    continue
                seen.add(group)
                row = [shared.get(subtype, task.task), subtype, str(run.scores.score(group, metric).n),
                       fmt(chance_of(runs, group, metric), percent)]
                for other in runs:
                    score = other.scores.score(group, metric)
                    row += [fmt_score(score, percent), f"{score.invalid} / {score.missing}" if score else DASH]
                rows.append(row)
    return header, rows


def description(runs: Sequence[ReportRun]) -> str:
    """One paragraph saying what the numbers are."""
    first = runs[0].scores
    boot = first.bootstrap
    benchmarks = sorted({f"{r.scores.run.benchmark} (version {r.scores.run.benchmark_version})"
                         for r in runs})
    return (
        f"Benchmark: {', '.join(benchmarks)}. Cells give the score with its "
        f"{100 * float(boot.get('confidence', 0.95)):.0f}% confidence interval clustered by patient: "
        f"{boot.get('method', 'bootstrap')}, {boot.get('resamples')} resamples, seed {boot.get('seed')}. "
        "Invalid: an output from which no valid answer could be extracted; missing: no prediction "
        "(or only an error). Both count as wrong. Truncated: outputs cut off at the token limit, scored as they are."
    )


def markdown(runs: Sequence[ReportRun]) -> str:
    """The whole report as Markdown: runs, then per metric the family, Table 1 and subtype tables."""
    parts = ["# medtemporal report", "", description(runs), "", "## Runs", ""]
    header = ["Run", "Model", "Protocol", "Items", "Answered", "Invalid", "Missing", "Truncated", "Re-extracted",
              "Folder"]
    counts = ("items", "answered", "invalid", "missing", "truncated", "re_extracted")
    rows = [[r.label, str(r.scores.run.model), protocol_label(r.scores),
             *(str(r.scores.counts.get(k, DASH)) for k in counts),
             str(r.path)] for r in runs]
    parts += [markdown_table(header, rows), ""]
    for metric in scored_metrics(runs):
        title = metric_title(runs, metric)
        parts += [f"## {title} by task family", "", *(f"{n}\n" for n in unavailable_notes(runs, metric)),
                  family_table(runs, metric), ""]
        parts += [f"## {title} by family and subtype, in the papers' table layout", "", table1(runs, metric), ""]
        sub_header, sub_rows = subtype_rows(runs, metric)
        parts += [f"## {title} by subtype", "", markdown_table(sub_header, sub_rows), ""]
    scored = scored_metrics(runs)
    parts += [f"{n}\n" for m in metric_names(runs) if m not in scored for n in unavailable_notes(runs, m)]
    return "\n".join(parts)


def csv_text(runs: Sequence[ReportRun]) -> str:
    """Table 1 as CSV: one row per run and metric (plus a chance row), raw values (fractions).

    For each column ``X`` there are ``X``, ``X ci_low``, ``X ci_high``, ``X n``, ``X invalid`` and
    ``X missing``; empty cells mean no score.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for k, metric in enumerate(metric_names(runs)):
        columns = subtype_columns(runs, metric)
        header = ["run", "model", "protocol", "metric", "truncated"]
        for c in columns:
            title = column_title(c)
            header += [title, *(f"{title} {f}" for f in ("ci_low", "ci_high", "n", "invalid", "missing"))]
        if k:
            writer.writerow([])
        writer.writerow(header)
        for run in runs:
            row = [run.label, run.scores.run.model, protocol_label(run.scores), metric,
                   run.scores.counts.get("truncated", "")]
            for c in columns:
                s = run.scores.score(c.group, metric)
                row += ["", "", "", "", "", ""] if s is None else [
                    _num(s.value), _num(s.ci_low), _num(s.ci_high), s.n, s.invalid, s.missing]
            writer.writerow(row)
        chance = ["Chance", "", "", metric, ""]
        for c in columns:
            chance += [_num(chance_of(runs, c.group, metric)), "", "", "", "", ""]
        writer.writerow(chance)
    return out.getvalue()


def _num(value: float | None) -> str:
    return "" if value is None or math.isnan(value) else repr(float(value))
