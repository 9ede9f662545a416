"""Re-measure the figures the user docs state, with the commands the docs print beside them.

Each figure names the doc that states it and the setups whose commands produce it: the docs' own commands,
run here as written (`medtemporal.cli.main`, one work folder per setup). The script prints every figure as
the doc writes it and whether the doc holds that text, so one command re-checks the docs after a change to
a builder, a phantom or the audit:

    .venv/bin/python bench/docs_figures.py                  # every figure: about 8 min on two shared cores
    .venv/bin/python bench/docs_figures.py --only mmxu      # figures whose name contains "mmxu"
    .venv/bin/python bench/docs_figures.py --list           # figures, docs and setups; nothing is run

Work folders live under ``--work`` (default ``~/.cache/medtemporal/bench/docs-figures``) and are reused: a
command whose ``--out`` (or ``--json``) exists is not run again; ``--fresh`` removes the chosen setups'
folders first. The released files come from ``--official`` (default ``../shared/official``); the figures
that need them are skipped, saying so, when it is absent. A command written ``time ...`` runs in a process
of its own, as a user runs it, and its wall and CPU seconds are printed with the load average: timings are
compared by eye, the docs state them as rounded, machine-dependent figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from medtemporal.runs import RunFolder

ROOT = Path(__file__).resolve().parents[1]


def _seeded(seed: int) -> list[str]:
    """The seed-S phantom builds of docs/audit.md, mmxu.md, ms-cxr-t.md and medical-diff-vqa.md."""
    s = str(seed)
    return [
        f"phantoms cxr --patients 200 --seed {s} --out cxr",
        f"build mi-cxr --mimic-cxr-jpg cxr/mimic-cxr-jpg --qba cxr/mimic-ext-cxr-qba --seed {s} --out mi",
        f"phantoms chexpert-plus --patients 1200 --seed {s} --out cxp",
        f"build temmed --chexpert-plus cxp --test-size 400 --seed {s} --out tm",
        f"phantoms mmxu --cxr cxr --seed {s} --out mx",
        f"build mmxu --official mx/MMXU-test.jsonl --mimic-cxr-jpg cxr/mimic-cxr-jpg --seed {s} --out mxb",
        f"phantoms ms-cxr-t --cxr cxr --seed {s} --out mt",
        f"build ms-cxr-t --ms-cxr-t mt --mimic-cxr-jpg cxr/mimic-cxr-jpg --seed {s} --out mtb",
        f"phantoms medical-diff-vqa --cxr cxr --seed {s} --out dv",
        f"build medical-diff-vqa --diff-vqa dv --mimic-cxr-jpg cxr/mimic-cxr-jpg --seed {s} --out dvb",
    ]


def _large(seed: int) -> list[str]:
    """docs/audit.md's 800-patient MI-CXR builds (no images: the builder reads none of their pixels)."""
    return [f"phantoms cxr --patients 800 --seed {seed} --no-images --out cxr",
            "build mi-cxr --mimic-cxr-jpg cxr/mimic-cxr-jpg --qba cxr/mimic-ext-cxr-qba --no-verify-images "
            f"--seed {seed} --out mi"]


SETUPS: dict[str, list[str]] = {
    "demo": ["time demo --out demo-out"],
    "seed1": [*_seeded(1),  # and docs/benchmarks.md's top-1 retrieval hack under each TemMed split
              "build temmed --chexpert-plus cxp --test-size 400 --seed 1 --split patient --out tm-patient",
              "run tm --model baseline:random --protocol retrieval-top1 --tasks report --out hack",
              "run tm-patient --model baseline:random --protocol retrieval-top1 --tasks report --out hack-patient"],
    "seed2": _seeded(2),
    "large1": _large(1),
    "large2": _large(2),
    "cohort300": [  # tests/benchmarks/mi_cxr/test_phantoms.py's cohort
        "phantoms cxr --patients 300 --seed 3 --no-images --out cxr",
        "build mi-cxr --mimic-cxr-jpg cxr/mimic-cxr-jpg --qba cxr/mimic-ext-cxr-qba --max-items 2000 "
        "--no-verify-images --icr-variant --out mi",
        "build mi-cxr --mimic-cxr-jpg cxr/mimic-cxr-jpg --qba cxr/mimic-ext-cxr-qba --max-items 2000 "
        "--no-verify-images --icr-variant --no-mix --out mi-no-mix",
    ],
    "small": [  # the 40-patient cohorts of tests/audit/test_question_reader.py and tests/benchmarks/mmxu
        "phantoms cxr --patients 40 --seed 0 --image-size 64 --out cxr40",
        "build mi-cxr --mimic-cxr-jpg cxr40/mimic-cxr-jpg --qba cxr40/mimic-ext-cxr-qba --out mi40",
        "phantoms cxr --patients 40 --seed 1 --image-size 64 --out cxr40s1",
        "phantoms mmxu --cxr cxr40s1 --out mx40",
        "build mmxu --official mx40/MMXU-test.jsonl --mimic-cxr-jpg cxr40s1/mimic-cxr-jpg --out mxb40",
    ],
    "mmxu100": [  # docs/mmxu.md's 100-patient row
        "phantoms cxr --patients 100 --out cxr",
        "phantoms mmxu --cxr cxr --out mx",
        "build mmxu --official mx/MMXU-test.jsonl --mimic-cxr-jpg cxr/mimic-cxr-jpg --out mxb",
    ],
    "rad3d17": [  # docs/3d-rad.md
        "phantoms ct-rate --patients 200 --seed 17 --no-volumes --out ct",
        "build 3d-rad --ct-rate ct --tasks task5,task6 --no-volume-check --seed 17 --out bench",
        "audit bench --json audit.json",
        "run bench --model rad3d:history --tasks task6 --out run-history",
    ],
    "released": [  # docs/audit.md, 3d-rad.md, mmxu.md, eltlm.md, on the files in --official
        "build 3d-rad --official 3DRAD/test --out rel",
        "time audit rel --json rel-audit.json",
        "run rel --model rad3d:history --tasks task6 --out rel-history",
        "time build mmxu --official MMXU-test.jsonl --no-verify-images --out b",
        "audit b --fit subtype --json b-subtype.json",
        "build eltlm --official test.json --no-verify-images --out el",
    ],
}
"""Setup name → the docs' commands (``medtemporal`` left off), run in order in the setup's work folder."""

