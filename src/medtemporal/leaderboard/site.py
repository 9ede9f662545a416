"""The leaderboard as static HTML: pages that open from ``file://`` and any static host, no server and no fetch.

Tables are rendered here (every text from a run through the report's one escaping path,
`medtemporal.report.escaping`); the pages' small script only sorts and filters the rows already in the page, and each
page carries the report's Content-Security-Policy. The data a page carries inline is a JSON data block
(`escaping.data_block`), so no run's text can close the element.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from medtemporal.leaderboard.cells import Cell
from medtemporal.report.escaping import data_block, html_text, inline_script, policy_meta

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem auto;max-width:1400px;color:#222;
padding:0 1rem}
h1{font-size:1.5rem;margin:.2rem 0 .6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
h3{font-size:1rem;margin:1.2rem 0 .3rem}a{color:#0b57d0}
table{border-collapse:separate;border-spacing:0;font-variant-numeric:tabular-nums;margin:.4rem 0 1rem}
th,td{border-right:1px solid #d0d0d0;border-bottom:1px solid #d0d0d0;padding:.3rem .55rem;text-align:right;
vertical-align:top;background:#fff}
thead th{border-top:1px solid #d0d0d0;background:#f3f3f3;position:sticky;top:0;z-index:2}
td:first-child,th:first-child{text-align:left;border-left:1px solid #d0d0d0}
th.sortable{cursor:pointer;user-select:none}th.sortable:after{content:" \\2195";color:#999}
th[aria-sort=ascending]:after{content:" \\25B2";color:#333}th[aria-sort=descending]:after{content:" \\25BC";color:#333}
.v{font-weight:600;white-space:nowrap}.ci,.n{color:#555;font-size:.85em;white-space:nowrap}
.mark{display:inline-block;font-size:.75em;border-radius:3px;padding:0 .3em;margin:.1em .15em 0 0;white-space:nowrap}
.m-subset{background:#fff3cd;color:#6b4e00}.m-phantom{background:#e8e8e8;color:#333}
.m-protocol{background:#dbeafe;color:#1e3a8a}.m-yes{background:#d1fae5;color:#065f46}
.m-no{background:#fde2e1;color:#8a1c14}.m-primary{background:#e0e7ff;color:#312e81}
.m-re-print{background:#f3e8ff;color:#581c87}.m-secondary{background:#ffedd5;color:#7c2d12}
tbody.refs td{font-style:italic;color:#555;background:#fafafa}tr.pub td{background:#fcfcff}
.scroll{overflow-x:auto;max-width:100%}.note{color:#444;max-width:62rem}.small{font-size:.85em;color:#555}
.controls{display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:center;margin:.6rem 0}
.controls input[type=search]{padding:.3rem .5rem;min-width:14rem}
.reason{white-space:normal;text-align:left;max-width:32rem;font-size:.85em;color:#444}
td.wrap,td.left{white-space:normal;text-align:left;max-width:28rem}.sortby{display:none}
@media (max-width:700px){body{margin:.8rem auto;padding:0 .5rem}h1{font-size:1.25rem}
table.cards,table.cards tbody,table.cards tr,table.cards td{display:block;width:auto}
table.cards thead{display:none}table.cards tr{border:1px solid #d0d0d0;border-radius:4px;margin:0 0 .7rem}
table.cards td{border:none;border-bottom:1px solid #eee;text-align:left;padding:.3rem .5rem}
table.cards td:first-child{font-weight:600;background:#f3f3f3;border-left:none}
table.cards td[data-label]:not(:first-child):before{content:attr(data-label);display:block;font-size:.8em;color:#555}
table.cards td.empty{display:none}
.controls input[type=search]{min-width:0;width:100%}.sortby{display:inline}}
"""

