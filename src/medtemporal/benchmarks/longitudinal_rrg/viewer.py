"""The family's per-item viewer: prior study, current study and each run's report side by side.

One page (``<family>_viewer.html``) lists the items (filter by task, prior and run; search a study or patient
id). Opening one shows three columns: the **prior study** (its images and its report), the **current study**
(its images and the reference report) and the **generated** reports of every run, each with its Temporal Entity
F1. The temporal words each text names (Libra's keywords where the metric finds them,
`medtemporal.scoring.clinical.temporal.temporal_spans`; colours by the sets it compares) are marked: blue
in the reference; in a generated report green where the reference names the word too, orange where it does not
(a change the reference does not state); underlined in the prior report.

The page holds the list (``#item=N`` in its address opens item N); each block of `BLOCK` items (texts, marks,
thumbnails as data URIs) is a small script beside it (``<family>_viewer-K.js``), loaded when a row of the block
is opened, so a 4,000-item benchmark opens at once, from ``file://`` as from ``medtemporal view``. The page
builds the DOM with ``textContent`` only.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from PIL import Image

from medtemporal.report.family import data_block, html_text, inline_script, policy_meta, script_json
from medtemporal.schema import Item
from medtemporal.scoring.clinical.temporal import temporal_entities, temporal_spans

BLOCK = 100
"""Items per data block."""
THUMB_PX = 128
"""Longest side of a thumbnail, in pixels."""


@dataclass(frozen=True)
class RunAnswers:
    """One run's generated report and Temporal Entity F1 for each item (None where it has none)."""

    label: str
    texts: dict[str, str | None]
    """Item id → the text scored (the extracted section), None where invalid or missing."""
    tef1: dict[str, float | None]


def marks(text: str, other: set[str] | None, mine: str) -> list[list[Any]]:
    """``[start, end, class]`` of each temporal word in ``text`` (`temporal_spans`): class ``both`` where ``other``
    (the other side's `temporal_entities`) holds the word too, ``mine`` otherwise.

    >>> marks("New effusion, unchanged edema.", {"new"}, "extra")
    [[0, 3, 'both'], [14, 23, 'extra']]
    """
    return [[a, b, "both" if other is not None and word in other else mine] for a, b, word in temporal_spans(text)]


def _thumb(path: Path) -> str | None:
    """A JPEG data URI of the image at ``path`` at most `THUMB_PX` on its longest side; None when unreadable."""
    try:
        with Image.open(path) as im:
            im.draft("L", (THUMB_PX, THUMB_PX))
            small = im.convert("L")
            small.thumbnail((THUMB_PX, THUMB_PX))
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        return None
    buf = io.BytesIO()
    small.save(buf, format="JPEG", quality=75)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _detail(item: Item, runs: Sequence[RunAnswers], root: Path, thumbs: dict[str, str | None]) -> dict[str, Any]:
    """What the page shows when ``item`` is opened (module doc)."""
    def images(role: str) -> list[list[Any]]:
        out = []
        for ref in (r for r in item.images if r.role == role):
            if ref.path not in thumbs:
                thumbs[ref.path] = _thumb(root / ref.path)
            out.append([ref.label or ref.path, thumbs[ref.path]])
        return out

    reference = str(item.reference or item.answer)
    ref_words = temporal_entities(reference)
    generated = []
    for run in runs:
        text = run.texts.get(item.id)
        generated.append([run.label, text, marks(text or "", ref_words, "extra"), run.tef1.get(item.id)])
    prior = item.meta.get("prior")
    prior_text = prior["report"] if prior else None
    return {
        "prior": None if prior is None else {"interval": prior["interval"], "images": images("historical"),
                                             "report": prior_text,
                                             "marks": marks(prior_text or "", None, "prior")},
        "current": {"images": images("current"), "reference": reference,
                    "marks": marks(reference, None, "reference")},
        "generated": generated,
    }


def viewer_files(items: Sequence[Item], runs: Sequence[RunAnswers], image_root: Path, page: str,
                 prefix: str = "") -> dict[str, str]:
    """The viewer's files by name: ``page`` (the HTML) and its data blocks (``<page stem>-K.js``), which the page
    loads as ``prefix`` + name (the names its writer gives them). Items are listed by patient and study time, a
    study's two tasks together (so they share a block and its thumbnails)."""
    stem = page.removesuffix(".html")
    items = sorted(items, key=lambda i: (i.meta.get("patient_id", ""), i.meta.get("study_time", ""), i.task))
    files: dict[str, str] = {}
    for k in range(0, len(items), BLOCK):
        thumbs: dict[str, str | None] = {}
        block = [_detail(item, runs, image_root, thumbs) for item in items[k:k + BLOCK]]
        files[f"{stem}-{k // BLOCK}.js"] = f"rrgBlock({k // BLOCK},{script_json(block)});"
    rows = [[item.task, item.subtype, item.meta.get("patient_id", ""), item.meta.get("study_id", ""),
             [None if r.texts.get(item.id) is None else r.tef1.get(item.id) for r in runs]] for item in items]
    data = {"runs": [r.label for r in runs], "rows": rows, "block": BLOCK, "stem": prefix + stem}
    script = data_block("rrg-data", data) + inline_script(SCRIPT)
    files[page] = PAGE.replace("__TITLE__", html_text(prefix + stem)).replace("__SCRIPT__", script).replace(
        "__POLICY__", policy_meta())
    return files


