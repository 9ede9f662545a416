"""How long the blind-solvability audit takes on every family's demo build (it runs inside ``medtemporal build``).

Writes the demo (every registered family's phantoms and benchmark, ``medtemporal demo``) once into ``--work``,
then times ``medtemporal audit`` on each benchmark in this process: the best of ``--repeats``, wall and CPU
seconds. Run it with another checkout's ``src`` first on ``PYTHONPATH`` to compare two versions in one session.

    .venv/bin/python bench/audit_speed.py [--repeats 2] [--work DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
import time
from pathlib import Path

from medtemporal.cli import main as cli


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=2, help="timed audits per family; the fastest is reported")
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "medtemporal-audit-speed",
                   help="the demo's folder, written once and reused")
    args = p.parse_args()
    if not (args.work / "benchmarks").is_dir():
        with contextlib.redirect_stdout(io.StringIO()):
            cli(["demo", "--out", str(args.work), "--no-progress"])
    out, load = {}, f"{os.getloadavg()[0]:.1f}"
    for bench in sorted(p for p in (args.work / "benchmarks").iterdir() if (p / "manifest.json").exists()):
        walls, cpus = [], []
        for _ in range(args.repeats):
            start, cpu = time.perf_counter(), time.process_time()
            with contextlib.redirect_stdout(io.StringIO()):
                cli(["audit", str(bench), "--json", str(args.work / f"audit-{bench.name}.json")])
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
        out[bench.name] = {"wall_s": round(min(walls), 2), "cpu_s": round(min(cpus), 2)}
    print(json.dumps({"load_average_at_start": load, "families": out}, indent=2))


if __name__ == "__main__":
    main()