JS = r"""
(function(){
function key(td){var v=td&&td.getAttribute('data-v');return v===null||v===''?null:parseFloat(v);}
function text(td){return td?td.textContent.trim().toLowerCase():'';}
document.querySelectorAll('table.sort').forEach(function(table){
 var heads=table.querySelectorAll('thead th');
 heads.forEach(function(th,col){
  if(!th.classList.contains('sortable'))return;
  th.setAttribute('tabindex','0');
  function go(){
   var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);
   var dir=th.getAttribute('aria-sort')==='descending'?'ascending':'descending';
   heads.forEach(function(h){h.removeAttribute('aria-sort');});th.setAttribute('aria-sort',dir);
   var sign=dir==='ascending'?1:-1,numeric=th.hasAttribute('data-numeric');
   rows.sort(function(a,b){
    var x=a.cells[col],y=b.cells[col];
    if(numeric){var p=key(x),q=key(y);if(p===null&&q===null)return 0;if(p===null)return 1;if(q===null)return -1;
     return sign*(p-q);}
    return sign*text(x).localeCompare(text(y));});
   rows.forEach(function(r){body.appendChild(r);});}
  th.addEventListener('click',go);
  th.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();go();}});
 });});
document.querySelectorAll('select.sortby').forEach(function(sel){
 sel.addEventListener('change',function(){var t=document.getElementById(sel.getAttribute('data-table'));
  var th=t&&t.tHead.rows[0].cells[+sel.value];if(th){th.removeAttribute('aria-sort');th.click();}});});
var box=document.getElementById('filter');
if(box){
 var checks=document.querySelectorAll('input[data-hide]');
 function apply(){
  var q=box.value.trim().toLowerCase(),hide=[];
  checks.forEach(function(c){if(c.checked)hide.push(c.getAttribute('data-hide'));});
  document.querySelectorAll('table.filtered tbody.runs tr').forEach(function(tr){
   var marks=(tr.getAttribute('data-marks')||'').split(' ');
   var show=(!q||tr.textContent.toLowerCase().indexOf(q)>=0)&&!hide.some(function(h){return marks.indexOf(h)>=0;});
   tr.hidden=!show;});
  var shown=document.querySelectorAll('table.filtered tbody.runs tr:not([hidden])').length;
  var count=document.getElementById('shown');if(count)count.textContent=shown;}
 box.addEventListener('input',apply);checks.forEach(function(c){c.addEventListener('change',apply);});apply();}
})();
"""
"""Sorting (click or Enter on a header; numbers from ``data-v``, empty cells last) and filtering (text, and the
marks a row carries) of the rows already in the page."""


def number(value: float | None, digits: int = 1) -> str:
    """A value with ``digits`` decimals; a dash when there is none."""
    return "–" if value is None else f"{value:.{digits}f}"


def interval(low: float | None, high: float | None, digits: int = 1) -> str:
    return "" if low is None or high is None else f"[{number(low, digits)}, {number(high, digits)}]"


def marks_html(cell: Cell) -> str:
    """The cell's marks: subset (with the full benchmark's n), phantom data, another protocol."""
    out = []
    if cell.subset:
        out.append(f'<span class="mark m-subset" title="{html_text(cell.subset)}">subset {cell.n:,} of '
                   f'{cell.full_n:,}</span>')
    if cell.phantom:
        out.append('<span class="mark m-phantom" title="the benchmark was built from synthetic data">phantom</span>')
    if cell.other_protocol:
        out.append(f'<span class="mark m-protocol" title="{html_text(cell.protocol)}">protocol</span>')
    return "".join(out)


def cell_html(cell: Cell, label: str, anchor: str, metric: str | None = None) -> str:
    """A front-page cell: value, interval, n, marks, and its metric where the column's is another; ``data-v`` for
    sorting."""
    other = f' <span class="small">{html_text(str(cell.metric))}</span>' if metric and cell.metric != metric else ""
    return (f'<td id="{html_text(anchor)}" data-v="{"" if cell.value is None else cell.value}" data-label="{html_text(label)}">'
            f'<span class="v">{number(cell.value)}</span> <span class="ci">{interval(cell.ci_low, cell.ci_high)}</span>'
            f'{other}<br><span class="n">n={cell.n:,}</span> {marks_html(cell)}</td>')


def page(title: str, body: str, data: Any, root: str = "") -> str:
    """A whole page: the stylesheet and script inline, the page's data as inline JSON."""
    script = inline_script(JS)
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">', policy_meta(),
        f"<title>{html_text(title)}</title><style>{CSS}</style></head><body>",
        f'<p class="small"><a href="{root}index.html">medtemporal leaderboard</a></p>', body,
        data_block("mt-data", data), script, "</body></html>"]) + "\n"


