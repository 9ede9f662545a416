"""A self-contained HTML report: inline CSS, charts embedded as base64 PNG, no external URLs.

Sections: runs and their settings; per metric the family and paper-layout tables (each run's cell links
to its items in the viewer), charts and the subtype table; repeats; paired differences against the first
run; the benchmark's own tables and figures; the per-item viewer (`medtemporal.report.viewer`).
"""

from __future__ import annotations

import base64
from html import escape
from pathlib import Path
from typing import Mapping, Sequence
from urllib.parse import quote

from medtemporal.report.tables import (
    DASH,
    ReportRun,
    TableColumn,
    column_title,
    description,
    family_columns,
    is_percent,
    metric_names,
    protocol_label,
    subtype_columns,
    subtype_rows,
    table_rows,
    unavailable_notes,
)
from medtemporal.report.plots import family_subtypes, has_chance
from medtemporal.report.profile import profile_chart
from medtemporal.report.sections import files_section, paired_section, repeats_section, settings_section
from medtemporal.report.viewer import VIEWER_CSS, viewer_section

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1200px;
color:#222;padding:0 1rem}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.6rem 0 1rem;font-variant-numeric:tabular-nums}
th,td{border:1px solid #d0d0d0;padding:.25rem .55rem;text-align:right;white-space:nowrap}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
tr.chance td{font-style:italic;color:#555;background:#fafafa}
.note{color:#444;max-width:60rem}.charts{display:flex;flex-wrap:wrap;gap:1rem}
figure{margin:0;max-width:100%}figure img{max-width:100%;height:auto}figcaption{font-size:.85rem;color:#555}
.scroll{overflow-x:auto;max-width:100%}td a{color:inherit;text-decoration:none;border-bottom:1px dotted #888}
.warn{color:#9a6700}
""" + VIEWER_CSS


def _cell(text: str, tag: str = "td", attrs: str = "") -> str:
    return f"<{tag}{attrs}>{escape(text)}</{tag}>"


def _grouped_table(runs: Sequence[ReportRun], columns: Sequence[TableColumn], metric: str) -> str:
    """A table whose header spans each family over its columns (the Table 1 look); a run's cell links to
    its items in the viewer."""
    top, bottom = ['<th rowspan="2">Run</th>'], []
    k = 0
    while k < len(columns):
        family = columns[k].family
        span = 1
        while k + span < len(columns) and columns[k + span].family == family and family:
            span += 1
        if not family or (span == 1 and columns[k].label == family):
            top.append(_cell(column_title(columns[k]), "th", ' rowspan="2"'))
        else:
            top.append(_cell(family, "th", f' colspan="{span}"'))
            bottom += [_cell(c.label, "th") for c in columns[k : k + span]]
        k += span
    top += ['<th rowspan="2">Invalid</th>', '<th rowspan="2">Missing</th>']
    head = f"<tr>{''.join(top)}</tr><tr>{''.join(bottom)}</tr>"
    if not bottom:  # no family spans columns: one header row
        head = "<tr>" + "".join(top).replace(' rowspan="2"', "") + "</tr>"
    body = []
    for k, row in enumerate(table_rows(runs, columns, metric)):
        if k >= len(runs):  # the chance row
            body.append('<tr class="chance">' + "".join(_cell(c) for c in row) + "</tr>")
            continue
        cells = [_cell(row[0])]
        for column, text in zip(columns, row[1 : 1 + len(columns)]):
            if text == DASH:
                cells.append(_cell(text))
            else:
                href = f"#view:run={k}&group={quote(column.group, safe=':/')}"
                cells.append(f'<td><a href="{escape(href)}" title="see these items">{escape(text)}</a></td>')
        cells += [_cell(c) for c in row[1 + len(columns) :]]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table><thead>{head}</thead><tbody>{"".join(body)}</tbody></table></div>'


def _chart_caption(runs: Sequence[ReportRun], family: str, metric: str) -> str:
    """What the chart shows; chance lines are named only where drawn."""
    subtypes = family_subtypes(runs, metric).get(family, [])
    chance = "; dashed lines mark chance" if has_chance(runs, subtypes, metric) else ""
    return f"{family}: bars with 95% intervals{chance}."


def _plain_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(_cell(h, "th") for h in header)
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def html_page(
    runs: Sequence[ReportRun],
    charts: Mapping[str, Mapping[str, bytes]],
    *,
    family_files: Sequence[Path] = (),
    viewer: bool = True,
) -> str:
    """The report as one HTML document with everything inline.

    Args:
        runs: The runs in the report.
        charts: Metric → family → PNG of its chart (`family_charts`), drawn once for HTML and PNG files.
        family_files: Files the benchmark's own report writer made (``.md`` tables, ``.png`` figures), shown inline.
        viewer: Add the per-item viewer.
    """
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>medtemporal report</title><style>{CSS}</style></head><body>",
        "<h1>medtemporal report</h1>",
        f'<p class="note">{escape(description(runs))}</p>',
        "<h2>Runs</h2>",
        _plain_table(
            ["Run", "Model", "Protocol", "Items", "Answered", "Invalid", "Missing", "Truncated", "Folder"],
            [[r.label, str(r.scores.run.get("model")), protocol_label(r.scores),
              *(str(r.scores.counts.get(k, DASH)) for k in ("items", "answered", "invalid", "missing", "truncated")),
              str(r.path)] for r in runs],
        ),
        settings_section(runs),
    ]
    for metric in metric_names(runs):
        unit = " (%)" if is_percent(runs, metric) else ""
        parts += [
            f"<h2>{escape(metric)}{unit} by task family</h2>",
            *(f'<p class="note">{escape(note)}</p>' for note in unavailable_notes(runs, metric)),
            _grouped_table(runs, family_columns(runs, metric), metric),
            f"<h2>{escape(metric)}{unit}: by family and subtype, in the papers' table layout</h2>",
            _grouped_table(runs, subtype_columns(runs, metric), metric),
        ]
        pngs = charts.get(metric, {})
        if pngs:
            parts.append(f"<h2>{escape(metric)} by subtype: charts</h2><div class=\"charts\">")
            for family, png in pngs.items():
                data = base64.b64encode(png).decode("ascii")
                parts.append(
                    f'<figure><img alt="{escape(metric)} by subtype, {escape(family)}" '
                    f'src="data:image/png;base64,{data}"><figcaption>{escape(_chart_caption(runs, family, metric))}'
                    "</figcaption></figure>"
                )
            parts.append("</div>")
        header, rows = subtype_rows(runs, metric)
        parts += [f"<h2>{escape(metric)}{unit} by subtype</h2>", _plain_table(header, rows)]
    profile = profile_chart(runs)
    if profile is not None:
        data = base64.b64encode(profile).decode("ascii")
        parts.append('<h2>Profile across benchmarks</h2><figure><img alt="profile across benchmarks" '
                     f'src="data:image/png;base64,{data}"><figcaption>Each family\'s headline score with its 95% '
                     "interval; dashed marks: chance.</figcaption></figure>")
    parts += [repeats_section(runs), paired_section(runs), files_section(family_files)]
    if viewer:
        parts.append(viewer_section(runs))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
