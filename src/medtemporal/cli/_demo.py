"""``medtemporal demo``: the whole pipeline on phantom data, as the commands a user would type.

Each step is printed as its ``medtemporal ...`` command and then run, so the
demo doubles as a tutorial. Phantoms already in the output folder are reused,
builds are redone, and runs resume, so a second demo is quick.
"""

from __future__ import annotations

import argparse
import shlex
import time
from pathlib import Path

BASELINES = ("baseline:random", "baseline:constant-A", "baseline:majority")
CLOSED = "vqa,image_pair"
TEMMED_RUNS = (
    ("direct", (), CLOSED),
    *((p, (f"k={k}",), CLOSED) for p in ("rag-text", "rag-multimodal") for k in (1, 3, 5)),
    ("retrieval-top1", (), "report"),
)
"""(protocol, protocol options, tasks): closed-book, RAG at k = 1, 3, 5, and the top-1 report hack."""


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="phantoms -> build -> run baselines -> score -> report, offline")
    p.add_argument("--out", type=Path, default=Path("demo-out"), help="output folder (default demo-out)")
    p.add_argument("--patients", type=int, default=100, help="phantom patients per dataset (default 100)")
    p.add_argument("--seed", type=int, default=0, help="seed of phantoms and builds (default 0)")
    p.set_defaults(func=run)


def mi_cxr_steps(out: Path, patients: int, seed: int) -> list[list[str]]:
    """MI-CXR: CXR phantoms, build, three baselines, one report."""
    data, bench = out / "phantoms" / "cxr", out / "benchmarks" / "mi-cxr"
    steps = [] if (data / "phantom_truth.jsonl").is_file() else [
        ["phantoms", "cxr", "--patients", str(patients), "--seed", str(seed), "--out", str(data)]
    ]
    steps.append(["build", "mi-cxr", "--mimic-cxr-jpg", str(data / "mimic-cxr-jpg"),
                  "--qba", str(data / "mimic-ext-cxr-qba"), "--seed", str(seed), "--out", str(bench), "--overwrite"])
    runs = [out / "runs" / f"mi-cxr-{m.split(':', 1)[1]}" for m in BASELINES]
    steps += [["run", str(bench), "--model", m, "--out", str(r), "--no-progress"] for m, r in zip(BASELINES, runs)]
    steps.append(["report", *map(str, runs), "--out", str(out / "report" / "mi-cxr")])
    return steps


def temmed_steps(out: Path, patients: int, seed: int) -> list[list[str]]:
    """TemMed-Bench: CheXpert Plus phantoms, build, random baseline closed-book and RAG, top-1 hack, report."""
    data, bench = out / "phantoms" / "chexpert-plus", out / "benchmarks" / "temmed"
    steps = [] if (data / "phantom_truth.jsonl").is_file() else [
        ["phantoms", "chexpert-plus", "--patients", str(patients), "--seed", str(seed), "--image-size", "128",
         "--out", str(data)]
    ]
    steps.append(["build", "temmed", "--chexpert-plus", str(data), "--seed", str(seed),
                  "--test-size", str(max(10, patients // 3)), "--vqa-items", "100", "--out", str(bench), "--overwrite"])
    runs: list[Path] = []
    for protocol, options, tasks in TEMMED_RUNS:
        runs.append(out / "runs" / "-".join(["temmed", protocol, *(o.replace("=", "") for o in options)]))
        steps.append(["run", str(bench), "--model", "baseline:random", "--protocol", protocol, "--tasks", tasks,
                      *(a for o in options for a in ("--protocol-option", o)), "--out", str(runs[-1]), "--no-progress"])
    steps.append(["report", *map(str, runs), "--out", str(out / "report" / "temmed")])
    return steps


def run(args: argparse.Namespace) -> int:
    from medtemporal.cli import main

    started = time.perf_counter()
    sections = {"MI-CXR": mi_cxr_steps, "TemMed-Bench": temmed_steps}
    for title, steps in sections.items():
        print(f"\n== {title} ==")
        for argv in steps(args.out, args.patients, args.seed):
            print(f"$ medtemporal {shlex.join(argv)}", flush=True)
            if main(argv) != 0:
                return 1
    print(f"\nDemo finished in {time.perf_counter() - started:.0f} s. Reports: "
          f"{args.out / 'report' / 'mi-cxr' / 'report.html'} and {args.out / 'report' / 'temmed' / 'report.html'}")
    return 0