OFFICIAL_LINKS = {"3DRAD": "3d-rad/3DRAD", "MMXU-test.jsonl": "mmxu/MMXU-test.jsonl", "test.json": "eltlm/test.json"}
"""Names the `released` setup's commands use → their place under ``--official``."""

Read = Callable[[Path], Iterable[tuple[str, str]]]


@dataclass(frozen=True)
class Figure:
    """Documented figures: the doc stating them, the setups they need, and how they are read from the folders."""

    name: str
    doc: str
    setups: tuple[str, ...]
    read: Read
    timing: bool = False


FIGURES: list[Figure] = []


def figure(name: str, doc: str, *setups: str, timing: bool = False) -> Callable[[Read], Read]:
    """Register a reader ``(work) -> [(label, text as the doc writes it)]``."""
    def wrap(fn: Read) -> Read:
        FIGURES.append(Figure(name, doc, setups, fn, timing))
        return fn
    return wrap


# ---------------------------------------------------------------------------------------------------- reading

def manifest(bench: Path) -> dict:
    return json.loads((bench / "manifest.json").read_text())


def audit_rows(path: Path) -> dict[tuple[str, str], dict]:
    """Audit rows by (task, subtype), from a build's manifest or an ``audit --json`` file."""
    audit = json.loads(path.read_text()) if path.suffix == ".json" else manifest(path)["audit"]
    return {(r["task"], r["subtype"]): r for r in audit["subtypes"]}


def items(bench: Path) -> list[dict]:
    return [json.loads(line) for line in (bench / "items.jsonl").open()]


def scores(run: Path) -> dict[tuple[str, str], dict]:
    """A run's scores by (metric, group), read through the run folder's owner."""
    return {(s.metric, s.group): s.model_dump() for s in RunFolder(run).scores().scores}


def pct(x: float) -> str:
    return f"{100 * x:.1f}"


def ci(r: dict) -> str:
    """An accuracy with its interval as the docs write it: ``20.5 [16.6, 24.6]``."""
    return f"{pct(r['accuracy'])} [{pct(r['ci_low'])}, {pct(r['ci_high'])}]"


def span(values: Iterable[float], scale: float = 100, fmt: str = ".1f") -> str:
    """``lo–hi`` of values (percent by default), or one value."""
    vals = list(values)
    lo, hi = f"{scale * min(vals):,{fmt}}", f"{scale * max(vals):,{fmt}}"
    return lo if lo == hi else f"{lo}–{hi}"


def best(r: dict) -> dict:
    return r[r["best"]]


def micro(rows: Iterable[dict], key: str) -> float:
    """The n-weighted mean accuracy of one reader over rows."""
    rows = list(rows)
    return sum(r[key]["accuracy"] * r["n"] for r in rows) / sum(r["n"] for r in rows)


def flag(r: dict) -> str:
    return "BY DESIGN" if r["by_design"] else "BLIND-SOLVABLE" if r["flagged"] else "ok"


READER = {"heuristic": "heuristic", "classifier": "options", "question": "question + options"}
"""The audit's reader keys → the names the docs give them (closed questions)."""


def reader(r: dict) -> str:
    """The name of a row's best reader; an open-answer row's two readers are named for what they read."""
    return (READER if r["classifier"] else {"heuristic": "answer prior", "question": "question text"})[r["best"]]


def letters(rows: dict[tuple[str, str], dict], task: str) -> dict[str, dict]:
    """A 3D-RAD task's rows by scan letter (``task6_b`` → ``b``)."""
    return {sub[-1]: r for (t, sub), r in sorted(rows.items()) if t == task}


