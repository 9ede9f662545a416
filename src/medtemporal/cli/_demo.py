"""``medtemporal demo``: the whole pipeline on phantom data, as the commands a user would type.

Each registered family that has a demo section (`BenchmarkSpec.demo`)
contributes its steps. Each step is printed as its ``medtemporal ...`` command
(after any ``export`` of the section's environment, `DemoSection.env`) and then
run, so the demo doubles as a tutorial. Phantoms already in the
output folder are reused, builds are redone, and runs resume, so a second demo
is quick.
"""

from __future__ import annotations

import argparse
import os
import shlex
import time
from pathlib import Path

from medtemporal.progress import add_no_progress


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="phantoms -> build -> run baselines -> score -> report, offline")
    p.add_argument("--out", type=Path, default=Path("demo-out"), metavar="DIR", help="output folder (default demo-out)")
    p.add_argument("--patients", type=int, default=100, metavar="N", help="phantom patients per dataset (default 100)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="seed of phantoms and builds (default 0)")
    add_no_progress(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from medtemporal.cli import main
    from medtemporal.registry import entries

    started = time.perf_counter()
    reports = []
    for entry in entries("benchmark"):
        if entry.obj.demo is None:
            continue
        section = entry.obj.demo(args.out, args.patients, args.seed)
        print(f"\n== {section.title} ==")
        saved = {name: os.environ.get(name) for name in section.env}
        try:
            for name, value in section.env.items():
                print(f"$ export {name}={shlex.quote(value)}")
                os.environ[name] = value
            for argv in section.commands():
                print(f"$ medtemporal {shlex.join(argv)}", flush=True)
                if main(argv) != 0:
                    return 1
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        reports.append(str(section.report))
    print(f"\nDemo finished in {time.perf_counter() - started:.0f} s. Reports: {', '.join(reports)}")
    return 0