def slug(text: str) -> str:
    """``text`` as a file name or anchor: letters, digits, ``-`` and ``_``."""
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text).strip("-") or "x"


def front_page(families: Sequence[str], metrics: Mapping[str, str], rows: Mapping[str, Mapping[str, Cell]],
               models: Mapping[str, Any], references: Sequence[tuple[str, Mapping[str, dict[str, Any]]]],
               data: Any) -> str:
    """Models × families, each cell the family's headline; chance and the text-only floor below."""
    head = ['<th class="sortable" data-label="Model">Model</th>', '<th class="sortable">Size</th>',
            '<th class="sortable">Backend</th>',
            *(f'<th class="sortable" data-numeric><a href="family/{slug(f)}.html">{html_text(f)}</a><br>'
              f'<span class="small">{html_text(metrics.get(f, ""))}</span></th>' for f in families)]
    body = []
    for row, cells in rows.items():
        model = models[row]
        marks = " ".join(sorted({m for c in cells.values() for m in c.marks}))
        tds = [f'<td data-label="Model">{html_text(row)}</td>',
               f'<td data-label="Size"{"" if model.size else " class=empty"}>{html_text(model.size) or "–"}</td>',
               f'<td data-label="Backend">{html_text(model.backend) or "–"}</td>']
        for f in families:
            c = cells.get(f)
            tds.append(cell_html(c, f, f"c-{slug(f)}-{slug(row)}", metrics.get(f)) if c else
                       f'<td class="empty" data-v="" data-label="{html_text(f)}">–</td>')
        body.append(f'<tr data-marks="{html_text(marks)}">{"".join(tds)}</tr>')
    ref_rows = []
    for name, values in references:
        tds = [f'<td data-label="Model">{html_text(name)}</td>', '<td class="empty"></td>', '<td class="empty"></td>']
        for f in families:
            v = values.get(f)
            tds.append('<td class="empty">–</td>' if not v else
                       f'<td data-label="{html_text(f)}" title="{html_text(v.get("what", ""))}"><span class="v">'
                       f'{number(v["value"])}</span> <span class="ci">{interval(v.get("ci_low"), v.get("ci_high"))}'
                       "</span></td>")
        ref_rows.append(f'<tr>{"".join(tds)}</tr>')
    controls = ('<div class="controls"><input type="search" id="filter" placeholder="filter models, backends…" '
                'aria-label="filter rows"> <label><input type="checkbox" data-hide="phantom"> hide phantom runs</label>'
                ' <label><input type="checkbox" data-hide="subset"> hide subsets</label>'
                ' <span class="small"><span id="shown"></span> rows shown</span> <select class="sortby" '
                'data-table="board" aria-label="sort by"><option value="">sort by…</option>'
                + "".join(f'<option value="{k + 3}">{html_text(f)}</option>' for k, f in enumerate(families))
                + "</select></div>")
    return page("medtemporal leaderboard", "".join([
        "<h1>Temporal reasoning: every model × every family</h1>",
        '<p class="note">Each cell is the family\'s headline as its report defines it (the metric under the family\'s '
        "name), × 100, with its 95% interval clustered by patient and n. Marks: <b>subset</b> (a run on part of the "
        "benchmark: its n of the full benchmark's), <b>phantom</b> (a benchmark built from synthetic data: a layout, "
        "not a result), <b>protocol</b> (another protocol than the family's default). Chance and the text-only floor "
        "are the last rows. Click a header to sort; each family's page has its runs, the published rows and which "
        'models differ significantly. Every cell: <a href="cells.csv">cells.csv</a>, '
        '<a href="leaderboard.json">leaderboard.json</a>.</p>',
        controls,
        '<div class="scroll"><table class="sort filtered cards" id="board"><thead><tr>', "".join(head),
        '</tr></thead><tbody class="runs">', "".join(body), '</tbody><tbody class="refs">', "".join(ref_rows),
        "</tbody></table></div>"]), data)


