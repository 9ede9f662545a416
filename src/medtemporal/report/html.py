"""A self-contained HTML report: inline CSS, charts embedded as base64 PNG, no external URLs."""

from __future__ import annotations

import base64
from html import escape
from typing import Mapping, Sequence

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
)

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
"""


def _cell(text: str, tag: str = "td", attrs: str = "") -> str:
    return f"<{tag}{attrs}>{escape(text)}</{tag}>"


def _grouped_table(runs: Sequence[ReportRun], columns: Sequence[TableColumn], metric: str) -> str:
    """A table whose header spans each family over its columns (the Table 1 look)."""
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
    for row in table_rows(runs, columns, metric):
        css = ' class="chance"' if row[0] == "Chance" else ""
        body.append(f"<tr{css}>" + "".join(_cell(c) for c in row) + "</tr>")
    return f"<table><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"


def _plain_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(_cell(h, "th") for h in header)
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_page(runs: Sequence[ReportRun], charts: Mapping[str, Mapping[str, bytes]]) -> str:
    """The report as one HTML document with everything inline.

    Args:
        runs: The runs in the report.
        charts: Metric → family → PNG of its chart (`family_charts`), drawn once for HTML and PNG files.
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
    ]
    for metric in metric_names(runs):
        unit = " (%)" if is_percent(runs, metric) else ""
        parts += [
            f"<h2>{escape(metric)}{unit} by task family</h2>",
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
                    f'src="data:image/png;base64,{data}"><figcaption>{escape(family)}: bars with 95% '
                    "intervals; dashed lines mark chance.</figcaption></figure>"
                )
            parts.append("</div>")
        header, rows = subtype_rows(runs, metric)
        parts += [f"<h2>{escape(metric)}{unit} by subtype</h2>", _plain_table(header, rows)]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
