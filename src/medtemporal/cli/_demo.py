"""``medtemporal demo``: the whole pipeline on phantom data, as the commands a user would type.

Each step is printed as its ``medtemporal ...`` command and then run, so the
demo doubles as a tutorial. Phantoms already in the output folder are reused
and runs resume, so a second demo is quick.
"""

from __future__ import annotations

import argparse
import shlex
import time
from pathlib import Path

BASELINES = ("baseline:random", "baseline:constant-A", "baseline:majority")


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="phantoms -> build -> run baselines -> score -> report, offline")
    p.add_argument("--out", type=Path, default=Path("demo-out"), help="output folder (default demo-out)")
    p.add_argument("--patients", type=int, default=40, help="phantom CXR patients (default 40)")
    p.add_argument("--seed", type=int, default=0, help="seed of phantoms and builds (default 0)")
    p.set_defaults(func=run)


def _slug(uri: str) -> str:
    return uri.split(":", 1)[1]


def mi_cxr_steps(out: Path, patients: int, seed: int) -> list[list[str]]:
    """Commands of the MI-CXR section."""
    data, bench = out / "phantoms" / "cxr", out / "benchmarks" / "mi-cxr"
    steps = [] if (data / "phantom_truth.jsonl").is_file() else [
        ["phantoms", "cxr", "--patients", str(patients), "--seed", str(seed), "--out", str(data)]
    ]
    steps.append(["build", "mi-cxr", "--mimic-cxr-jpg", str(data / "mimic-cxr-jpg"),
                  "--qba", str(data / "mimic-ext-cxr-qba"), "--seed", str(seed), "--out", str(bench)])
    runs = [out / "runs" / f"mi-cxr-{_slug(m)}" for m in BASELINES]
    steps += [["run", str(bench), "--model", m, "--out", str(r), "--no-progress"] for m, r in zip(BASELINES, runs)]
    steps.append(["report", *map(str, runs), "--out", str(out / "report" / "mi-cxr")])
    return steps


def run(args: argparse.Namespace) -> int:
    from medtemporal.cli import main

    started = time.perf_counter()
    for section, steps in (("MI-CXR", mi_cxr_steps(args.out, args.patients, args.seed)),):
        print(f"\n== {section} ==")
        for argv in steps:
            print(f"$ medtemporal {shlex.join(argv)}", flush=True)
            if main(argv) != 0:
                return 1
    print(f"\nDemo finished in {time.perf_counter() - started:.0f} s. Open {args.out / 'report'}/*/report.html")
    return 0