def runs_table(cells: Sequence[Cell]) -> str:
    """A family's runs: model, protocol, headline with interval, n of the full benchmark, marks, temperature."""
    rows = []
    for c in cells:
        rows.append(
            f'<tr data-marks="{html_text(" ".join(c.marks))}" id="run-{slug(c.row)}">'
            f'<td data-label="Run">{html_text(c.row)}</td><td data-label="Model" class="left">{html_text(c.model.name)}'
            f'{"<br><span class=small>" + html_text(c.model.size) + "</span>" if c.model.size else ""}</td>'
            f'<td data-label="Protocol" class="wrap">{html_text(c.protocol)}</td>'
            f'<td data-v="{"" if c.value is None else c.value}" data-label="{html_text(str(c.metric))}">'
            f'<span class="v">{number(c.value)}</span> <span class="ci">{interval(c.ci_low, c.ci_high)}</span></td>'
            f'<td data-v="{c.n}" data-label="n">{c.n:,} of {c.full_n:,}</td>'
            f'<td data-label="Marks">{marks_html(c) or "–"}</td>'
            f'<td data-label="Temperature">{"–" if c.temperature is None else c.temperature}</td>'
            f'<td data-label="Folder" class="wrap small">{html_text(c.path)}</td></tr>')
    metric = next((c.metric for c in cells if c.metric), "")
    return ('<div class="scroll"><table class="sort filtered cards" id="runs"><thead><tr>'
            '<th class="sortable">Run</th><th class="sortable">Model</th><th class="sortable">Protocol</th>'
            f'<th class="sortable" data-numeric>{html_text(str(metric))} (× 100) [95% CI]</th>'
            '<th class="sortable" data-numeric>n of full</th><th>Marks</th><th>Temperature</th><th>Folder</th>'
            f'</tr></thead><tbody class="runs">{"".join(rows)}</tbody></table></div>')


