"""Re-measure the figures the user docs state, with the commands the docs print beside them.

A setup is the docs' shell blocks marked ``<!-- figures: NAME -->`` (``NAME (--seed 2)``: with ``--seed 2``; see
`bench/doc_blocks.py`), run in a folder of its own under ``--work`` where a finished command is not run again
(``--fresh`` starts over); ``time medtemporal ...`` runs in a process of its own and prints its wall and CPU seconds.
Each figure is printed as its doc writes it, with whether the doc holds it. ``--list`` prints figures, setups and
commands; ``--only mmxu`` picks figures by name (all: ~8 min on two quiet cores); ``--official``: released files.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from doc_blocks import DOCS, ROOT, blocks

from medtemporal.benchmark import load, read_manifest
from medtemporal.runs import RunFolder

OFFICIAL_LINKS = {"3DRAD": "3d-rad/3DRAD", "MMXU-test.jsonl": "mmxu/MMXU-test.jsonl", "test.json": "eltlm/test.json"}
"""Names the `released` setup's commands use → their place under ``--official``."""
DEMO, REL = "demo/demo-out", "released/benchmarks"


def setups() -> dict[str, dict[str, str]]:
    """Setup name → its command lines (comments dropped, in docs order, once each) → the block they come from."""
    found: dict[str, dict[str, str]] = {}
    for doc in DOCS:
        for block in blocks(doc):
            for name, seed in re.findall(r"([\w-]+)(?: \((--seed \d+)\))?", block.figures):
                for line in block.commands:
                    line = shlex.join(shlex.split(re.sub(r"--seed \d+", seed, line) if seed else line, comments=True))
                    found.setdefault(name, {}).setdefault(line, block.name)
    return found


READER = {"classifier": "options", "question": "question + options", "heuristic": "heuristic"}
OPEN = {"heuristic": "answer prior", "question": "question text"}  # the readers' names for open answers


def rows(path: Path) -> dict[tuple[str, str], dict]:
    """Audit rows by (task, subtype) of a build or an ``audit --json`` file, with best result, its reader, verdict."""
    audit = json.loads(path.read_text()) if path.suffix == ".json" else read_manifest(path).audit
    return {(r["task"], r["subtype"]): r | {"top": r[r["best"]], "by": (READER if r["classifier"] else OPEN)[r["best"]],
                                            "flag": "BY DESIGN" if r["by_design"] else
                                            "BLIND-SOLVABLE" if r["flagged"] else "ok"} for r in audit["subtypes"]}


def scores(run: Path, group: str = "overall") -> dict[str, float]:
    return {s.metric: s.value for s in RunFolder(run).scores().scores if s.group == group}


def span(values: Iterable[float], scale: float = 100, fmt: str = ".1f") -> str:
    vals = list(values)
    lo, hi = f"{scale * min(vals):,{fmt}}", f"{scale * max(vals):,{fmt}}"
    return lo if lo == hi else f"{lo}–{hi}"


def ci(r: dict, bold: bool = False) -> str:
    """An accuracy with its interval as the docs write it: ``20.5 [16.6, 24.6]``, the accuracy in bold if asked."""
    return f"{'**' * bold}{span([r['accuracy']])}{'**' * bold} [{span([r['ci_low']])}, {span([r['ci_high']])}]"


def micro(rs: list[dict], key: str) -> float:
    return 100 * sum(r[key]["accuracy"] * r["n"] for r in rs) / sum(r["n"] for r in rs)


def by_scan(rs: list[dict], key: str, fmt: str) -> str:
    """A 3D-RAD task's micro accuracy with scans b, c and d's: ``64.0 (b 69.2, c 59.7, d 41.8)``."""
    acc = {r["subtype"][-1]: span([r[key]["accuracy"]]) for r in rs}
    return f"{micro(rs, key):{fmt}} (b {acc['b']}, c {acc['c']}, d {acc['d']})"


Read = Callable[[Path], Iterable[tuple[str, str | tuple[str, ...]]]]
FIGURES: list[tuple[str, str, tuple[str, ...], Read]] = []


def figure(name: str, doc: str, *needs: str) -> Callable[[Read], Read]:
    """Register a reader ``(work) -> [(label, text as the doc writes it, or a table row's cells)]``."""
    return lambda fn: FIGURES.append((name, doc, needs, fn)) or fn