def row(*cells: str) -> str:
    """A Markdown table row."""
    return "| " + " | ".join(cells) + " |"


def timed(work: Path, setup: str, target: str) -> str:
    t = json.loads((work / setup / "timing.json").read_text())[target]
    return f"{t['wall_s']:.0f} s wall, {t['cpu_s']:.0f} s CPU (load average {t['load']} at the start)"


# ---------------------------------------------------------------------------------------------------- README

@figure("time.demo", "README.md", "demo", timing=True)
def _demo_time(work: Path):
    yield "medtemporal demo, a fresh folder", timed(work, "demo", "demo-out")


@figure("time.released", "docs/audit.md docs/mmxu.md", "released", timing=True)
def _released_times(work: Path):
    yield "audit.md: audit of the released 3D-RAD build", timed(work, "released", "rel-audit.json")
    yield "mmxu.md: build mmxu of the release, audit included", timed(work, "released", "b")


# ---------------------------------------------------------------------------------------------------- audit.md

DEMO = Path("demo/demo-out")


@figure("audit.demo", "docs/audit.md", "demo")
def _audit_demo(work: Path):
    r = audit_rows(work / DEMO / "benchmarks/mi-cxr")[("ICR-V", "icr_variant")]
    cells = [r["task"], r["subtype"], str(r["n"]), str(r["patients"]), pct(r["chance"]), ci(r["heuristic"]),
             r["heuristic"]["rule"], ci(r["classifier"]), ci(r["question"]), reader(r), flag(r)]
    yield "'Reading it': the MI-CXR demo build's ICR-V row", row(*cells)
    for family in ("mi-cxr", "temmed", "3d-rad"):
        bench = work / DEMO / "benchmarks" / family
        rows, audit = audit_rows(bench), manifest(bench)["audit"]
        closed = [r for r in rows.values() if r["classifier"]]
        yield f"{family}: items, closed subtypes", (f"{sum(manifest(bench)['counts']['task'].values()):,} items, "
                                                    f"{len(closed)} subtypes")
        yield f"{family}: flags", (f"{len(audit['flagged'])} flagged, {len(audit['by_design'])} by design"
                                   if audit["flagged"] or audit["by_design"] else "clean")
        if family != "3d-rad":  # 3d-rad.md and the table's Task 6 cell state its readers by task
            yield f"{family}: best over closed subtypes", f"best {span(best(r)['accuracy'] for r in closed)}"
        if family == "mi-cxr":
            on = sum(r["best"] == "question" for r in closed)
            yield "mi-cxr: question + options best on", f"question + options best on {on}"
    rows = audit_rows(work / DEMO / "benchmarks/3d-rad")
    t6 = ", ".join(f"{k} {pct(r['question']['accuracy'])}" for k, r in letters(rows, "task6").items())
    yield "3d-rad demo: Task 6 (question + options)", t6


@figure("audit.micxr-40", "docs/audit.md", "small")
def _micxr_40(work: Path):
    rows = audit_rows(work / "small/mi40")
    for key in (("GTS", "multi_entity_interval_summary"), ("ICR", "icr_multi_abn")):
        yield f"40 patients, seed 0: {key[1]} ({reader(rows[key])}, {flag(rows[key])})", ci(best(rows[key]))


def _micxr_groups(rows: dict) -> dict[str, list[dict]]:
    """MI-CXR subtypes grouped as the Known results table groups them."""
    subs = {k[1]: r for k, r in rows.items() if k[0] != "ICR-V"}
    return {
        "TEL single / E→R / R→E / multiple `_1`": [subs[s] for s in (
            "single_emergence", "single_resolution", "emergence_to_resolution", "resolution_to_emergence",
            "multiple_emergence_1", "multiple_resolution_1")],
        "GTS single": [subs["single_entity_interval_summary"]], "GTS multi": [subs["multi_entity_interval_summary"]],
        "ICR": [subs["icr_multi_abn"]],
        "TEL multiple `_2`": [subs["multiple_emergence_2"], subs["multiple_resolution_2"]],
    }


def _ok(rows: list[dict], note: str) -> str:
    return f"{'ok' if not any(r['flagged'] for r in rows) else 'BLIND-SOLVABLE'} ({note})"