def published_html(table: Mapping[str, Any], k: int) -> str:
    """One published table in its paper's layout: the published rows labelled with source and provenance, then the
    runs in the same columns and units (%), each marked comparable or not, with the reasons."""
    cols = table["columns"]
    cond = table.get("conditions") or {}
    head = "".join(f"<th>{html_text(c['label'])}</th>" for c in cols)
    rows = []
    for r in table["rows"]:
        source = f"{table['source']} line {r['line']}" if table.get("source") else ""
        tds = "".join(f'<td data-label="{html_text(c["label"])}">{number(v, d)}</td>'
                      for c, v, d in zip(cols, r["values"], table["digits"]))
        rows.append(f'<tr class="pub"><td data-label="Model">{html_text(r["model"])} '
                    f'<span class="mark m-{html_text(table["provenance"])}">{html_text(table["provenance"])}</span>'
                    f'<br><span class="small">published{", " + html_text(source) if source else ""}'
                    f'{" · " + html_text(r["section"]) if r.get("section") else ""}</span></td>{tds}'
                    '<td data-label="Comparable">–</td></tr>')
    for r in table["runs"]:
        tds = "".join(f'<td data-label="{html_text(c["label"])}">{number(v, d)}</td>'
                      for c, v, d in zip(cols, r["values"], table["digits"]))
        verdict = ('<span class="mark m-yes">comparable</span>' if r["comparable"] else
                   '<span class="mark m-no">not comparable</span><div class="reason">'
                   + html_text("; ".join(r["reasons"])) + "</div>")
        temp = f'<div class="reason">{html_text(r["temperature_note"])}</div>' if r.get("temperature_note") else ""
        rows.append(f'<tr><td data-label="Run">{html_text(r["label"])}</td>{tds}'
                    f'<td data-label="Comparable" class="wrap">{verdict}{temp}</td></tr>')
    conditions = "".join(f"<li>{label}: {html_text(str(cond[key]))}</li>" for key, label in (
        ("test_set", "Test set"), ("section", "Section"), ("protocol", "Protocol"), ("metrics", "Metric implementation"),
        ("temperature", "Temperature")) if cond.get(key) is not None and cond.get(key) != "")
    return (f'<h3 id="published-{k}">{html_text(table["paper"])}, {html_text(table["name"])}: {html_text(table["caption"])} '
            f'<span class="mark m-{html_text(table["provenance"])}">{html_text(table["provenance"])}</span></h3>'
            f'<p class="note">Setting: {html_text(table["setting"])}.'
            f'{" <b>" + html_text(table["note"]) + ".</b>" if table.get("note") else ""}</p>'
            f'<ul class="small">{conditions}</ul>'
            f'<div class="scroll"><table class="cards"><thead><tr><th>Model</th>{head}<th>Comparable</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def pairwise_html(pairs: Sequence[Mapping[str, Any]]) -> str:
    """The pairwise table: A − B on the headline, interval, McNemar p, whether they differ significantly."""
    if not pairs:
        return '<p class="note">One run only: nothing to compare.</p>'
    rows = []
    for p in pairs:
        if "error" in p:
            rows.append(f'<tr><td data-label="A">{html_text(p["a"])}</td><td data-label="B">{html_text(p["b"])}</td>'
                        f'<td colspan="5" class="wrap">{html_text(p["error"])}</td></tr>')
            continue
        verdict = '<span class="mark m-yes">differ</span>' if p["significant"] else "no significant difference"
        pv = "–" if p.get("p_mcnemar") is None else f"{p['p_mcnemar']:.3g}"
        rows.append(f'<tr><td data-label="A">{html_text(p["a"])}</td><td data-label="B">{html_text(p["b"])}</td>'
                    f'<td data-label="n (common items)">{p["n"]:,}</td>'
                    f'<td data-label="A − B" data-v="{p["diff"]}">{number(p["diff"])} '
                    f'<span class="ci">{interval(p.get("ci_low"), p.get("ci_high"))}</span></td>'
                    f'<td data-label="McNemar p">{pv}</td><td data-label="Verdict">{verdict}</td>'
                    f'<td data-label="Note" class="wrap small">{html_text(p.get("note", ""))}</td></tr>')
    return ('<div class="scroll"><table class="sort cards" id="pairwise"><thead><tr><th class="sortable">A</th>'
            '<th class="sortable">B</th><th>n (common items)</th><th class="sortable" data-numeric>A − B [95% CI]</th>'
            f'<th>McNemar p</th><th>Verdict</th><th>Note</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def family_page(family: str, description: str, cells: Sequence[Cell], tables: Sequence[Mapping[str, Any]],
                none: str | None, pairs: Sequence[Mapping[str, Any]], data: Any) -> str:
    """A family's page: its runs' headlines, the published tables beside them, the pairwise tests."""
    phantoms = [c.row for c in cells if c.phantom]
    caution = (f'<p class="note"><b>Caution:</b> {len(phantoms)} of {len(cells)} runs answered a benchmark built from '
               "phantoms (synthetic data): their numbers show the layout, not a result to compare with published "
               "rows.</p>") if phantoms else ""
    published = ("".join(published_html(t, k) for k, t in enumerate(tables)) if tables else
                 f'<p class="note">No published rows: {html_text(none or "none were transcribed")}.</p>')
    controls = ('<div class="controls"><input type="search" id="filter" placeholder="filter runs…" '
                'aria-label="filter rows"> <label><input type="checkbox" data-hide="subset"> hide subsets</label> '
                '<span class="small"><span id="shown"></span> rows shown</span></div>')
    return page(f"{family}: medtemporal leaderboard", "".join([
        f"<h1>{html_text(family)}</h1>", f'<p class="note">{html_text(description)}</p>', caution,
        '<h2 id="runs-h">Runs: the headline</h2>', controls, runs_table(cells),
        '<h2 id="published">Published results beside the runs (× 100)</h2>',
        '<p class="note">Published rows as printed, in percent (fractions × 100), each labelled with its source and '
        "provenance (<b>primary</b>: the authors' own artefact; <b>re-print</b>: a later paper's table; "
        "<b>secondary</b>: a third party quoting a paper). A run is <b>comparable</b> only when its test set, section "
        "and protocol match the table's and it has every column the paper's metric implementation fills; the "
        "reasons are listed otherwise.</p>", published,
        '<h2 id="pairwise-h">Which runs differ significantly</h2>',
        '<p class="note">Paired on the items both runs answered: A − B on the headline (× 100), a 95% interval from '
        "a bootstrap resampling patients, and McNemar's exact p for accuracy; they differ when the interval excludes "
        "0 (and p &lt; 0.05 for accuracy).</p>", pairwise_html(pairs)]), data, root="../")