@figure("audit", "docs/audit.md", "seed1", "seed2", "large1", "large2", "cohort300")
def _audit(work: Path):
    mi = [rows(work / f"seed{s}/mi") for s in (1, 2)]
    for group, subs in {"TEL single / E→R / R→E / multiple `_1`": "single_(em|res)|.*_to_|multiple_.*_1",
                        "GTS single": "single_entity", "GTS multi": "multi_entity", "ICR": "icr_multi",
                        "TEL multiple `_2`": "multiple_.*_2"}.items():
        sel = [[r for r in m.values() if re.match(subs, r["subtype"])] for m in mi]
        note = '20; "always C" 33.3, see below' if "_2" in group else "20"
        yield f"MI-CXR {group}", ("MI-CXR", group, *(span(r["classifier"]["accuracy"] for r in s) for s in sel),
                                  f"{max((r['flag'] for s in sel for r in s), key=len)} ({note})")
    mx = [rows(work / f"seed{s}/mxb")[("change", "(all)")] for s in (1, 2)]
    yield "MMXU (all)", ("MMXU (`--fit task`, 200 patients)", "all content types (`(all)`)",
                         *(span([r["classifier"]["accuracy"]]) for r in mx),
                         f"ok (25; question + options {' / '.join(span([r['question']['accuracy']]) for r in mx)})")
    second = [r for s in (1, 2) for (_, sub), r in rows(work / f"large{s}/mi800").items() if sub.endswith("_2")]
    yield "800 patients: multiple_*_2", (f"heuristic {span(r['heuristic']['accuracy'] for r in second)}%, options "
                                         f"{span(r['classifier']['accuracy'] for r in second)}%")
    r = rows(work / "cohort300/mi300")[("ICR-V", "icr_variant")]
    yield f"ICR-V ({r['by']})", f"{span([r['top']['accuracy']])}% blind on the 300-patient test cohort"


@figure("small", "docs/audit.md docs/mmxu.md", "small")
def _small(work: Path):
    for key in (("GTS", "multi_entity_interval_summary"), ("ICR", "icr_multi_abn")):
        r = rows(work / "small/mi40")[key]
        yield f"MI-CXR 40 patients, seed 0: {key[1]} ({r['by']}, {r['flag']})", ci(r["top"])
    w = rows(work / "small/mxb40")[("change", "worsen")]
    yield f"MMXU 40 patients, worsen ({w['flag']}, {w['by']})", f"{w['n']} \"worsen\" items read {ci(w['top'])}"


@figure("3d-rad", "docs/3d-rad.md docs/audit.md", "released", "rad3d17")
def _rad3d(work: Path):
    rs = rows(work / "released/3d-rad-official-audit.json")
    t4, t5, t6 = ([r for (t, _), r in rs.items() if t == task] for task in ("task4", "task5", "task6"))
    q = {r["subtype"][-1]: r["question"] for r in t6}
    history = scores(work / "released/runs/3d-rad-history", "task:task6")["accuracy"]
    yield "released row", (f"{span(r['heuristic']['accuracy'] for r in t4)} per label (chance 50), micro "
                           f"{micro(t4, 'heuristic'):.2f}", by_scan(t5, "heuristic", ".1f"),
                           by_scan(t6, "question", ".2f"), f"{100 * history:.2f}")
    yield "released Task 6", ", ".join(f"{k} {ci(q[k])}" for k in "bcd")
    t6 = [r for (t, _), r in rows(work / "rad3d17/audit.json").items() if t == "task6"]
    run = scores(work / "rad3d17/run-history", "task:task6")["accuracy"]
    yield "seed-17 phantom", (f"{micro(t6, 'question'):.1f} for the reader over {sum(r['n'] for r in t6):,} "
                              f"Task 6 items, {100 * run:.2f} for `rad3d:history`")


@figure("mmxu", "docs/mmxu.md", "released", "seed1", "seed2", "mmxu100")
def _mmxu(work: Path):
    wrong = Counter(k for it in load(work / REL / "mmxu-text").items if it.meta.get("blind_pick") != it.answer
                    for k in ("(all)", it.subtype))
    for (_, sub), r in rows(work / REL / "mmxu-text").items():
        name = "all (`(all)`, flagged)" if sub == "(all)" else sub
        yield f"release, {sub}", (name, f"{r['n']:,}", *(ci(r[k], r["best"] == k) for k in READER), f"{wrong[sub]:,}")
    within = rows(work / "released/mmxu-subtype.json").values()
    yield "release, within content types", (f"options {span(r['classifier']['accuracy'] for r in within)}%, question"
                                            f" + options {span(r['question']['accuracy'] for r in within)}%")
    for label, bench in (("100 patients, seed 0", "mmxu100/benchmarks/mmxu"), ("200 patients, seed 1", "seed1/mxb"),
                         ("200 patients, seed 2", "seed2/mxb")):
        r = rows(work / bench)[("change", "(all)")]
        yield f"phantom, {label}", (label, f"{r['n']:,}", *(ci(r[k], r["best"] == k) for k in READER))


@figure("ms-cxr-t", "docs/ms-cxr-t.md docs/medical-diff-vqa.md", "seed1", "seed2")
def _seeded(work: Path):
    for bench in ("mtb", "dvb"):
        one, two = (rows(work / f"seed{s}/{bench}") for s in (1, 2))
        for (task, sub), r in ((k, r) for k, r in one.items() if k[0] != "sentence_similarity"):
            name = sub.replace("_", " ") if bench == "mtb" else task if task == sub else f"{task} / {sub}"
            x = [r, two[(task, sub)]]
            cells = [f"{span([y['top']['accuracy']]) if bench == 'mtb' else ci(y['top'])} ({y['by']})" for y in x]
            yield name, (name, f"{r['n']} / {x[1]['n']}", span([r["chance"]]), *cells,
                         " / ".join(dict.fromkeys(y["flag"] for y in x)))


