"""The per-item viewer of the HTML report: every answer of every run, filterable, with its images and prompt.

For each run and repeat the viewer lists the items with the image timeline
as thumbnails and their visit labels, the prompt as sent (the rendered text
the runner recorded in `Prediction.prompt`; images as references), the raw
output, the extracted answer and the rule that decided it, the gold answer,
and whether it was right. Filters: run, task, subtype, correctness and
status (answered / invalid / missing); a table cell of the report links to
its items through the page's address (``#view:run=0&group=task:TEL``). The
list is virtualised (only the rows in sight are in the page), so a run of
thousands of items stays fast; each distinct image is made into a thumbnail
once per page and shared by every item that shows it.

Everything is inline (data as JSON, thumbnails as small JPEG data URIs); the
page's script builds the DOM with ``textContent`` only, so no model output can
inject markup.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any, Sequence

from PIL import Image

from medtemporal.report.tables import ReportRun
from medtemporal.scoring.extraction import rule_id, rule_name
from medtemporal.scoring.metrics import is_correct
from medtemporal.scoring.runs import load_outcomes

THUMB_PX = 96
"""Longest side of a thumbnail, in pixels."""


class Thumbnails:
    """Image path → thumbnail id, each distinct image read and shrunk once."""

    def __init__(self, size: int = THUMB_PX) -> None:
        self.size = size
        self.ids: dict[Path, int | None] = {}
        self.data: list[str] = []

    def add(self, path: Path) -> int | None:
        """The thumbnail id of ``path`` (made on first sight), or None when the image cannot be read."""
        if path not in self.ids:
            self.ids[path] = self._make(path)
        return self.ids[path]

    def _make(self, path: Path) -> int | None:
        try:
            with Image.open(path) as im:
                im.draft("L", (self.size, self.size))  # JPEG: decode at reduced size
                im = im.convert("L") if im.mode in ("L", "I", "I;16", "F") else im.convert("RGB")
                im.thumbnail((self.size, self.size))
                buffer = io.BytesIO()
                im.save(buffer, format="JPEG", quality=70)
        except (OSError, SyntaxError, ValueError, Image.DecompressionBombError):
            return None
        self.data.append("data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii"))
        return len(self.data) - 1


def _answer_text(answer: Any) -> str | None:
    if answer is None:
        return None
    return " → ".join(answer) if isinstance(answer, list) else str(answer)


def viewer_data(runs: Sequence[ReportRun], thumbs: Thumbnails | None = None) -> dict[str, Any]:
    """The viewer's data: ``runs`` (labels, repeats, column groups), ``items`` (shared by runs), ``rows``
    (one per run, repeat and item) and ``thumbs`` (data URIs)."""
    thumbs = thumbs or Thumbnails()
    items: dict[str, int] = {}
    item_rows: list[dict[str, Any]] = []
    rows: list[list[Any]] = []
    run_info = []
    for k, run in enumerate(runs):
        loaded = load_outcomes(run.path)
        root = loaded.bench.image_root
        groups = {c.group: c.subtypes for t in run.scores.layout for c in t.columns}
        run_info.append({"label": run.label, "repeats": len(loaded.by_repeat), "groups": groups})
        for item in loaded.items:
            if item.id in items:
                continue
            items[item.id] = len(item_rows)
            item_rows.append({
                "id": item.id, "task": item.task, "subtype": item.subtype, "patient": item.cluster,
                "gold": _answer_text(item.answer) if item.answer_type != "open" else item.answer,
                "question": item.question, "options": item.options,
                "images": [[thumbs.add(root / ref.path), ref.label or (f"T{ref.visit}" if ref.visit else ""),
                            ref.path] for ref in item.images],
            })
        for r, outcomes in enumerate(loaded.by_repeat):
            for outcome in outcomes:
                item = outcome.item
                p = loaded.latest.get((item.id, r))
                closed = item.answer_type != "open"
                correct = is_correct(item, outcome.answer) if closed and outcome.status == "answered" else (
                    False if closed else None)
                rows.append([
                    k, r, items[item.id], outcome.status, correct, _answer_text(outcome.answer),
                    rule_id(rule_name(item)) if outcome.status != "missing" else None,
                    p.raw_output if p is not None else None,
                    list(p.prompt) if p is not None and p.prompt else None,
                    p.error if p is not None else None,
                ])
    return {"runs": run_info, "items": item_rows, "rows": rows, "thumbs": thumbs.data,
            "fields": ["run", "repeat", "item", "status", "correct", "answer", "rule", "raw", "prompt", "error"]}


VIEWER_CSS = """
#viewer .filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.5rem 0}
#viewer select{font:inherit}#viewer .count{color:#444}
#vlist{height:420px;overflow-y:auto;border:1px solid #ccc;position:relative}#vinner{position:relative}
#vlist .row{position:absolute;left:0;right:0;height:28px;line-height:28px;padding:0 .5rem;cursor:pointer;
white-space:nowrap;overflow:hidden;text-overflow:ellipsis;border-bottom:1px solid #eee;font-size:13px}
#vlist .row:hover,#vlist .row.sel{background:#eef4ff}
.ok{color:#1a7f37}.bad{color:#b42318}.inv{color:#9a6700}
#vdetail{border:1px solid #ccc;border-top:none;padding:.6rem;min-height:6rem}
#vdetail pre{white-space:pre-wrap;background:#f7f7f7;padding:.4rem;margin:.2rem 0 .6rem;max-height:22rem;overflow:auto}
.timeline{display:flex;gap:.4rem;flex-wrap:wrap}.timeline figure{text-align:center}
.timeline img{width:96px;height:96px;object-fit:contain;background:#000}
.chip{display:inline-block;border:1px solid #aaa;border-radius:3px;padding:0 .3rem;margin:.1rem;font-size:12px}
"""

VIEWER_JS = r"""
(function(){
const D=JSON.parse(document.getElementById('viewer-data').textContent);
const H=28,list=document.getElementById('vlist'),inner=document.getElementById('vinner'),
detail=document.getElementById('vdetail'),count=document.getElementById('vcount');
const F={run:document.getElementById('f-run'),task:document.getElementById('f-task'),
subtype:document.getElementById('f-subtype'),correct:document.getElementById('f-correct'),
status:document.getElementById('f-status')};
function opt(sel,value,text){const o=document.createElement('option');o.value=value;o.textContent=text;sel.appendChild(o);}
D.runs.forEach((r,k)=>opt(F.run,String(k),r.label+(r.repeats>1?' ('+r.repeats+' repeats)':'')));
[...new Set(D.items.map(i=>i.task))].forEach(t=>opt(F.task,t,t));
[...new Set(D.items.map(i=>i.subtype))].forEach(s=>opt(F.subtype,s,s));
let groupSubtypes=null,shown=[],selected=-1;
function el(tag,text,cls){const e=document.createElement(tag);if(text!=null)e.textContent=text;if(cls)e.className=cls;return e;}
function mark(row){if(row[3]==='missing')return['missing','bad'];if(row[3]==='invalid')return['invalid','inv'];
 if(row[4]===null)return['scored','']; return row[4]?['right','ok']:['wrong','bad'];}
function apply(){
 const run=F.run.value,task=F.task.value,sub=F.subtype.value,cor=F.correct.value,st=F.status.value;
 shown=[];
 D.rows.forEach((row,n)=>{const it=D.items[row[2]];
  if(run!==''&&String(row[0])!==run)return; if(task!==''&&it.task!==task)return;
  if(sub!==''&&it.subtype!==sub)return; if(groupSubtypes&&!groupSubtypes.includes(it.subtype))return;
  if(cor==='right'&&row[4]!==true)return; if(cor==='wrong'&&row[4]!==false)return;
  if(st!==''&&row[3]!==st)return; shown.push(n);});
 count.textContent=shown.length+' of '+D.rows.length+' answers';
 inner.style.height=(shown.length*H)+'px'; list.scrollTop=0; draw();
 if(shown.length)show(shown[0]);else{detail.textContent='No answer matches the filters.';}
}
function draw(){
 const first=Math.max(0,Math.floor(list.scrollTop/H)-5),last=Math.min(shown.length,first+Math.ceil(list.clientHeight/H)+10);
 inner.replaceChildren();
 for(let k=first;k<last;k++){const n=shown[k],row=D.rows[n],it=D.items[row[2]],m=mark(row);
  const d=el('div',null,'row'+(n===selected?' sel':''));d.style.top=(k*H)+'px';d.dataset.n=n;
  d.append(el('span',m[0],m[1]),' · '+D.runs[row[0]].label+(D.runs[row[0]].repeats>1?' #'+(row[1]+1):'')+' · '+
   it.task+' / '+it.subtype+' · answer '+(row[5]??'–')+' · gold '+(typeof it.gold==='string'&&it.gold.length<40?it.gold:'(text)')+' · '+it.id);
  inner.appendChild(d);}
}
function section(title){detail.appendChild(el('h3',title));}
function show(n){selected=n;const row=D.rows[n],it=D.items[row[2]],m=mark(row);detail.replaceChildren();
 const head=el('p');head.append(el('strong',m[0],m[1]),' — '+D.runs[row[0]].label+', repeat '+(row[1]+1)+', item '+it.id+
  ', patient '+it.patient+', '+it.task+' / '+it.subtype);detail.appendChild(head);
 section('Images');const tl=el('div',null,'timeline');
 it.images.forEach(([t,label,path])=>{const f=el('figure');if(t!==null){const i=el('img');i.src=D.thumbs[t];i.alt=label||path;f.appendChild(i);}
  else f.appendChild(el('span','(image not found) '+path,'chip'));f.appendChild(el('figcaption',label||''));tl.appendChild(f);});
 detail.appendChild(tl);
 section('Prompt as sent');
 if(row[8]){row[8].forEach(msg=>{detail.appendChild(el('div',msg.role,'chip'));const pre=el('pre');
  msg.parts.forEach(p=>{if('text' in p)pre.append(p.text+'\n');else{pre.append(el('span','[image '+p.image+']','chip'),'\n');}});
  detail.appendChild(pre);});}
 else{detail.appendChild(el('pre',it.question+'\n'+Object.entries(it.options).map(([k,v])=>k+'. '+v).join('\n')));
  detail.appendChild(el('p','(this run did not record its rendered prompt; the item question is shown)'));}
 section('Raw output');detail.appendChild(el('pre',row[7]??(row[9]?'error: '+row[9]:'(none)')));
 section('Extracted answer');detail.appendChild(el('p',(row[5]??'none (invalid or missing)')+(row[6]?'  — rule '+row[6]:'')));
 section('Gold answer');detail.appendChild(el('pre',typeof it.gold==='string'?it.gold:JSON.stringify(it.gold)));
 draw();}
list.addEventListener('scroll',draw);
list.addEventListener('click',e=>{const d=e.target.closest('.row');if(d)show(+d.dataset.n);});
Object.values(F).forEach(s=>s.addEventListener('change',()=>{groupSubtypes=null;apply();}));
function fromHash(){const h=decodeURIComponent(location.hash||'');if(!h.startsWith('#view:'))return false;
 const q=new URLSearchParams(h.slice(6));Object.values(F).forEach(s=>s.value='');groupSubtypes=null;
 for(const [k,v] of q){if(k==='group'){const run=D.runs[+(q.get('run')||0)];
   if(v.startsWith('task:'))F.task.value=v.slice(5);else if(v.startsWith('subtype:'))F.subtype.value=v.slice(8);
   else if(run&&run.groups[v])groupSubtypes=run.groups[v];}
  else if(F[k])F[k].value=v;}
 apply();document.getElementById('viewer').scrollIntoView();return true;}
window.addEventListener('hashchange',fromHash);
if(!fromHash())apply();
})();
"""


def viewer_section(runs: Sequence[ReportRun]) -> str:
    """The viewer as an HTML section (filters, list, detail pane, data and script)."""
    data = json.dumps(viewer_data(runs), ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    selects = "".join(
        f'<label>{label} <select id="f-{key}"><option value="">all</option>{extra}</select></label>'
        for key, label, extra in (
            ("run", "Run", ""), ("task", "Task", ""), ("subtype", "Subtype", ""),
            ("correct", "Correct", '<option value="right">right</option><option value="wrong">wrong</option>'),
            ("status", "Status", '<option value="answered">answered</option><option value="invalid">invalid</option>'
                                 '<option value="missing">missing</option>'),
        )
    )
    return (
        '<section id="viewer"><h2>Items: every answer, as the model saw and gave it</h2>'
        '<p class="note">Pick filters, or follow a table cell’s link; click a row to see its images, the '
        "prompt as sent, the raw output, the extracted answer with its rule, and the gold answer.</p>"
        f'<div class="filters">{selects}<span class="count" id="vcount"></span></div>'
        '<div id="vlist"><div id="vinner"></div></div><div id="vdetail"></div>'
        f'<script type="application/json" id="viewer-data">{data}</script>'
        f"<script>{VIEWER_JS}</script></section>"
    )