@figure("audit.known", "docs/audit.md", "seed1", "seed2")
def _known(work: Path):
    mi = [_micxr_groups(audit_rows(work / f"seed{s}/mi")) for s in (1, 2)]
    for group in mi[0]:
        note = '20; "always C" 33.3, see below' if group.endswith("`_2`") else "20"
        cells = (span(r["classifier"]["accuracy"] for r in m[group]) for m in mi)
        yield f"MI-CXR {group}", row("MI-CXR", group, *cells, _ok(mi[0][group] + mi[1][group], note))
    tm = [audit_rows(work / f"seed{s}/tm") for s in (1, 2)]
    for task, name, chance in (("vqa", "VQA (per named change)", "50"), ("image_pair", "image pair", "33.3")):
        seeds = [[r for k, r in rows.items() if k[0] == task] for rows in tm]
        if task == "vqa":
            chance += "; heuristic " + " / ".join(span(r["heuristic"]["accuracy"] for r in s) for s in seeds)
        yield f"TemMed {name}", row("TemMed", name, *(span(r["classifier"]["accuracy"] for r in s) for s in seeds),
                                    _ok(seeds[0] + seeds[1], chance))
    mx = [audit_rows(work / f"seed{s}/mxb")[("change", "(all)")] for s in (1, 2)]
    q = " / ".join(pct(r["question"]["accuracy"]) for r in mx)
    yield "MMXU (all)", row("MMXU (`--fit task`, 200 patients)", "all content types (`(all)`)",
                            *(pct(r["classifier"]["accuracy"]) for r in mx), _ok(mx, f"25; question + options {q}"))
    second = [r for m in mi for r in m["TEL multiple `_2`"]]
    yield "multiple_*_2 on 200 patients, both seeds", (
        f"heuristic {span(r['heuristic']['accuracy'] for r in second)}, options "
        f"{span(r['classifier']['accuracy'] for r in second)}, "
        f"{span((r['n'] for r in second), 1, 'd')} items per qtype")


@figure("audit.large", "docs/audit.md", "large1", "large2")
def _large_builds(work: Path):
    rows = [audit_rows(work / f"large{s}/mi") for s in (1, 2)]
    yield "builder", f"builder {manifest(work / 'large1/mi')['version']}"
    every = [r for rs in rows for k, r in rs.items() if k[0] != "ICR-V"]
    rest = [r for r in every if not r["subtype"].endswith("_2")]
    second = [r for r in every if r["subtype"].endswith("_2")]
    yield "items per qtype", f"{span((r['n'] for r in every), 1, 'd')} items per qtype"
    yield "the others", (f"options reader is at {span(r['classifier']['accuracy'] for r in rest)}% and its "
                         f"heuristic at {span(r['heuristic']['accuracy'] for r in rest)}%")
    flagged = [set(manifest(work / f"large{s}/mi")["audit"]["flagged"]) for s in (1, 2)]
    both = flagged[0] == flagged[1] == {f"TEL/{r['subtype']}" for r in second}
    yield "multiple_*_2", (f"heuristic {span(r['heuristic']['accuracy'] for r in second)}%, options "
                           f"{span(r['classifier']['accuracy'] for r in second)}%, "
                           + ("flagged on both seeds" if both else f"flagged: {flagged}"))


@figure("audit.icr-v-300", "docs/audit.md", "cohort300")
def _icr_v_300(work: Path):
    r = audit_rows(work / "cohort300/mi")[("ICR-V", "icr_variant")]
    yield f"ICR-V, best blind reader ({reader(r)})", f"{pct(best(r)['accuracy'])}% blind on the 300-patient test cohort"


@figure("audit.seed17", "docs/audit.md", "rad3d17")
def _seed17_audit(work: Path):
    t6 = letters(audit_rows(work / "rad3d17/audit.json"), "task6").values()
    hist = scores(work / "rad3d17/run-history")[("accuracy", "task:task6")]["value"]
    yield "seed-17 phantom", (f"{100 * micro(t6, 'question'):.1f} for the reader over {sum(r['n'] for r in t6):,} "
                              f"Task 6 items, {100 * hist:.2f} for `rad3d:history`")


def _rad3d_release(work: Path) -> dict[str, str]:
    """The released 3D-RAD audit's figures, as audit.md and 3d-rad.md write them."""
    rows = audit_rows(work / "released/rel-audit.json")
    t4 = [r for k, r in rows.items() if k[0] == "task4"]
    t5, t6 = letters(rows, "task5"), letters(rows, "task6")
    hist = scores(work / "released/rel-history")
    small = {k: r for k, r in t6.items() if k not in "bcd"}
    macro = sum(r["question"]["accuracy"] for r in t6.values()) / len(t6)
    open_rest = [r for (t, s), r in rows.items() if t in ("task2", "task3")]
    anat, path = rows[("task1", "Anatomical_observation")], rows[("task1", "Pathological_observation")]
    return {
        "task4": f"{span(r['heuristic']['accuracy'] for r in t4)} per label (chance 50), "
                 f"micro {100 * micro(t4, 'heuristic'):.2f}",
        "task5": f"{100 * micro(t5.values(), 'heuristic'):.1f} (b {pct(t5['b']['heuristic']['accuracy'])}, "
                 f"c {pct(t5['c']['heuristic']['accuracy'])}, d {pct(t5['d']['heuristic']['accuracy'])})",
        "task6": f"{100 * micro(t6.values(), 'question'):.2f} (b {pct(t6['b']['question']['accuracy'])}, "
                 f"c {pct(t6['c']['question']['accuracy'])}, d {pct(t6['d']['question']['accuracy'])})",
        "task6 ci": f"b {ci(t6['b']['question'])}, c {ci(t6['c']['question'])}, d {ci(t6['d']['question'])}, "
                    f"{min(small)}–{max(small)} {span(r['question']['accuracy'] for r in small.values())} "
                    f"({span((r['patients'] for r in small.values()), 1, 'd')} patients)",
        "task6 macro": f"macro {100 * macro:.2f} over the {len(t6)} audited letters",
        "history": f"{100 * hist[('accuracy', 'task:task6')]['value']:.2f}",
        "open": f"Anatomical_observation {ci(anat['question'])} (chance {pct(anat['chance'])}) and "
                f"Pathological_observation {ci(path['question'])} (chance {pct(path['chance'])})",
        "open rest": f"{span(r['question']['accuracy'] for r in open_rest)}",
    }


