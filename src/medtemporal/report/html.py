"""The HTML report: one page with its charts and viewer data in ``assets/`` beside it, or all inline.

Sections: runs and their settings; per metric with a value the family table, the paper-layout table
where it has more columns (each run's cell links to its items in the viewer), charts (facetted when
large; none where every bar is zero) and the per-subtype counts; the profile across benchmarks;
repeats; paired differences against the first run; the benchmark's own tables and figures; the
per-item viewer (`medtemporal.report.viewer`). Tables scroll sideways with their first column kept
in view; charts are shown at their own size, which fits the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence
from urllib.parse import quote

from medtemporal.report.assets import Assets
from medtemporal.report.escaping import html_text, policy_meta
from medtemporal.report.glossary import glossary_html
from medtemporal.report.loaded import ReportRun
from medtemporal.report.plots import colour, family_subtypes, has_chance
from medtemporal.report.profile import profile_chart
from medtemporal.report.sections import (
    figure,
    files_section,
    paired_section,
    repeats_section,
    runs_section,
    settings_section,
    table,
)
from medtemporal.report.tables import (
    DASH,
    TableColumn,
    column_title,
    description,
    family_columns,
    has_value,
    metric_names,
    metric_title,
    scored_metrics,
    subtype_columns,
    subtype_rows,
    table_rows,
    unavailable_notes,
)
from medtemporal.report.viewer import VIEWER_CSS, viewer_section
from medtemporal.scoring.aggregate import WEIGHTED_OVERALL

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1200px;
color:#222;padding:0 1rem}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
h3{font-size:1rem;margin:1.2rem 0 .3rem}
table{border-collapse:separate;border-spacing:0;margin:0;font-variant-numeric:tabular-nums}
th,td{border-right:1px solid #d0d0d0;border-bottom:1px solid #d0d0d0;padding:.25rem .55rem;text-align:right;
white-space:nowrap;background:#fff}
tr:first-child>th,thead+tbody tr:first-child>td{border-top:1px solid #d0d0d0}thead tr+tr>th{border-top:none}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left;border-left:1px solid #d0d0d0}th[colspan]{text-align:left}
.scroll td:first-child,.scroll th:first-child{position:sticky;left:0;z-index:1;white-space:normal;min-width:12rem;
max-width:22rem;box-shadow:2px 0 2px -1px rgba(0,0,0,.12)}
.scroll .headline{position:sticky;right:0;z-index:1;box-shadow:-2px 0 2px -1px rgba(0,0,0,.12)}
.scroll thead tr+tr>th:first-child{position:static;text-align:right;border-left:none;min-width:0;box-shadow:none;
white-space:nowrap}
tr.chance td{font-style:italic;color:#555;background:#fafafa}
.note{color:#444;max-width:60rem}.charts{display:flex;flex-wrap:wrap;gap:1rem}
figure{margin:.6rem 0;max-width:100%;overflow-x:auto}figure img{max-width:100%;height:auto}figcaption{font-size:.85rem;color:#555}
.scroll{overflow-x:auto;max-width:100%;margin:.6rem 0 1rem}td a{color:inherit;text-decoration:none;border-bottom:1px dotted #888}
.warn{color:#9a6700}details{margin:.4rem 0 1rem}summary{cursor:pointer;color:#333}
.legend{display:flex;flex-wrap:wrap;gap:.2rem 1.2rem;margin:.6rem 0 .2rem;font-size:.9rem}
.legend i{display:inline-block;width:1.6em;height:.8em;margin-right:.4em;vertical-align:baseline}
.legend i.dash{height:0;border-top:2px dashed #404040;vertical-align:middle}
nav.toc{columns:2;max-width:60rem;font-size:.95rem}nav.toc a{color:#0b57d0;display:inline-block;padding:.1rem 0}
.settings td:not(:first-child),.settings th:not(:first-child){white-space:normal;overflow-wrap:anywhere;min-width:8rem;
max-width:36rem;text-align:left}
table.glossary td.wrap{white-space:normal;min-width:14rem;max-width:48rem;text-align:left}table.glossary th{text-align:left}
@media (max-width:700px){body{margin:1rem auto;padding:0 .6rem}nav.toc{columns:1}h1{font-size:1.3rem}
.scroll td:first-child,.scroll th:first-child{min-width:7rem;max-width:11rem;overflow-wrap:break-word}
table.glossary td.wrap{min-width:11rem}}
""" + VIEWER_CSS


def _cell(text: str, tag: str = "td", attrs: str = "") -> str:
    return f"<{tag}{attrs}>{html_text(text)}</{tag}>"


