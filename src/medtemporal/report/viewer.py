"""The per-item viewer of the HTML report: every answer of every run, filterable, with its images and prompt.

For each run and repeat the viewer lists the items; a row opens the images the
model saw as thumbnails (the images of its recorded prompt, such as the CT
slices 3D-RAD sends, else the item's images) with their captions, the prompt
as sent (`Prediction.prompt`), the raw output, the extracted answer and the
rule that decided it, the gold answer, and whether it was right. Filters: run,
task, subtype, correctness and status (answered / invalid / missing); a table
cell of the report links to its items through the page's address
(``#view:run=0&group=task:TEL``). The list is virtualised (only the rows in
sight are in the page), so a run of thousands of items stays fast.

The page holds only the list (`viewer_index`); the rest is loaded when a row
is opened, in blocks (`medtemporal.report.assets`): ``run-R-C`` (outputs, rules,
errors and prompt numbers of `ROW_BLOCK` answers of run R), ``items-C`` (questions,
options, gold answers and images of `ITEM_BLOCK` items), ``prompts-C`` (the
distinct prompts, `PROMPT_BLOCK` a block: runs that sent the same text share
it) and ``thumbs`` (thumbnail sources; each distinct image made into a
thumbnail once). The page's script builds the DOM with ``textContent`` only,
so no model output can inject markup; its data is inlined by
`medtemporal.report.escaping.data_block`.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Sequence

from PIL import Image

from medtemporal.image_roots import OUTSIDE, resolve_image
from medtemporal.report.assets import Assets
from medtemporal.report.escaping import data_block, inline_script
from medtemporal.report.loaded import ReportRun
from medtemporal.runs import RunFolder
from medtemporal.scoring.compare import per_item
from medtemporal.scoring.extraction import rule_id, rule_name
from medtemporal.scoring.judge import Judgement
from medtemporal.scoring.metrics import UNAVAILABLE, is_correct, metric
from medtemporal.scoring.outcomes import RunOutcomes

THUMB_PX = 96
"""Longest side of a thumbnail, in pixels."""
ROW_BLOCK, ITEM_BLOCK, PROMPT_BLOCK = 2000, 500, 100
"""Answers, items and distinct prompts per loaded block."""
STATUSES = ("answered", "invalid", "missing")
SHORT = 48
"""Longest answer or gold text shown in a list row (the detail shows it whole)."""


class Thumbnails:
    """Image path → thumbnail number, each distinct image read and shrunk once; sources in ``srcs``."""

    def __init__(self, assets: Assets, size: int = THUMB_PX) -> None:
        self.assets = assets
        self.size = size
        self.ids: dict[Path, int | None] = {}
        self.srcs: list[str] = []

    def add(self, path: Path | None) -> int | None:
        """The thumbnail number of ``path`` (made on first sight), or None when it is not a readable image."""
        if path is None:
            return None
        if path not in self.ids:
            self.ids[path] = self._make(path)
        return self.ids[path]

    def _make(self, path: Path) -> int | None:
        try:
            if path.name.endswith((".nii", ".nii.gz")):
                im = _middle_slice(path)
            else:
                with Image.open(path) as opened:
                    opened.draft("L", (self.size, self.size))  # JPEG: decode at reduced size
                    im = opened.convert("L") if opened.mode in ("L", "I", "I;16", "F") else opened.convert("RGB")
            im.thumbnail((self.size, self.size))
            buffer = io.BytesIO()
            im.save(buffer, format="JPEG", quality=70)
        except (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError):
            return None
        self.srcs.append(self.assets.image(f"img/{len(self.srcs)}.jpg", buffer.getvalue(), "image/jpeg"))
        return len(self.srcs) - 1


def _middle_slice(path: Path) -> Image.Image:
    """The middle axial slice of a NIfTI volume as a grey image, values 1st–99th percentile stretched (a volume
    shown in the viewer where a run recorded no slices of it, e.g. a baseline's)."""
    import nibabel as nib
    import numpy as np

    try:
        volume = nib.load(str(path))
    except nib.filebasedimages.ImageFileError as exc:
        raise ValueError(str(exc)) from None
    if len(volume.shape) < 3:
        raise ValueError(f"{path.name} is not a 3-D volume")
    plane = np.asarray(volume.dataobj[:, :, volume.shape[2] // 2], dtype=np.float32)
    low, high = np.percentile(plane, [1, 99])
    scaled = np.clip((plane - low) / max(float(high - low), 1e-6), 0, 1) * 255
    return Image.fromarray(np.rot90(scaled).astype(np.uint8), mode="L")


def _answer_text(answer: Any) -> str | None:
    if answer is None:
        return None
    return " → ".join(answer) if isinstance(answer, list) else str(answer)


def _short(text: str | None) -> str | None:
    return text if text is None or len(text) <= SHORT else text[: SHORT - 1] + "…"


class _Prompts:
    """Distinct recorded prompts, numbered, with their images resolved to thumbnails."""

    def __init__(self, thumbs: Thumbnails) -> None:
        self.thumbs = thumbs
        self.ids: dict[str, int] = {}
        self.prompts: list[list[Any]] = []

    def add(self, prompt: Sequence[dict[str, Any]], image_root: Path) -> int:
        key = json.dumps(prompt, sort_keys=True)
        if key not in self.ids:
            self.ids[key] = len(self.prompts)
            self.prompts.append([[m.get("role", ""), self._parts(m.get("parts", []), image_root)] for m in prompt])
        return self.ids[key]

    def _parts(self, parts: Sequence[dict[str, Any]], image_root: Path) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        caption = ""
        for part in parts:
            if "text" in part:
                out.append({"text": part["text"]})
                last = part["text"].strip().splitlines()[-1:] or [""]
                caption = last[0].rstrip(":").strip() if len(last[0]) <= 40 else ""
            elif "image" in part:
                root = part.get("root")
                shown = part["image"] if not root or root == OUTSIDE else f"{root}/{part['image']}"
                out.append({"image": self.thumbs.add(resolve_image(part, image_root)), "label": caption,
                            "path": shown})
                caption = ""
        return out


def item_scores(loaded: RunOutcomes) -> dict[str, dict[str, float]]:
    """Item id → its own value of every metric that has one per item (a mean over items: accuracy, ROUGE-L,
    BERTScore …; not corpus-level BLEU or a judge's share), × 100 and rounded, as every table shows them; the
    mean over repeats for a run of several. A metric that cannot be computed here is left out."""
    out: dict[str, dict[str, float]] = {}
    names = list(dict.fromkeys(m for item in loaded.items for m in loaded.metrics_for(item.task)))
    for name in names:
        if metric(name).aggregation != "mean":
            continue
        try:
            rows, stats = per_item(loaded, name)
        except UNAVAILABLE:
            continue
        if stats.ndim != 2 or stats.shape[1] != 1:
            continue
        for item_id, row in rows.items():
            out.setdefault(item_id, {})[name] = round(100 * float(stats[row, 0]), 1)
    return out


def judge_verdicts(run: ReportRun) -> dict[str, list[Any]]:
    """Item id → [status, the criteria's 0/1 scores × 100, the judge's whole reply] of the run's last judge pass."""
    judge = run.scores.judge or {}
    if not judge.get("id"):
        return {}
    out: dict[str, list[Any]] = {}
    for line in RunFolder(run.path).judgements(Judgement).records():
        if line.judge == judge["id"] and line.kind == "answer":
            out[line.item_id] = [line.status, {k: 100 * v for k, v in (line.scores or {}).items()},
                                 line.raw if line.raw is not None else line.error]
    return out


def viewer_index(runs: Sequence[ReportRun], assets: Assets) -> dict[str, Any]:
    """The viewer's list (``runs``, ``items``, ``rows``), kept in the page; the detail blocks go to ``assets``.

    ``rows`` holds one ``[run, repeat, item, status, correct, answer]`` per answer, status an index into
    ``statuses``, correct 1 / 0 / None (open answers), the answer cut to `SHORT` characters.
    """
    thumbs = Thumbnails(assets)
    prompts = _Prompts(thumbs)
    items: dict[str, int] = {}
    item_rows: list[list[Any]] = []
    item_detail: list[dict[str, Any]] = []
    rows: list[list[Any]] = []
    run_info = []
    rules: dict[tuple[str, str], str] = {}
    for k, run in enumerate(runs):
        loaded = run.outcomes
        recorded = run.config.image_root if run.config is not None else None
        root = Path(recorded) if recorded else loaded.bench.image_root  # the images the run read (--image-root)
        groups = {c.group: c.subtypes for t in run.scores.layout for c in t.columns}
        first = len(rows)
        detail: dict[str, list[Any]] = {"answer": [], "rule": [], "raw": [], "error": [], "prompt": [], "scores": [],
                                        "verdict": []}
        own = item_scores(loaded)
        verdicts = judge_verdicts(run)
        for item in loaded.items:
            if item.id in items:
                continue
            items[item.id] = len(item_rows)
            gold = _answer_text(item.answer) if item.answer_type != "open" else item.answer
            item_rows.append([item.id, item.task, item.subtype, item.cluster,
                              _short(gold) if isinstance(gold, str) else None])
            item_detail.append({
                "question": item.question, "options": item.options, "gold": gold,
                "images": [[thumbs.add(root / ref.path), ref.label or (f"T{ref.visit}" if ref.visit else ""),
                            ref.path] for ref in item.images],
            })
        for r, outcomes in enumerate(loaded.by_repeat):
            for outcome in outcomes:
                item = outcome.item
                p = loaded.latest.get((item.id, r))
                closed = item.answer_type != "open"
                answered = outcome.status == "answered"
                correct = (int(is_correct(item, outcome.answer)) if answered else 0) if closed else None
                answer = _answer_text(outcome.answer)
                rows.append([k, r, items[item.id], STATUSES.index(outcome.status), correct, _short(answer)])
                key = (item.benchmark, item.task)
                if key not in rules:
                    rules[key] = rule_id(rule_name(item))
                detail["answer"].append(answer)
                detail["rule"].append(rules[key] if outcome.status != "missing" else None)
                detail["raw"].append(p.raw_output if p is not None else None)
                detail["error"].append(p.error if p is not None else None)
                detail["prompt"].append(prompts.add(p.prompt, root) if p is not None and p.prompt else None)
                detail["scores"].append(own.get(item.id))
                detail["verdict"].append(verdicts.get(item.id))
        count = len(rows) - first
        for c in range(0, count, ROW_BLOCK):
            assets.data(f"run-{k}-{c // ROW_BLOCK}", {f: v[c: c + ROW_BLOCK] for f, v in detail.items()})
        run_info.append({"label": run.label, "repeats": len(loaded.by_repeat), "groups": groups, "first": first,
                         "count": count})
    for c in range(0, len(item_detail), ITEM_BLOCK):
        assets.data(f"items-{c // ITEM_BLOCK}", item_detail[c: c + ITEM_BLOCK])
    for c in range(0, len(prompts.prompts), PROMPT_BLOCK):
        assets.data(f"prompts-{c // PROMPT_BLOCK}", prompts.prompts[c: c + PROMPT_BLOCK])
    assets.data("thumbs", thumbs.srcs)
    return {"runs": run_info, "items": item_rows, "rows": rows, "statuses": list(STATUSES),
            "blocks": {"rows": ROW_BLOCK, "items": ITEM_BLOCK, "prompts": PROMPT_BLOCK}}


VIEWER_CSS = """
#viewer .filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.5rem 0}
#viewer select{font:inherit;max-width:24rem}#viewer .count{color:#444}
#vlist{height:420px;overflow-y:auto;border:1px solid #ccc;position:relative}#vinner{position:relative}
#vlist .row{position:absolute;left:0;right:0;height:28px;line-height:28px;padding:0 .5rem;cursor:pointer;
white-space:nowrap;overflow:hidden;text-overflow:ellipsis;border-bottom:1px solid #eee;font-size:13px}
#vlist .row:hover,#vlist .row.sel{background:#eef4ff}
.ok{color:#1a7f37}.bad{color:#b42318}.inv{color:#9a6700}
#vdetail{border:1px solid #ccc;border-top:none;padding:.6rem;min-height:6rem}
#vdetail pre{white-space:pre-wrap;background:#f7f7f7;padding:.4rem;margin:.2rem 0 .6rem;max-height:22rem;overflow:auto}
.timeline{display:flex;gap:.4rem;flex-wrap:wrap}.timeline figure{text-align:center}
.timeline img{width:96px;height:96px;object-fit:contain;background:#000}
.timeline figcaption{font-size:12px;max-width:96px}
.chip{display:inline-block;border:1px solid #aaa;border-radius:3px;padding:0 .3rem;margin:.1rem;font-size:12px}
"""

VIEWER_JS = r"""
(function(){
const D=JSON.parse(document.getElementById('viewer-index').textContent);
const H=28,list=document.getElementById('vlist'),inner=document.getElementById('vinner'),
detail=document.getElementById('vdetail'),count=document.getElementById('vcount');
const F={run:document.getElementById('f-run'),task:document.getElementById('f-task'),
subtype:document.getElementById('f-subtype'),correct:document.getElementById('f-correct'),
status:document.getElementById('f-status')};
function opt(sel,value,text){const o=document.createElement('option');o.value=value;o.textContent=text;sel.appendChild(o);}
D.runs.forEach((r,k)=>opt(F.run,String(k),r.label+(r.repeats>1?' ('+r.repeats+' repeats)':'')));
[...new Set(D.items.map(i=>i[1]))].forEach(t=>opt(F.task,t,t));
[...new Set(D.items.map(i=>i[2]))].forEach(s=>opt(F.subtype,s,s));
let groupSubtypes=null,shown=[],selected=-1;
function el(tag,text,cls){const e=document.createElement(tag);if(text!=null)e.textContent=text;if(cls)e.className=cls;return e;}
function mark(row){const st=D.statuses[row[3]];if(st==='missing')return['missing','bad'];if(st==='invalid')return['invalid','inv'];
 if(row[4]===null)return['scored','']; return row[4]?['right','ok']:['wrong','bad'];}
function apply(){
 const run=F.run.value,task=F.task.value,sub=F.subtype.value,cor=F.correct.value,st=F.status.value;
 shown=[];
 D.rows.forEach((row,n)=>{const it=D.items[row[2]];
  if(run!==''&&String(row[0])!==run)return; if(task!==''&&it[1]!==task)return;
  if(sub!==''&&it[2]!==sub)return; if(groupSubtypes&&!groupSubtypes.includes(it[2]))return;
  if(cor==='right'&&row[4]!==1)return; if(cor==='wrong'&&row[4]!==0)return;
  if(st!==''&&D.statuses[row[3]]!==st)return; shown.push(n);});
 count.textContent=shown.length.toLocaleString('en')+' of '+D.rows.length.toLocaleString('en')+' answers';
 inner.style.height=(shown.length*H)+'px'; list.scrollTop=0; draw();
 if(shown.length)show(shown[0]);else{detail.textContent='No answer matches the filters.';}
}
function draw(){
 const first=Math.max(0,Math.floor(list.scrollTop/H)-5),last=Math.min(shown.length,first+Math.ceil(list.clientHeight/H)+10);
 inner.replaceChildren();
 for(let k=first;k<last;k++){const n=shown[k],row=D.rows[n],it=D.items[row[2]],m=mark(row),run=D.runs[row[0]];
  const d=el('div',null,'row'+(n===selected?' sel':''));d.style.top=(k*H)+'px';d.dataset.n=n;
  d.append(el('span',m[0],m[1]),' · '+run.label+(run.repeats>1?' #'+(row[1]+1):'')+' · '+
   it[1]+' / '+it[2]+' · answer '+(row[5]??'–')+' · gold '+(it[4]??'(text)')+' · '+it[0]);
  inner.appendChild(d);}
}
function section(title){detail.appendChild(el('h3',title));}
function timeline(images,thumbs){const tl=el('div',null,'timeline');
 images.forEach(([t,label,path])=>{const f=el('figure');
  if(t!==null){const i=el('img');i.src=thumbs[t];i.alt=label||path;i.title=path;f.appendChild(i);}
  else f.appendChild(el('span','(image not found) '+path,'chip'));
  f.appendChild(el('figcaption',label||''));tl.appendChild(f);});
 return tl;}
function show(n){selected=n;draw();const row=D.rows[n],run=D.runs[row[0]],local=n-run.first,
 rb=Math.floor(local/D.blocks.rows),ib=Math.floor(row[2]/D.blocks.items);
 detail.replaceChildren(el('p','Loading…'));
 Promise.all([mtNeed('run-'+row[0]+'-'+rb),mtNeed('items-'+ib),mtNeed('thumbs')]).then(([R,I,T])=>{
  const k=local%D.blocks.rows,p=R.prompt[k];
  if(p===null)return [R,I,T,null];
  return mtNeed('prompts-'+Math.floor(p/D.blocks.prompts)).then(P=>[R,I,T,P[p%D.blocks.prompts]]);
 }).then(([R,I,T,prompt])=>{if(selected===n)render(n,R,local%D.blocks.rows,I[row[2]%D.blocks.items],T,prompt);})
 .catch(e=>{if(selected===n)detail.replaceChildren(el('p',String(e.message||e),'bad'));});}
function render(n,R,k,item,thumbs,prompt){const row=D.rows[n],it=D.items[row[2]],m=mark(row),run=D.runs[row[0]];
 detail.replaceChildren();
 const head=el('p');head.append(el('strong',m[0],m[1]),' — '+run.label+', repeat '+(row[1]+1)+', item '+it[0]+
  ', patient '+it[3]+', '+it[1]+' / '+it[2]);detail.appendChild(head);
 const sent=prompt?prompt.flatMap(([role,parts])=>parts.filter(p=>'image' in p).map(p=>[p.image,p.label,p.path])):[];
 if(sent.length){section('Images as the model saw them ('+sent.length+')');detail.appendChild(timeline(sent,thumbs));}
 else if(item.images.length){section('Images');detail.appendChild(timeline(item.images,thumbs));}
 section('Prompt as sent');
 if(prompt){let shownImages=0;prompt.forEach(([role,parts])=>{detail.appendChild(el('div',role,'chip'));const pre=el('pre');
  parts.forEach(p=>{if('text' in p)pre.append(p.text+'\n');else{pre.append(el('span','[image '+(++shownImages)+']','chip'),'\n');}});
  detail.appendChild(pre);});}
 else{detail.appendChild(el('pre',item.question+'\n'+Object.entries(item.options||{}).map(([k,v])=>k+'. '+v).join('\n')));
  detail.appendChild(el('p','(this run did not record its rendered prompt; the item question is shown)'));}
 section('Raw output');detail.appendChild(el('pre',R.raw[k]??(R.error[k]?'error: '+R.error[k]:'(none)')));
 section('Extracted answer');detail.appendChild(el('p',(R.answer[k]??'none (invalid or missing)')+(R.rule[k]?'  — rule '+R.rule[k]:'')));
 const own=(R.scores||[])[k],v=(R.verdict||[])[k];
 if(own&&Object.keys(own).length){section('This answer\'s scores (× 100'+(run.repeats>1?', mean over repeats':'')+')');
  detail.appendChild(el('p',Object.entries(own).map(([m,x])=>m+' '+x.toFixed(1)).join(' · '),'scores'));}
 if(v){section('Judge verdict (× 100) and rationale');
  detail.appendChild(el('p',(Object.entries(v[1]).map(([c,x])=>c+' '+x.toFixed(0)).join(' · ')||'no scores')+
   ' — '+(v[0]==='ok'?'verdict read':v[0]==='unparseable'?'unparseable: not counted':v[0]),v[0]==='ok'?'':'inv'));
  detail.appendChild(el('pre',v[2]??'(no reply)'));}
 section('Gold answer');detail.appendChild(el('pre',typeof item.gold==='string'?item.gold:JSON.stringify(item.gold)));}
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


def viewer_section(runs: Sequence[ReportRun], assets: Assets) -> str:
    """The viewer as an HTML section (filters, list, detail pane, the list's data and the script)."""
    index = viewer_index(runs, assets)
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
        '<p class="note">Pick filters, or follow a table cell’s link; click a row to see the images the model saw, '
        "the prompt as sent, the raw output, the extracted answer with its rule, and the gold answer.</p>"
        f'<div class="filters">{selects}<span class="count" id="vcount"></span></div>'
        '<div id="vlist"><div id="vinner"></div></div><div id="vdetail"></div>'
        f'{data_block("viewer-index", index)}{assets.scripts()}{inline_script(VIEWER_JS)}</section>'
    )
