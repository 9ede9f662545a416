"""How long ``build 3d-rad`` takes over a 1,304-patient phantom label set (CT-RATE validation size, no volumes).

Writes the phantom CSVs (``write_ct_rate(volumes=False, profile="ct-rate")``: about 1.2 scans per patient), then times the build of all six tasks
with ``--no-volume-check`` (labels and reports only), and in the same process the time to just read the
label, report and metadata CSVs with pandas, so the ratio build / read says how much the builder adds to
reading its input whatever the machine's speed. Target (issue #10): at most 10 s.

    .venv/bin/python bench/rad3d_build.py [--patients 1304] [--repeats 3]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

import pandas as pd

from medtemporal.benchmarks.rad3d.command import build
from medtemporal.phantoms.ct_rate import write_ct_rate

TARGET_S = 10.0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--patients", type=int, default=1304)
    p.add_argument("--profile", default="ct-rate", choices=("ct-rate", "longitudinal"),
                   help="scans per patient (default %(default)s: about 1.2, as CT-RATE's validation split)")
    p.add_argument("--repeats", type=int, default=3, help="timed builds; the fastest is reported")
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rad3d-build-"))
    try:
        write_ct_rate(work / "ct", patients=args.patients, seed=0, volumes=False, profile=args.profile)
        options = argparse.Namespace(ct_rate=work / "ct", split="valid", official=None, volume_prefix="valid",
                                     volume_map=None, image_root=None, tasks="task1,task2,task3,task4,task5,task6",
                                     no_volume_check=True, out=work / "bench", seed=0)
        csvs = sorted((work / "ct" / "dataset").rglob("*.csv"))
        reads = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            for path in csvs:
                pd.read_csv(path)
            reads.append(time.perf_counter() - start)
        walls, cpus = [], []
        for _ in range(args.repeats):
            start, cpu = time.perf_counter(), time.process_time()
            items, manifest = build(options)
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
        best, read = min(walls), min(reads)
        print(f"{args.patients} patients → {len(items)} items {dict(sorted(Counter(i.task for i in items).items()))}")
        print(f"read {len(csvs)} CSVs (pandas): {read:.2f} s")
        print(f"build: {best:.2f} s wall (best of {args.repeats}), {min(cpus):.2f} s CPU "
              f"(CPU / wall {min(cpus) / best:.2f}: below 1 when the machine is busy)")
        print(f"ratio build / read {best / read:.0f}; ratio build / target {best / TARGET_S:.2f} "
              f"(target ≤ {TARGET_S:g} s: {'met' if best <= TARGET_S else 'NOT met'})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