def _mmxu_release(work: Path) -> tuple[dict[str, dict], dict[str, dict]]:
    """The released MMXU audit by content type: fitted across content types (the build's), and within each."""
    across = {k[1]: r for k, r in audit_rows(work / "released/b").items()}
    within = {k[1]: r for k, r in audit_rows(work / "released/b-subtype.json").items()}
    return across, within


@figure("audit.released", "docs/audit.md", "released")
def _audit_released(work: Path):
    f = _rad3d_release(work)
    yield "3D-RAD Task 4", f"answer prior {f['task4']}"
    yield "3D-RAD Task 5", f"answer prior, micro {f['task5']}"
    yield "3D-RAD Task 6", f"question + options: {f['task6 ci']}"
    yield "3D-RAD Task 6 micro, rad3d:history", f"{f['task6'].split()[0]} against `rad3d:history`'s {f['history']}"
    yield "3D-RAD Task 6 macro", f["task6 macro"]
    yield "3D-RAD Tasks 1–3", f"{f['open']}; the other seven {f['open rest']}"
    across, within = _mmxu_release(work)
    a = across["(all)"]
    yield "MMXU row", (f"options {ci(a['classifier'])}, question + options {ci(a['question'])}, heuristic "
                       f"{ci(a['heuristic'])} (`{a['heuristic']['rule']}`)")
    per = (pct(across[c]["classifier"]["accuracy"]) for c in ("no change", "worsen", "improved"))
    yield "MMXU per content type", "our option reader gets {}% (no change {}, worsen {}, improved {}".format(
        pct(a["classifier"]["accuracy"]), *per)
    yield "MMXU fitted within content types", (
        f"option reader reads {span(r['classifier']['accuracy'] for r in within.values())}% and the question reader "
        f"{span(r['question']['accuracy'] for r in within.values())}%")
    el = audit_rows(work / "released/el")
    yield "ELTLM readers", f"both {span(best(r)['accuracy'] for r in el.values())}"


# ---------------------------------------------------------------------------------------------------- 3d-rad.md

@figure("3d-rad", "docs/3d-rad.md", "released", "rad3d17", "demo")
def _rad3d(work: Path):
    f = _rad3d_release(work)
    yield "released row", row(f["task4"], f["task5"], f["task6"], f["history"])
    rows = audit_rows(work / "rad3d17/audit.json")
    t6 = letters(rows, "task6")
    hist = scores(work / "rad3d17/run-history")[("accuracy", "task:task6")]
    per = ", ".join(f"{k} {pct(r['question']['accuracy'])}" for k, r in t6.items())
    yield "seed-17 row", f"| {100 * micro(t6.values(), 'question'):.1f} ({per}) | {100 * hist['value']:.2f} |"
    yield "seed-17 rad3d:history", f"Task 6: {ci({'accuracy': hist['value'], **hist})}"
    demo = audit_rows(work / DEMO / "benchmarks/3d-rad")
    cells = [span(best(r)["accuracy"] for (t, _), r in demo.items() if t == task) for task in ("task4", "task5")]
    per = ", ".join(f"{k} {pct(r['question']['accuracy'])}" for k, r in letters(demo, "task6").items())
    yield "demo row", f"| {cells[0]} | {cells[1]} | {per} | — |"
    yield "released open tasks", f"{f['open']}"
    yield "released open tasks, the rest", f"read {f['open rest']}"
    d = {s: pct(r["question"]["accuracy"]) for (t, s), r in demo.items() if t in ("task1", "task2")}
    yield "demo open tasks", (f"Task 1: {d['Anatomical_observation']} and {d['Pathological_observation']}; Task 2 "
                              f"Abnormality_type {d['Abnormality_type']}, "
                              f"Abnormality_position {d['Abnormality_position']}")


# ---------------------------------------------------------------------------------------------------- mmxu.md

def _bold(r: dict, key: str) -> str:
    """A reader's cell of docs/mmxu.md's tables: its accuracy in bold where it is the best reader."""
    acc = pct(r[key]["accuracy"])
    return f"**{acc}**{ci(r[key])[len(acc):]}" if r["best"] == key else ci(r[key])


