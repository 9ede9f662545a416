"""How close the runner comes to the ideal wall time against a slow endpoint.

1,500 five-image items against the loopback OpenAI-compatible test server
(separate process) answering after 250 ms, concurrency 32. Ideal wall time
= items × latency / concurrency = 11.7 s; prints wall / ideal (target <= 1.10).
The wall time is that of the whole `run` call (benchmark loading, image
hashing and encoding, config, cache, predictions) in a process that has
already imported its modules; the one-off import time is printed too.
Then the same run as a user starts it, ``medtemporal run`` in a fresh
process (``--no-score``, into a new folder and cache), timed from process
start to exit: whole-process wall / ideal (target <= 1.15).

    .venv/bin/python bench/harness_efficiency.py [--items 1500] [--latency 0.25] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from _synthetic import make_benchmark  # noqa: E402
from helpers.fake_openai import FakeOpenAI  # noqa: E402

from medtemporal import registry  # noqa: E402
from medtemporal.runner import run  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=1500)
    p.add_argument("--latency", type=float, default=0.25)
    p.add_argument("--concurrency", type=int, default=32)
    args = p.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    start = time.perf_counter()
    import openai  # noqa: F401  (the backend imports it lazily; a one-off cost of the process)

    registry.names("backend")  # the first lookup imports every built-in plugin module
    imports = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI.spawn(latency=args.latency, record_images=False) as server:
        root = Path(tmp)
        bench = make_benchmark(root, args.items)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        summary = run(bench, server.uri(), root / "run", concurrency=args.concurrency,
                      cache_path=root / "cache.sqlite", progress=False, score=False)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        stats = server.stats()
        # the same run as a user starts it: a fresh process (the synthetic family registered first)
        code = (f"import sys; sys.path.insert(0, {str(HERE)!r}); import _synthetic; "
                "from medtemporal.cli import main; sys.exit(main(sys.argv[1:]))")
        whole, child_cpu = {}, {}
        for client in ("httpx", "aiohttp"):
            argv = [sys.executable, "-c", code, "run", str(bench), "--model", server.uri(), "--out",
                    str(root / f"run-{client}"), "--concurrency", str(args.concurrency), "--cache",
                    str(root / f"cache-{client}.sqlite"), "--no-progress", "--no-score",
                    "--option", f"http_client={client}"]
            t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run(argv, capture_output=True, text=True)
            whole[client], r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
            child_cpu[client] = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
            if done.returncode != 0:
                raise SystemExit(f"medtemporal run failed:\n{done.stdout}{done.stderr}")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code, "--version"], capture_output=True, check=True)
        startup = time.perf_counter() - t0
    if summary.done != args.items:
        raise SystemExit(f"the bench run did not answer every item:\n{summary}")
    ideal = args.items * args.latency / args.concurrency
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(f"items {args.items}, latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}, "
          f"server saw at most {stats['max_inflight']} in flight")
    print(f"wall {wall:.2f} s, ideal {ideal:.2f} s, wall/ideal {wall / ideal:.3f} (target <= 1.10)")
    print(f"one-off imports {imports:.2f} s; counting them, wall/ideal {(wall + imports) / ideal:.3f}")
    print(f"client CPU {cpu:.2f} s = {cpu / args.items * 1000:.2f} ms per item (openai client included)")
    for client, wall_s in whole.items():
        print(f"whole process (`medtemporal run --option http_client={client}`, start to exit): {wall_s:.2f} s, "
              f"wall/ideal {wall_s / ideal:.3f} (target <= 1.15); its CPU {child_cpu[client]:.2f} s")
    print(f"bare start-up and exit (`--version`) {startup:.2f} s")


if __name__ == "__main__":
    main()
