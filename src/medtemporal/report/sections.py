"""HTML sections of the report beyond the score tables: runs, run settings, repeats, paired differences and
the benchmark's own files (paper-layout tables and figures its `BenchmarkSpec.report` wrote)."""

from __future__ import annotations

import io
import json
import math
import warnings
from pathlib import Path
from typing import Any, Sequence

from PIL import Image

from medtemporal.errors import InvalidInputError
from medtemporal.report.assets import Assets
from medtemporal.report.escaping import html_text, markdown_html
from medtemporal.report.plots import MIN_FONT_KEY
from medtemporal.report.loaded import ReportRun, protocol_label
from medtemporal.report.tables import DASH, fmt, is_percent
from medtemporal.runs import BenchmarkRef, RunConfig
from medtemporal.scoring.compare import ComparisonWarning, compare_runs


def table(header: Sequence[str], rows: Sequence[Sequence[str]], titles: Sequence[Sequence[str]] | None = None) -> str:
    """A plain HTML table in a horizontally scrolling box (cells escaped; ``titles``: each cell's tooltip)."""
    head = "".join(f"<th>{html_text(h)}</th>" for h in header)
    body = []
    for r, row in enumerate(rows):
        cells = []
        for c, text in enumerate(row):
            tip = titles[r][c] if titles and titles[r][c] and titles[r][c] != text else ""
            cells.append(f'<td title="{html_text(tip)}">{html_text(text)}</td>' if tip else f"<td>{html_text(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


LEGIBLE_PX = 9
"""The smallest chart text, in CSS pixels as shown, that a page keeps."""


def figure(fig_id: str, src: str, alt: str, caption: str, png: bytes | None = None) -> str:
    """A figure with an id; a chart's PNG gives its smallest text size (``data-min-font-px``) and natural width, and
    the narrowest it may be shown with that text still 9 px (on a phone the figure scrolls sideways instead)."""
    attrs = ""
    if png is not None:
        with Image.open(io.BytesIO(png)) as im:
            font = im.info.get(MIN_FONT_KEY)
            attrs = f' width="{im.width}"' + (f' data-min-font-px="{html_text(font)}"' if font else "")
            if font and float(font) > 0:  # a chart without text records 0
                attrs += f' style="min-width:{math.ceil(im.width * LEGIBLE_PX / float(font))}px"'
    return (f'<figure id="{html_text(fig_id)}"><img alt="{html_text(alt)}" src="{html_text(src)}"{attrs}>'
            f"<figcaption>{html_text(caption)}</figcaption></figure>")


def runs_section(runs: Sequence[ReportRun]) -> str:
    """One row per run: model, protocol, items (× repeats) and counts of answers."""
    repeats = [r.repeats for r in runs]
    rows, titles = [], []
    for run, n in zip(runs, repeats, strict=True):
        c = run.scores.counts
        items = f"{c.get('items', 0):,}" + (f" × {n} repeats" if n > 1 else "")
        rows.append([run.label, str(run.scores.run.model), protocol_label(run.scores), items,
                     *(f"{c[k]:,}" if isinstance(c.get(k), int) else DASH
                       for k in ("answered", "invalid", "missing", "truncated")), run.path.name])
        titles.append([""] * 8 + [str(run.path)])
    note = ('<p class="note">Answered, invalid, missing and truncated count answers: each item once per repeat.</p>'
            if max(repeats) > 1 else "")
    return ("<h2 id=\"runs\">Runs</h2>"
            + table(["Run", "Model", "Protocol", "Items", "Answered", "Invalid", "Missing", "Truncated", "Folder"],
                    rows, titles) + note)


def _short(value: Any, width: int = 60) -> str:
    """A setting as text, cut at ``width`` characters with an ellipsis."""
    text = _full(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _full(value: Any) -> str:
    if value is None or value == {} or value == []:
        return DASH
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


SETTINGS = ("Served as", "Temperature", "Max tokens", "Seed", "Top-p", "System prompt", "Repeats",
            "Protocol", "Tasks", "Limit", "medtemporal", "Packages", "Started", "Finished")


def _settings(run: ReportRun) -> list[Any]:
    c = run.config or RunConfig(benchmark=BenchmarkRef(path=str(run.path)))
    gen = c.generation
    return [c.model.served, gen.get("temperature"), gen.get("max_tokens"), gen.get("seed"),
            gen.get("top_p"), gen.get("system_prompt"), str(c.repeats), protocol_label(run.scores),
            c.tasks, c.limit, f"{c.medtemporal_version or DASH} ({c.git_revision or 'no git'})",
            ", ".join(f"{k} {v}" for k, v in sorted(c.packages.items()) if k != "medtemporal"),
            c.started_at, c.finished_at]


def identity_section(runs: Sequence[ReportRun]) -> str:
    """Each run's model as its backend describes itself (``config.json``'s ``model.identity``): one row per
    field (URI, name, revision, dtype, device …), one column per run; empty when no run recorded one."""
    identities = [r.config.model.identity if r.config else {} for r in runs]
    keys = list(dict.fromkeys(k for identity in identities for k in identity))
    if not keys:
        return ""
    rows = [[k, *(_short(i.get(k), 80) for i in identities)] for k in keys]
    titles = [["", *(_full(i.get(k)) for i in identities)] for k in keys]
    return ('<h3 id="model">Model</h3><div class="settings">'
            + table(["", *(r.label for r in runs)], rows, titles) + "</div>")


def settings_section(runs: Sequence[ReportRun]) -> str:
    """The runs' model identity (`identity_section`) and settings from their ``config.json``: those all runs
    share in one table, those that differ in another (a run per column); long values are cut, whole in their
    tooltip; values wrap on a narrow screen."""
    values = [_settings(r) for r in runs]
    same = [k for k in range(len(SETTINGS)) if len({_full(v[k]) for v in values}) == 1]
    differ = [k for k in range(len(SETTINGS)) if k not in same and SETTINGS[k] not in ("Started", "Finished")]
    when = [k for k in range(len(SETTINGS)) if k not in same and k not in differ]
    parts = ["<h2 id=\"settings\">Run settings</h2>", identity_section(runs), '<div class="settings">']
    if same:
        title = "Every run" if len(runs) > 1 else runs[0].label
        parts.append(table(["Setting", title], [[SETTINGS[k], _short(values[0][k], 100)] for k in same],
                           [["", _full(values[0][k])] for k in same]))
    if differ or when:
        keys = differ + when
        parts.append("<h3>Settings that differ between runs</h3>" + table(
            ["Setting", *(r.label for r in runs)], [[SETTINGS[k], *(_short(v[k]) for v in values)] for k in keys],
            [["", *(_full(v[k]) for v in values)] for k in keys]))
    return "".join([*parts, "</div>"])


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
            agreement.append([run.label, group, f"{c['items']:,}", f"{100 * c['answer_agreement']:.1f}",
                              f"{c['flipped_items']:,}", DASH if same is None else f"{100 * same:.1f}"])
    return (
        "<h2 id=\"repeats\">Repeats: each repeat's value, their mean and spread</h2>"
        '<p class="note">The main tables pool every repeat (intervals resample patients); here each repeat '
        "on its own. sd: standard deviation over repeats.</p>"
        + table(["Run", "Group", "Metric", "Per repeat", "Mean", "sd"], rows)
        + "<h3>Per-item consistency</h3>"
        + table(["Run", "Group", "Items", "Same answer in every repeat (%)", "Items that changed answer",
                 "Right in all or wrong in all (%)"], agreement)
    )


def differences_line(differs: dict[str, tuple[Any, Any]]) -> str:
    """The settings two runs differ in, in a few words: a setting with its two values where short, else the
    settings under one heading counted (``protocol.templates (2 settings)``)."""
    by_head: dict[str, list[str]] = {}
    for key in differs:
        by_head.setdefault(".".join(key.split(".")[:2]), []).append(key)
    parts = []
    for head, keys in by_head.items():
        a, b = differs[keys[0]]
        shown = (json.dumps(a, ensure_ascii=False), json.dumps(b, ensure_ascii=False))
        if len(keys) == 1 and max(len(s) for s in shown) <= 40:
            parts.append(f"{keys[0]} ({shown[0]} vs {shown[1]})")
        else:
            parts.append(f"{head} ({len(keys)} setting{'s' if len(keys) > 1 else ''})" if keys != [head] else head)
    return ", ".join(parts)


def paired_section(runs: Sequence[ReportRun]) -> str:
    """Each run against the first on their common items (`medtemporal.scoring.compare`); empty for one run
    or runs of different benchmarks."""
    if len(runs) < 2 or len({r.scores.run.benchmark for r in runs}) != 1:
        return ""
    base = runs[0]
    rows, pairs, warns = [], [], []
    for run in runs[1:]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ComparisonWarning)
            try:
                result = compare_runs(run.outcomes, base.outcomes)
            except InvalidInputError as exc:
                warns.append(f"{run.label}: no paired difference: {exc}")
                continue
        settings = differences_line(result.differs) if result.differs else "the same settings"
        pairs.append(f"{run.label} vs {base.label}: {result.common:,} common items; "
                     + (f"settings differ in {settings}." if result.differs else "same settings."))
        if result.only_a or result.only_b:
            warns.append(f"{run.label}: the runs cover different items ({result.only_a:,} answered only here, "
                         f"{result.only_b:,} only in {base.label}); only the common items are compared.")
        for r in result.rows:
            pct = is_percent(runs, r.metric)
            ci = DASH if r.ci_low is None else f"[{fmt(r.ci_low, pct)}, {fmt(r.ci_high, pct)}]"
            rows.append([run.label, r.group, r.metric, f"{r.n:,}", fmt(r.a, pct), fmt(r.b, pct), fmt(r.diff, pct), ci,
                         DASH if r.p_mcnemar is None else f"{r.p_mcnemar:.3g}"])
    listed = "".join(f"<li>{html_text(p)}</li>" for p in pairs)
    warn = "".join(f'<p class="warn">Warning: {html_text(n)}</p>' for n in warns)
    return (
        f"<h2 id=\"paired\">Paired differences against {html_text(base.label)}</h2>"
        '<p class="note">On the items both runs answered: run − first run, a 95% interval from a paired '
        "bootstrap resampling patients, and McNemar's exact p-value for accuracy "
        f"(also: <code>medtemporal compare {html_text(str(base.path))} RUN</code>).</p>"
        f'<ul class="note">{listed}</ul>{warn}'
        + (table(["Run", "Group", "Metric", "n", "Run", "First run", "Difference", "95% CI", "McNemar p"], rows)
           if rows else "")
    )


def files_section(files: Sequence[Path], assets: Assets) -> str:
    """The benchmark's own report files inline: Markdown rendered to HTML (`markdown_html`: no link, image or
    markup from the text) with the figures it names in place, then any figure it does not name; each figure once."""
    pngs = {p.name: p for p in files if p.suffix == ".png"}
    shown: set[str] = set()

    def place(alt: str, name: str) -> str | None:
        if name not in pngs:
            return None
        if name in shown:
            return ""
        shown.add(name)
        return _file_figure(pngs[name], alt, assets)

    parts = []
    for path in files:
        if path.suffix == ".md":
            html = markdown_html(path.read_text(encoding="utf-8"), place)
            for level in (2, 1):  # the file's headings sit under this section's
                html = html.replace(f"<h{level}>", f"<h{level + 2}>").replace(f"</h{level}>", f"</h{level + 2}>")
            html = html.replace("<table>", '<div class="scroll"><table>').replace("</table>", "</table></div>")
            parts.append(f'<div class="family">{html}</div>')
    parts += [_file_figure(path, path.stem, assets) for name, path in pngs.items() if name not in shown]
    if not parts:
        return ""
    return "<h2 id=\"family\">The benchmark's own tables and figures (paper layout)</h2>" + "".join(parts)


def _file_figure(path: Path, alt: str, assets: Assets) -> str:
    """A figure of the benchmark's own files: beside the page, or inline on a single-file page."""
    png = path.read_bytes()
    src = assets.image(path.name, png, "image/png") if assets.single_file else path.name
    return figure(f"fig-{path.stem}", src, alt, path.name, png)
