"""HTML sections of the report beyond the score tables: run settings, repeats, paired differences and the
benchmark's own files (paper-layout tables and figures its `BenchmarkSpec.report` wrote)."""

from __future__ import annotations

import base64
import json
import warnings
from html import escape
from pathlib import Path
from typing import Any, Sequence

import markdown as markdown_lib

from medtemporal.errors import InvalidInputError
from medtemporal.report.tables import DASH, ReportRun, fmt, is_percent, protocol_label
from medtemporal.runs import BenchmarkRef, RunConfig, RunFolder
from medtemporal.scoring.compare import ComparisonWarning, compare_runs


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain HTML table in a horizontally scrolling box (cells escaped)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def run_config(run: ReportRun) -> RunConfig | None:
    """The run's config (None when it has none)."""
    return RunFolder(run.path).read_config()


def _short(value: Any, width: int = 90) -> str:
    """A setting as text, cut at ``width`` characters with an ellipsis."""
    if value is None or value == {} or value == []:
        return DASH
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= width else text[: width - 1] + "…"


def settings_section(runs: Sequence[ReportRun]) -> str:
    """A setting per row, a run per column: model identity, generation, repeats, protocol and options,
    selection, versions and dates (from each run's ``config.json``)."""
    columns = []
    for run in runs:
        c = run_config(run) or RunConfig(benchmark=BenchmarkRef(path=str(run.path)))
        model, gen, packages = c.model, c.generation, c.packages
        columns.append([
            _short(model.identity), _short(model.served), _short(gen.get("temperature")),
            _short(gen.get("max_tokens")), _short(gen.get("seed")), _short(gen.get("top_p")),
            _short(gen.get("system_prompt")), str(c.repeats), protocol_label(run.scores),
            _short(c.tasks), _short(c.limit),
            f"{c.medtemporal_version or DASH} ({c.git_revision or 'no git'})",
            _short(", ".join(f"{k} {v}" for k, v in sorted(packages.items()) if k != "medtemporal"), 120),
            _short(c.started_at), _short(c.finished_at),
        ])
    names = ["Model identity", "Served as", "Temperature", "Max tokens", "Seed", "Top-p", "System prompt",
             "Repeats", "Protocol", "Tasks", "Limit", "medtemporal", "Packages", "Started", "Finished"]
    rows = [[name, *(col[k] for col in columns)] for k, name in enumerate(names)]
    return "<h2>Run settings</h2>" + table(["Setting", *(r.label for r in runs)], rows)


def repeats_section(runs: Sequence[ReportRun]) -> str:
    """Each repeat's value with mean and sd, and how often items changed answer; empty without repeats."""
    with_repeats = [r for r in runs if r.scores.repeats]
    if not with_repeats:
        return ""
    rows, agreement = [], []
    for run in with_repeats:
        block = run.scores.repeats or {}
        for s in block.get("scores", []):
            if s["group"] != "overall" and not s["group"].startswith("task:"):
                continue
            pct = is_percent(runs, s["metric"])
            rows.append([run.label, s["group"], s["metric"], " / ".join(fmt(v, pct) for v in s["values"]),
                         fmt(s["mean"], pct), fmt(s["sd"], pct) if s["sd"] is not None else DASH])
        for group, c in block.get("consistency", {}).items():
            same = c.get("correct_agreement")
            agreement.append([run.label, group, str(c["items"]), f"{100 * c['answer_agreement']:.1f}",
                              str(c["flipped_items"]), DASH if same is None else f"{100 * same:.1f}"])
    return (
        "<h2>Repeats: each repeat's value, their mean and spread</h2>"
        '<p class="note">The main tables pool every repeat (intervals resample patients); here each repeat '
        "on its own. sd: standard deviation over repeats.</p>"
        + table(["Run", "Group", "Metric", "Per repeat", "Mean", "sd"], rows)
        + "<h2>Repeats: per-item consistency</h2>"
        + table(["Run", "Group", "Items", "Same answer in every repeat (%)", "Items that changed answer",
                 "Right in all or wrong in all (%)"], agreement)
    )


def paired_section(runs: Sequence[ReportRun]) -> str:
    """Each run against the first on their common items (`medtemporal.scoring.compare`); empty for one run
    or runs of different benchmarks."""
    if len(runs) < 2 or len({r.scores.run.get("benchmark") for r in runs}) != 1:
        return ""
    base = runs[0]
    rows, notes = [], []
    for run in runs[1:]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ComparisonWarning)
            try:
                result = compare_runs(run.path, base.path)
            except InvalidInputError:
                notes.append(f"{run.label}: no item answered by both runs, so no paired difference.")
                continue
        notes += [f"{run.label}: {w}." for w in result.warnings]
        for r in result.rows:
            pct = is_percent(runs, r.metric)
            ci = DASH if r.ci_low is None else f"[{fmt(r.ci_low, pct)}, {fmt(r.ci_high, pct)}]"
            rows.append([run.label, r.group, r.metric, str(r.n), fmt(r.a, pct), fmt(r.b, pct), fmt(r.diff, pct), ci,
                         DASH if r.p_mcnemar is None else f"{r.p_mcnemar:.3g}"])
    warn = "".join(f'<p class="warn">Warning: {escape(n)}</p>' for n in notes)
    return (
        f"<h2>Paired differences against {escape(base.label)}</h2>"
        '<p class="note">On the items both runs answered: run − first run, a 95% interval from a paired '
        "bootstrap resampling patients, and McNemar's exact p-value for accuracy "
        f"(also: <code>medtemporal compare {escape(str(base.path))} RUN</code>).</p>{warn}"
        + table(["Run", "Group", "Metric", "n", "Run", "First run", "Difference", "95% CI", "McNemar p"], rows)
    )


def files_section(files: Sequence[Path]) -> str:
    """The benchmark's own report files inline: Markdown rendered to HTML, PNG figures embedded."""
    parts = []
    for path in files:
        if path.suffix == ".md":
            html = markdown_lib.markdown(path.read_text(encoding="utf-8"), extensions=["tables"])
            for level in (2, 1):  # the file's headings sit under this section's
                html = html.replace(f"<h{level}>", f"<h{level + 2}>").replace(f"</h{level}>", f"</h{level + 2}>")
            html = html.replace("<table>", '<div class="scroll"><table>').replace("</table>", "</table></div>")
            parts.append(f'<div class="family">{html}</div>')
        elif path.suffix == ".png":
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            parts.append(f'<figure><img alt="{escape(path.stem)}" src="data:image/png;base64,{data}">'
                         f"<figcaption>{escape(path.name)}</figcaption></figure>")
    if not parts:
        return ""
    return "<h2>The benchmark's own tables and figures (paper layout)</h2>" + "".join(parts)