@figure("eltlm", "docs/eltlm.md docs/longitudinal-rrg.md", "demo", "released")
def _open(work: Path):
    yield "ELTLM", "both read " + span(r["top"]["accuracy"] for r in rows(work / REL / "eltlm-questions").values())
    r = rows(work / DEMO / "benchmarks/longitudinal-rrg")[("impression", "with_prior")]
    yield f"RRG commonest impression ({r['flag']})", f"{ci(r['top']).replace(' [', '% [', 1)} of the with-prior"
    s = scores(work / DEMO / "runs/longitudinal-rrg-copy-prior", "subtypes:findings/No prior")
    yield "RRG copy-prior findings, no prior", f"ROUGE-L {span([s['r2gen_rouge_l']])} / {span([s['coco_rouge_l']])}"


@figure("benchmarks", "docs/benchmarks.md", "cohort300", "seed1")
def _benchmarks(work: Path):
    for b in ("mi300", "mi300-no-mix"):
        c = [i.answer for i in load(work / "cohort300" / b).items if i.subtype == "multiple_resolution_2"]
        text = "keeps {} C ({} items)" if b == "mi300" else "with `--no-mix` all {} stay ({} items)"
        yield f"{b}: multiple_resolution_2", text.format(c.count("C"), len(c))
    avg = [span([scores(work / "seed1" / run)["temmed_report_avg"]]) for run in ("hack", "hack-patient")]
    yield "top-1 retrieval hack, report average", f"is {avg[0]} with the random split and {avg[1]} patient-disjoint"


def run_setup(name: str, commands: Iterable[str], folder: Path, official: Path, fresh: bool) -> None:
    """Run a setup's commands in its folder, skipping those that finished there before."""
    from medtemporal.cli import main

    if fresh:
        shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    for link, rel in OFFICIAL_LINKS.items() if name == "released" else ():
        if not (folder / link).exists():
            (folder / link).symlink_to((official / rel).resolve())
    done = folder / "done.txt"
    for line in (c for c in commands if c not in (done.read_text() if done.exists() else "").splitlines()):
        print(f"[{name}] $ {line}", file=sys.stderr, flush=True)
        argv = shlex.split(line)
        timed, argv = argv[0] == "time", argv[1 + (argv[0] == "time"):]
        with contextlib.chdir(folder), open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
            before, start, load = os.times(), time.perf_counter(), f"{os.getloadavg()[0]:.1f}"
            code = (subprocess.run([Path(sys.executable).with_name("medtemporal"), *argv], stdout=null).returncode
                    if timed else main(argv))
        if timed:
            print(f"[{name}] {time.perf_counter() - start:.0f} s wall, {sum(os.times()[2:4]) - sum(before[2:4]):.0f} s "
                  f"CPU (load average {load} at the start)", file=sys.stderr)
        if code != 0 and not (code == 1 and "audit" in argv[:2]):
            raise SystemExit(f"[{name}] `{line}` exited {code}")
        with done.open("a") as f:
            f.write(line + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", type=Path, default=Path.home() / ".cache/medtemporal/bench/docs-figures")
    p.add_argument("--official", type=Path, default=ROOT.parent / "shared" / "official")
    p.add_argument("--only", action="append", default=[], help="figures whose name contains this (repeatable)")
    p.add_argument("--list", action="store_true", help="list figures, docs, setups and commands; run nothing")
    p.add_argument("--fresh", action="store_true", help="remove the chosen figures' setup folders first")
    args, known = p.parse_args(), setups()
    chosen = [f for f in FIGURES if not args.only or any(o in f[0] for o in args.only)]
    if not args.list and not args.official.is_dir():
        print(f"{args.official} is absent: the figures of the released files are skipped.", file=sys.stderr)
        chosen = [f for f in chosen if "released" not in f[2]]
    needed = dict.fromkeys(s for f in chosen for s in f[2])
    if missing := [s for s in needed if s not in known]:
        raise SystemExit(f"no block of the docs is marked `<!-- figures: {missing[0]} -->`; mark the one that runs it.")
    if args.list:
        print("\n".join(f"{name:12} {doc:48} {', '.join(needs)}" for name, doc, needs, _ in chosen), *(
            f"\n[{s}]\n" + "\n".join(f"  {src:24} {c}" for c, src in known[s].items()) for s in needed), sep="\n")
        return
    for s in needed:
        run_setup(s, known[s], args.work / s, args.official, args.fresh)
    missing = 0
    for name, doc, _, read in chosen:
        text = " ".join(" ".join((ROOT / d).read_text(encoding="utf-8").split()) for d in doc.split())
        print(f"\n== {name} ({doc})")
        for label, value in read(args.work):
            value = value if isinstance(value, str) else "| " + " | ".join(value) + " |"  # a table row's cells
            state = "in doc" if " ".join(value.split()) in text else "NOT IN DOC"
            missing += state == "NOT IN DOC"
            print(f"  {label:58} {value}    [{state}]")
    print(f"\n{missing} figure(s) not in their docs.")
    raise SystemExit(missing > 0)


if __name__ == "__main__":
    main()