PAGE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">__POLICY__
<meta name="viewport" content="width=device-width, initial-scale=1"><title>__TITLE__</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#222}header{padding:8px 14px;background:#f4f4f4;
border-bottom:1px solid #ddd;display:flex;gap:10px;flex-wrap:wrap;align-items:center}
#list{height:30vh;overflow:auto;border-bottom:1px solid #ddd}#list div{padding:2px 14px;cursor:pointer;
white-space:nowrap}#list div:hover,#list div.on{background:#e8f0fe}
#detail{display:grid;grid-template-columns:1fr 1fr 1fr;gap:14px;padding:14px}
#detail h3{margin:0 0 6px;font-size:15px}.imgs{display:flex;gap:6px;flex-wrap:wrap}.imgs figure{margin:0;
font-size:11px;max-width:170px}.imgs img{display:block;max-width:128px}.text{white-space:pre-wrap;
background:#fafafa;border:1px solid #eee;padding:6px;margin:6px 0}.run{margin-bottom:10px}
mark{padding:0 1px;border-radius:2px}mark.both{background:#c8f0c8}mark.extra{background:#ffd7a8}
mark.reference{background:#cfe2ff}mark.prior{background:none;text-decoration:underline}.legend mark{margin-right:6px}
.muted{color:#777}
@media (max-width:700px){#detail{grid-template-columns:1fr}#list div{white-space:normal;padding:4px 14px}}
</style></head><body>
<header><b>__TITLE__</b>
<label>task <select id="task"><option value="">all</option><option>findings</option><option>impression</option>
</select></label>
<label>prior <select id="prior"><option value="">all</option><option value="with_prior">with prior</option>
<option value="no_prior">no prior</option></select></label>
<label>search <input id="q" placeholder="study or patient id" size="16"></label>
<span class="legend"><mark class="reference">temporal word of the reference</mark><mark class="both">generated,
also in the reference</mark><mark class="extra">generated, not in the reference</mark><mark class="prior">in the
prior report</mark></span>
<span id="count" class="muted"></span></header>
<div id="list"></div><div id="detail"><p class="muted">Open a row to see the prior study, the current study and
the generated reports side by side.</p></div>
__SCRIPT__</body></html>
"""

SCRIPT = r"""
const D=JSON.parse(document.getElementById('rrg-data').textContent);const blocks={};const waiting={};
window.rrgBlock=function(k,data){blocks[k]=data;(waiting[k]||[]).forEach(f=>f(data));delete waiting[k];};
function need(k){return new Promise(ok=>{if(k in blocks)return ok(blocks[k]);if(!waiting[k]){waiting[k]=[];
 const s=document.createElement('script');s.src=D.stem+'-'+k+'.js';document.head.appendChild(s);}waiting[k].push(ok);});}
function el(tag,text,cls){const e=document.createElement(tag);if(text!=null)e.textContent=text;if(cls)e.className=cls;
 return e;}
function marked(text,spans){const box=el('div',null,'text');if(text==null){box.textContent='(none)';return box;}
 let at=0;for(const [a,b,c] of spans){box.appendChild(document.createTextNode(text.slice(at,a)));
  box.appendChild(el('mark',text.slice(a,b),c));at=b;}box.appendChild(document.createTextNode(text.slice(at)));
 return box;}
function imgs(list){const box=el('div',null,'imgs');for(const [cap,src] of list){const f=el('figure');
 if(src){const i=el('img');i.src=src;i.alt=cap;f.appendChild(i);}f.appendChild(el('figcaption',cap));box.appendChild(f);}
 return box;}
function tef(v){return v==null?'–':(100*v).toFixed(1);}
function show(n){const k=Math.floor(n/D.block);need(k).then(B=>{const d=B[n%D.block],row=D.rows[n];
 const box=document.getElementById('detail');box.textContent='';
 const a=el('div'),b=el('div'),c=el('div');
 if(d.prior){a.appendChild(el('h3','Prior study ('+d.prior.interval+' before)'));a.appendChild(imgs(d.prior.images));
  a.appendChild(el('div','Prior report','muted'));a.appendChild(marked(d.prior.report,d.prior.marks));}
 else{a.appendChild(el('h3','No prior study'));a.appendChild(el('p','This is the patient\'s first study.','muted'));}
 b.appendChild(el('h3','Current study '+row[3]+' ('+row[0]+')'));b.appendChild(imgs(d.current.images));
 b.appendChild(el('div','Reference '+row[0],'muted'));b.appendChild(marked(d.current.reference,d.current.marks));
 c.appendChild(el('h3','Generated'));for(const [label,text,spans,score] of d.generated){const r=el('div',null,'run');
  r.appendChild(el('div',label+' · Temporal Entity F1 '+tef(score),'muted'));r.appendChild(marked(text,spans));
  c.appendChild(r);}
 box.append(a,b,c);});}
function draw(){const t=document.getElementById('task').value,p=document.getElementById('prior').value,
 q=document.getElementById('q').value.trim().toLowerCase(),list=document.getElementById('list');list.textContent='';
 let shown=0;D.rows.forEach((row,n)=>{if((t&&row[0]!==t)||(p&&row[1]!==p)||(q&&!(row[2]+' '+row[3]).toLowerCase()
  .includes(q)))return;shown++;const line=el('div',row[3]+' · '+row[2]+' · '+row[0]+' · '+row[1].replace('_',' ')+
  ' · TEF1 '+row[4].map(tef).join(' / '));line.onclick=()=>{for(const o of list.querySelectorAll('.on'))
  o.classList.remove('on');line.classList.add('on');show(n);};list.appendChild(line);});
 document.getElementById('count').textContent=shown+' of '+D.rows.length+' items; runs: '+D.runs.join(' / ');}
for(const id of ['task','prior','q'])document.getElementById(id).addEventListener('input',draw);draw();
const opened=/^#item=(\d+)$/.exec(location.hash);if(opened&&+opened[1]<D.rows.length)show(+opened[1]);
"""