@figure("mmxu", "docs/mmxu.md", "released", "seed1", "seed2", "mmxu100", "small", "demo")
def _mmxu(work: Path):
    across, within = _mmxu_release(work)
    wrong: dict[str, int] = {}
    for it in items(work / "released/b"):
        if it["meta"].get("blind_pick") != it["answer"]:
            for key in ("(all)", it["subtype"]):
                wrong[key] = wrong.get(key, 0) + 1
    for sub in ("(all)", "no change", "worsen", "improved"):
        r = across[sub]
        name = f"all (`(all)`{', flagged' if r['flagged'] else ''})" if sub == "(all)" else sub
        cells = [name, f"{r['n']:,}", _bold(r, "classifier"), _bold(r, "question"), _bold(r, "heuristic"),
                 f"{wrong.get(sub, 0):,}"]
        yield f"release, {sub}", row(*cells)
    a = across["(all)"]
    gap = float(pct(a["classifier"]["accuracy"])) - float(pct(a["question"]["accuracy"]))  # as the table reads
    yield "release: the gap to the next reader", f"{gap:.1f} points"
    yield "release: fitted within content types", (
        f"options {span(r['classifier']['accuracy'] for r in within.values())}%, question + options "
        f"{span(r['question']['accuracy'] for r in within.values())}% per content type")
    for label, bench in (("100 patients, seed 0", "mmxu100/mxb"), ("200 patients, seed 1", "seed1/mxb"),
                         ("200 patients, seed 2", "seed2/mxb")):
        r = audit_rows(work / bench)[("change", "(all)")]
        cells = [label, f"{r['n']:,}", _bold(r, "classifier"), _bold(r, "question"), _bold(r, "heuristic")]
        yield f"phantom, {label}", row(*cells)
    for s in (1, 2):
        rows = {k[1]: r for k, r in audit_rows(work / f"seed{s}/mxb").items() if k[1] != "(all)"}
        top = max(rows.values(), key=lambda r: best(r)["ci_low"])
        yield f"seed {s}: content type with the highest lower end ({top['subtype']})", (
            f"{reader(top)}{' reader' if top['best'] != 'heuristic' else ''} {ci(best(top))} on seed {s}")
    w = audit_rows(work / "small/mxb40")[("change", "worsen")]
    how = (f"the {w['heuristic']['rule'].replace('_', '-')} rule" if w["best"] == "heuristic"
           else f"the {reader(w)} reader")
    yield f"40-patient cohort, worsen ({flag(w)})", f"{w['n']} \"worsen\" items read {ci(best(w))} by {how}"
    n = sum(manifest(work / DEMO / "benchmarks/mmxu")["counts"]["task"].values())
    yield "demo questions", f"builds {n:,} questions"


# ---------------------------------------------------------------------------------- ms-cxr-t.md, medical-diff-vqa.md

@figure("ms-cxr-t", "docs/ms-cxr-t.md", "seed1", "seed2")
def _ms_cxr_t(work: Path):
    seeds = [audit_rows(work / f"seed{s}/mtb") for s in (1, 2)]
    prog = [[r for k, r in rows.items() if k[0] == "progression"] for rows in seeds]
    yield "labels", f"{sum(r['n'] for r in prog[0]):,} and {sum(r['n'] for r in prog[1]):,} labels"
    for one, two in zip(*prog, strict=True):
        cells = [one["subtype"].replace("_", " "), f"{one['n']} / {two['n']}", pct(one["chance"]),
                 f"{pct(best(one)['accuracy'])} ({reader(one)})", f"{pct(best(two)['accuracy'])} ({reader(two)})",
                 " / ".join(dict.fromkeys((flag(one), flag(two))))]
        yield one["subtype"], row(*cells)
    sent = [[r for k, r in rows.items() if k[0] == "sentence_similarity"] for rows in seeds]
    cells = [f"sentences ({' / '.join(r['subtype'] for r in sent[0])}; {sum(r['n'] for r in sent[0])} pairs)",
             span((r["n"] for s in sent for r in s), 1, "d"), pct(sent[0][0]["chance"]),
             *(f"{span(r[k]['accuracy'] for r in s for k in READER)} [intervals "
               f"{span([r[k]['ci_low'] for r in s for k in READER] + [r[k]['ci_high'] for r in s for k in READER])}]"
               for s in sent),
             " / ".join(dict.fromkeys(flag(r) for s in sent for r in s))]
    yield "sentences", row(*cells)