def _with_values(runs: Sequence[ReportRun], columns: Sequence[TableColumn], metric: str) -> list[TableColumn]:
    """The columns with a value in some run; Overall left out where it repeats the only other column."""
    kept = [c for c in columns if any(has_value(r.scores.score(c.group, metric)) for r in runs)]
    if len(kept) == 2 and kept[-1].group == "overall" and all(
            _same(r.scores.score(kept[0].group, metric), r.scores.score("overall", metric))
            for r in runs if has_value(r.scores.score(kept[0].group, metric))):
        kept = kept[:1]
    return kept


def _same(a: object, b: object) -> bool:
    """Whether two scores are over the same number of answers with the same value (Overall of one family)."""
    return a is not None and b is not None and (a.n, a.value) == (b.n, b.value)  # type: ignore[attr-defined]


def _all_zero(runs: Sequence[ReportRun], columns: Sequence[TableColumn], metric: str) -> bool:
    """Whether every value in these columns is zero with a zero-width interval (a table with nothing to show)."""
    scores = [s for r in runs for c in columns if has_value(s := r.scores.score(c.group, metric))]
    return all(s.value == 0 and s.ci_high in (None, 0) for s in scores)  # type: ignore[union-attr]


def _grouped_table(runs: Sequence[ReportRun], columns: Sequence[TableColumn], metric: str) -> str:
    """A table whose header spans each family over its columns (the Table 1 look); a run's cell links to
    its items in the viewer. Runs without any value in these columns are left out."""
    shown = [k for k, run in enumerate(runs) if any(has_value(run.scores.score(c.group, metric)) for c in columns)]
    lead = _headline_column(columns)
    mark = [' class="headline"' if k == lead else "" for k in range(len(columns))]
    top, bottom = ['<th rowspan="2">Run</th>'], []
    k = 0
    while k < len(columns):
        family = columns[k].family
        span = 1
        while k + span < len(columns) and columns[k + span].family == family and family:
            span += 1
        if not family or (span == 1 and columns[k].label == family):
            top.append(_cell(column_title(columns[k]), "th", ' rowspan="2"' + mark[k]))
        else:
            top.append(_cell(family, "th", f' colspan="{span}"'))
            bottom += [_cell(c.label, "th", mark[j]) for j, c in enumerate(columns[k : k + span], start=k)]
        k += span
    top += ['<th rowspan="2">Invalid</th>', '<th rowspan="2">Missing</th>']
    head = f"<tr>{''.join(top)}</tr><tr>{''.join(bottom)}</tr>"
    if not bottom:  # no family spans columns: one header row
        head = "<tr>" + "".join(top).replace(' rowspan="2"', "") + "</tr>"
    rows = table_rows(runs, columns, metric)
    body = []
    for k in shown:
        row = rows[k]
        cells = [_cell(row[0])]
        for column, text, attrs in zip(columns, row[1 : 1 + len(columns)], mark):
            if text == DASH:
                cells.append(_cell(text, "td", attrs))
            else:
                href = f"#view:run={k}&group={quote(column.group, safe=':/')}"
                cells.append(f'<td{attrs}><a href="{html_text(href)}" title="see these items">{html_text(text)}</a></td>')
        cells += [_cell(c) for c in row[1 + len(columns) :]]
        body.append("<tr>" + "".join(cells) + "</tr>")
    if len(rows) > len(runs):  # the chance row
        chance = rows[-1]
        body.append('<tr class="chance">' + _cell(chance[0]) + "".join(
            _cell(c, "td", a) for c, a in zip(chance[1 : 1 + len(columns)], mark))
                    + "".join(_cell(c) for c in chance[1 + len(columns) :]) + "</tr>")
    return f'<div class="scroll"><table><thead>{head}</thead><tbody>{"".join(body)}</tbody></table></div>'


def _headline_column(columns: Sequence[TableColumn]) -> int | None:
    """The column of the table's headline (the paper's Overall, else Overall), kept in view on a phone."""
    for group in (WEIGHTED_OVERALL, "overall"):
        found = next((k for k, c in enumerate(columns) if c.group == group), None)
        if found is not None:
            return found
    return None


def _chart_caption(runs: Sequence[ReportRun], family: str, metric: str) -> str:
    """What the chart shows; chance lines are named only where drawn."""
    subtypes = family_subtypes(runs, metric).get(family, [])
    chance = "; dashed lines mark chance" if has_chance(runs, subtypes, metric) else ""
    return f"{family}: {metric} by subtype, bars with 95% intervals{chance}."


def _legend(runs: Sequence[ReportRun], drawn: Sequence[int], chance: bool) -> str:
    """The colours of the runs drawn in the charts below (and the chance line, where drawn)."""
    keys = "".join(f'<span><i style="background:{colour(k)}"></i>{html_text(runs[k].label)}</span>' for k in drawn)
    if chance:
        keys += '<span><i class="dash"></i>chance</span>'
    return f'<div class="legend">{keys}</div>'


def _anchor(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text)


