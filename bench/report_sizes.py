"""The size of each family's HTML report written from a demo output: the page, its assets, and the time taken.

Reads the runs of ``medtemporal demo --out DEMO_OUT`` (each family's demo section names them) and writes each
family's report into ``--out`` (never into the demo folder), then prints per family the size of ``report.html``,
of its ``assets/`` folder and the seconds it took; ``--single-file`` measures the self-contained page instead.
The target: the largest ``report.html`` at most 5 MB (issue 22).

    .venv/bin/python bench/report_sizes.py demo-out --out /tmp/report-sizes [--single-file]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from medtemporal.registry import lookup, names
from medtemporal.report import write_report

TARGET = 5 * 1024**2


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("demo", type=Path, help="folder written by `medtemporal demo --out`")
    p.add_argument("--out", type=Path, required=True, help="where the reports are written")
    p.add_argument("--single-file", action="store_true")
    args = p.parse_args()
    largest = 0
    for name in names("benchmark"):
        demo = lookup("benchmark", name).obj.demo
        if demo is None:
            continue
        section = demo(args.demo, 100, 0)
        if not all((run / "predictions.jsonl").is_file() for run in section.runs):
            continue
        os.environ.update(section.env or {})
        start = time.perf_counter()
        write_report(section.runs, args.out / name, ("html",), single_file=args.single_file)
        seconds = time.perf_counter() - start
        page = (args.out / name / "report.html").stat().st_size
        assets = sum(f.stat().st_size for f in (args.out / name).glob("assets/**/*") if f.is_file())
        largest = max(largest, page)
        print(f"{name:8s} report.html {page / 1024**2:6.2f} MB   assets {assets / 1024**2:6.2f} MB   {seconds:5.1f} s")
    print(f"largest report.html {largest / 1024**2:.2f} MB (target <= {TARGET / 1024**2:.0f} MB): "
          f"{'met' if largest <= TARGET else 'NOT met'}")
    return 0 if largest <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