@figure("medical-diff-vqa", "docs/medical-diff-vqa.md", "seed1", "seed2")
def _diff_vqa(work: Path):
    seeds = [audit_rows(work / f"seed{s}/dvb") for s in (1, 2)]
    for key, one in seeds[0].items():
        two = seeds[1][key]
        name = key[0] if key[0] == key[1] else f"{key[0]} / {key[1]}"
        cells = [name, f"{one['n']} / {two['n']}", pct(one["chance"]),
                 *(f"{ci(best(r))} ({reader(r)})" for r in (one, two)),
                 " / ".join(dict.fromkeys((flag(one), flag(two))))]
        yield name, row(*cells)
    yield "questions", "({:,} and {:,} test questions.)".format(
        *(sum(manifest(work / f"seed{s}/dvb")["counts"]["task"].values()) for s in (1, 2)))


# ---------------------------------------------------------------------------------- eltlm.md, longitudinal-rrg.md

@figure("eltlm", "docs/eltlm.md", "demo", "released")
def _eltlm(work: Path):
    demo = work / DEMO
    preds = [json.loads(line) for line in (demo / "runs/eltlm-shuffled-timestamps/predictions.jsonl").open()]
    moved = sum(any(c.get("dates_moved") for c in p["calls"]) for p in preds)
    m = manifest(demo / "benchmarks/eltlm")
    n = sum(m["counts"]["task"].values())
    yield "demo: items whose real dates were moved", f"{moved} of {n} items, {100 * moved / n:.1f}%"
    yield "demo: date order differs from file order", f"{m['config']['date_order_differs']} of {n}"
    rows = audit_rows(demo / "benchmarks/eltlm")
    two = rows[("perception", "2_studies")]
    yield f"demo: perception/2_studies ({flag(two)})", (f"{ci(best(two)).replace(' [', '% [', 1)} of the two-study "
                                                        f"perception items (chance {pct(two['chance'])})")
    rest = (best(r)["accuracy"] for r in rows.values() if r is not two)
    yield "demo: every other length and task", f"reads {span(rest)}"
    released = audit_rows(work / "released/el").values()
    yield "release: both readers", f"both read {span(best(r)['accuracy'] for r in released)}"


@figure("longitudinal-rrg", "docs/longitudinal-rrg.md", "demo")
def _rrg(work: Path):
    demo = work / DEMO
    r = audit_rows(demo / "benchmarks/longitudinal-rrg")[("impression", "with_prior")]
    yield f"commonest impression ({flag(r)})", (f"matches {ci(best(r)).replace(' [', '% [', 1)} of the with-prior "
                                                "impressions")
    s = scores(demo / "runs/longitudinal-rrg-copy-prior")
    yield "copy-prior, findings, no prior: R2Gen-cleaned / raw ROUGE-L", (
        f"ROUGE-L {pct(s[('r2gen_rouge_l', 'subtypes:findings/No prior')]['value'])} / "
        f"{pct(s[('coco_rouge_l', 'subtypes:findings/No prior')]['value'])}")


# ---------------------------------------------------------------------------------- analyses.md, benchmarks.md

def _signed(x: str) -> str:
    return x.replace("-", "−")


@figure("analyses", "docs/analyses.md", "demo")
def _analyses(work: Path):
    demo = work / DEMO
    text = (demo / "report/mi-cxr/mi-cxr_analyses.md").read_text()
    agree = re.search(r"^\| micxr-describer:noisy-truth \(stagewise\).*\| (\d+) \| (\d+) \| ([\d.]+) \|", text, re.M)
    diff = re.search(r"^\| micxr-describer:noisy-truth \| stage-wise − direct \| overall \|.*?\| ([-+][\d.]+) \| "
                     r"\[([-+][\d.]+), ([-+][\d.]+)\] \| ([\d.]+) \|", text, re.M)
    assert agree and diff, "the MI-CXR analyses table has changed its layout"
    yield "describer agreement", f"{agree.group(3)} % over {int(agree.group(1)):,} intervals"
    yield "stage-wise − direct", (f"{_signed(diff.group(1))} points, 95 % CI [{_signed(diff.group(2))}, "
                                  f"{_signed(diff.group(3))}], McNemar p = {float(diff.group(4)):.2f}")
    answers = sum(RunFolder(run).scores().counts["answered"]
                  for run in (demo / "runs").glob("mi-cxr-*"))
    yield "MI-CXR answers in the demo report, its page", (
        f"MI-CXR with {answers:,} answers, is about {(demo / 'report/mi-cxr/report.html').stat().st_size / 1e6:.1f} MB")
    yield "MI-CXR items", f"`{sum(manifest(demo / 'benchmarks/mi-cxr')['counts']['task'].values()):,} × 3 repeats`"