def metric_section(runs: Sequence[ReportRun], metric: str, charts: Mapping[str, bytes], assets: Assets) -> str:
    """One metric: the family table, the paper-layout table where it adds columns, charts, per-subtype counts."""
    title = metric_title(runs, metric)
    families = _with_values(runs, family_columns(runs, metric), metric)
    layout = _with_values(runs, subtype_columns(runs, metric), metric)
    parts = [f'<h2 id="metric-{_anchor(metric)}">{html_text(title)}</h2>',
             *(f'<p class="note">{html_text(note)}</p>' for note in unavailable_notes(runs, metric)),
             _grouped_table(runs, families, metric)]
    if table_rows(runs, layout, metric) != table_rows(runs, families, metric) and not _all_zero(runs, layout, metric):
        parts += ["<h3>By family and subtype, in the papers' table layout</h3>", _grouped_table(runs, layout, metric)]
    if charts:
        drawn = [k for k, r in enumerate(runs) if any(has_value(s) for s in r.scores.scores if s.metric == metric)]
        chance = any(has_chance(runs, s, metric) for s in family_subtypes(runs, metric).values())
        parts.append(_legend(runs, drawn, chance) + '<div class="charts">')
        for family, png in charts.items():
            src = assets.image(f"chart-{_anchor(metric)}-{_anchor(family)}.png", png, "image/png")
            parts.append(figure(f"fig-{_anchor(metric)}-{_anchor(family)}", src, f"{metric} by subtype, {family}",
                                _chart_caption(runs, family, metric), png))
        parts.append("</div>")
    header, rows = subtype_rows(runs, metric)
    if len(rows) > 1:
        parts.append(f"<details><summary>Per subtype: n, chance, invalid / missing ({len(rows)} subtypes)</summary>"
                     f"{table(header, rows)}</details>")
    return "".join(parts)


def html_page(
    runs: Sequence[ReportRun],
    charts: Mapping[str, Mapping[str, bytes]],
    assets: Assets,
    *,
    family_files: Sequence[Path] = (),
    extra: str = "",
    viewer: bool = True,
) -> str:
    """The report as one HTML document; its charts, thumbnails and viewer data go to ``assets``.

    Args:
        runs: The runs in the report.
        charts: Metric → family → PNG of its chart (`family_charts`), drawn once for HTML and PNG files.
        assets: Where images and viewer data go (files under ``assets/``, or inline for a single file).
        family_files: Files the benchmark's own report writer made (``.md`` tables, ``.png`` figures), shown inline.
        extra: More sections (HTML) placed before the viewer (the blind-solvability audits).
        viewer: Add the per-item viewer.
    """
    metrics = scored_metrics(runs)
    unscored = [m for m in metric_names(runs) if m not in metrics]
    sections = [metric_section(runs, m, charts.get(m, {}), assets) for m in metrics]
    body = [*sections[1:]]
    if unscored:
        body.append(f'<p class="note">No run has a value for {html_text(", ".join(unscored))}: not shown.</p>')
        body += [f'<p class="note">{html_text(note)}</p>' for m in unscored for note in unavailable_notes(runs, m)]
    profile = profile_chart(runs)
    if profile is not None:
        src = assets.image("profile.png", profile, "image/png")
        body.append('<h2 id="profile">Profile across benchmarks</h2>' + figure(
            "fig-profile", src, "profile across benchmarks", "Each family's headline score with its 95% interval; "
            "dashed marks: chance.", profile))
    body += [repeats_section(runs), paired_section(runs), files_section(family_files, assets), extra]
    if viewer:
        body.append(viewer_section(runs, assets))
    page = "\n".join(b for b in body if b)
    head = sections[0] if sections else ""
    glossary = glossary_html(runs)
    toc = "".join(f'<a href="#{a}">{html_text(t)}</a><br>' for a, t in [
        *((f"metric-{_anchor(m)}", metric_title(runs, m)) for m in metrics), ("glossary", "Glossary"),
        ("runs", "Runs"), ("settings", "Run settings and model"),
        ("profile", "Profile across benchmarks"), ("repeats", "Repeats"), ("paired", "Paired differences"),
        ("family", "The benchmark's own tables and figures"), ("audit", "Blind-solvability audit"),
        ("viewer", "Items")] if f'id="{a}"' in head + glossary + page or a in ("runs", "settings"))
    benchmarks = ", ".join(sorted({str(r.scores.run.benchmark) for r in runs}))
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        policy_meta(),
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>medtemporal report: {html_text(benchmarks)}</title><style>{CSS}</style></head><body>",
        f"<h1>{html_text(benchmarks)}: {len(runs)} run{'s' if len(runs) > 1 else ''}</h1>",
        head,  # the scores first: the headline metric's tables
        f'<nav class="toc">{toc}</nav>',
        f'<p class="note">{html_text(description(runs))}</p>',
        glossary,
        runs_section(runs),
        settings_section(runs),
        page,
        "</body></html>",
    ]) + "\n"
