"""Items per second of a run sharded over 1, 2 and 4 CPU replicas on a local Ray cluster, against linear.

Each replica is ``baseline:random`` paced to ``--latency`` seconds per answer,
one answer at a time (a model on one device), so a replica's ideal rate is
1 / latency and N replicas' is N / latency. The clock runs over the `run` call
with the replicas already started (their start-up is printed apart); the run
writes predictions and scores exactly as a one-process run.

    .venv/bin/python bench/ray_scaling.py [--items 400] [--latency 0.05] [--replicas 1 2 4]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _synthetic import make_benchmark  # noqa: E402

from medtemporal.runner import run  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=400)
    p.add_argument("--latency", type=float, default=0.05)
    p.add_argument("--replicas", type=int, nargs="+", default=[1, 2, 4])
    args = p.parse_args()
    import ray

    from medtemporal.backends.ray_pool import RayPool

    ray.init(num_cpus=max(args.replicas), include_dashboard=False, log_to_driver=False)
    rates = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bench = make_benchmark(root, args.items, images=False)
        for n in args.replicas:
            t0 = time.perf_counter()
            pool = RayPool("baseline:random", {"latency_s": args.latency}, replicas=n, num_cpus=1)
            started = time.perf_counter() - t0
            t0 = time.perf_counter()
            summary = run(bench, pool, root / f"run{n}", progress=False, score=False)
            wall = time.perf_counter() - t0
            for replica in pool.replicas:
                ray.kill(replica, no_restart=True)
            if summary.done != args.items:
                raise SystemExit(f"the bench run did not answer every item:\n{summary}")
            rates[n] = args.items / wall
            ideal = n / args.latency
            print(f"{n} replica(s): {rates[n]:.1f} items/s (ideal {ideal:.1f}), {rates[n] / ideal:.3f} of ideal; "
                  f"replicas started in {started:.1f} s; answered per replica {sorted(pool.served_by.values())}")
    base = rates[args.replicas[0]] / args.replicas[0]
    for n in args.replicas[1:]:
        print(f"scaling {args.replicas[0]} -> {n} replicas: x{rates[n] / rates[args.replicas[0]]:.2f} "
              f"(linear x{n / args.replicas[0]:.0f}), ratio to linear {rates[n] / (base * n):.3f}")
    ray.shutdown()


if __name__ == "__main__":
    main()