@figure("benchmarks", "docs/benchmarks.md", "cohort300", "seed1")
def _benchmarks(work: Path):
    c = []
    for name in ("mi", "mi-no-mix"):
        mr2 = [i for i in items(work / "cohort300" / name) if i["subtype"] == "multiple_resolution_2"]
        c.append((sum(i["answer"] == "C" for i in mr2), len(mr2)))
    yield "300-patient cohort, multiple_resolution_2", f"keeps {c[0][0]} C ({c[0][1]} items)"
    yield "  the same with --no-mix", f"with `--no-mix` all {c[1][0]} stay ({c[1][1]} items)"
    me2 = [i for i in items(work / "seed1/mi") if i["subtype"] == "multiple_emergence_2"]
    uniform = sum(i["meta"]["pattern"] != "mixed" for i in me2)
    e = sum(i["answer"] == "E" for i in me2)
    yield "seed 1, multiple_emergence_2: uniform items, E", (f"{100 * uniform / len(me2):.1f}% with it, "
                                                              f"E {100 * e / len(me2):.1f}%")
    avg = [pct(scores(work / "seed1" / run)[("temmed_report_avg", "overall")]["value"])
           for run in ("hack", "hack-patient")]
    yield "top-1 retrieval hack, report average", f"is {avg[0]} with the random split and {avg[1]} patient-disjoint"


# ---------------------------------------------------------------------------------------------------- running

def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def _timed(argv: list[str]) -> dict[str, float | str]:
    """Run ``medtemporal ARGV`` in a process of its own, as a user does: wall and CPU seconds, load at the start."""
    before, start, load = os.times(), time.perf_counter(), _load()
    subprocess.run([str(Path(sys.executable).with_name("medtemporal")), *argv], check=False, stdout=subprocess.DEVNULL)
    after = os.times()
    cpu = after.children_user + after.children_system - before.children_user - before.children_system
    return {"wall_s": round(time.perf_counter() - start, 1), "cpu_s": round(cpu, 1), "load": load}


def _target(argv: list[str]) -> str | None:
    for option in ("--out", "--json"):
        if option in argv:
            return argv[argv.index(option) + 1]
    return None


def run_setup(name: str, work: Path, official: Path) -> None:
    """Run a setup's commands in its folder, skipping those whose output exists."""
    from medtemporal.cli import main

    folder = work / name
    folder.mkdir(parents=True, exist_ok=True)
    if name == "released":
        for link, rel in OFFICIAL_LINKS.items():
            if not (folder / link).exists():
                (folder / link).symlink_to((official / rel).resolve())
    timing = folder / "timing.json"
    timings = json.loads(timing.read_text()) if timing.exists() else {}
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        for command in SETUPS[name]:
            argv = shlex.split(command)
            is_timed = argv[0] == "time"
            argv = argv[is_timed:]
            target = _target(argv)
            if target and Path(target).exists():
                continue
            print(f"[{name}] $ {'time ' * is_timed}medtemporal {shlex.join(argv)}", file=sys.stderr, flush=True)
            if is_timed:
                timings[target] = _timed(argv)
                timing.write_text(json.dumps(timings))
            elif (code := main(argv)) != 0 and not (code == 1 and argv[0] == "audit"):
                raise SystemExit(f"`medtemporal {command}` exited {code}")
    finally:
        os.chdir(cwd)


def _flat(text: str) -> str:
    return " ".join(text.split())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", type=Path, default=Path.home() / ".cache/medtemporal/bench/docs-figures")
    p.add_argument("--official", type=Path, default=ROOT.parent / "shared" / "official")
    p.add_argument("--only", action="append", default=[], help="figures whose name contains this (repeatable)")
    p.add_argument("--list", action="store_true", help="list figures, docs and setups; run nothing")
    p.add_argument("--fresh", action="store_true", help="remove the chosen figures' setup folders first")
    args = p.parse_args()
    chosen = [f for f in FIGURES if not args.only or any(o in f.name for o in args.only)]
    if args.list:
        for f in chosen:
            print(f"{f.name:20} {f.doc:28} {', '.join(f.setups)}")
        for name in sorted({s for f in chosen for s in f.setups}):
            print(f"\n[{name}]\n" + "\n".join(f"  medtemporal {c}" for c in SETUPS[name]))
        return
    if not args.official.is_dir():
        print(f"{args.official} is absent: the figures of the released files are skipped.", file=sys.stderr)
        chosen = [f for f in chosen if "released" not in f.setups]
    started, load = time.perf_counter(), _load()
    for name in dict.fromkeys(s for f in chosen for s in f.setups):
        if args.fresh:
            shutil.rmtree(args.work / name, ignore_errors=True)
        run_setup(name, args.work, args.official)
    cpu = sum(os.times()[:4])
    print(f"setups: {time.perf_counter() - started:.0f} s wall, {cpu:.0f} s CPU (load average {load} at the start, "
          f"{_load()} at the end)", file=sys.stderr)
    missing = 0
    for f in chosen:
        text = "" if f.timing else _flat((ROOT / f.doc).read_text(encoding="utf-8"))
        print(f"\n== {f.name} ({f.doc})")
        for label, value in f.read(args.work):
            absent = not f.timing and _flat(value) not in text
            missing += absent
            print(f"  {label:58} {value}    [{'timing' if f.timing else 'NOT IN DOC' if absent else 'in doc'}]")
    print(f"\n{missing} figure(s) not in their docs.")
    raise SystemExit(missing > 0)


if __name__ == "__main__":
    main()
