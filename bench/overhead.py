"""CPU time the runner itself spends per item, against a backend that answers instantly.

A zero-latency in-process backend (cacheable, so the response cache is
exercised), text-only items (images excluded), direct protocol; prints the
process CPU time of the run over the number of items (target <= 3 ms).
Scoring (`score_run`) is a separate step and not included.

    .venv/bin/python bench/overhead.py [--items 3000] [--concurrency 32]
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

from medtemporal.backends.base import Backend, Request, Response  # noqa: E402
from medtemporal.registry import register  # noqa: E402
from medtemporal.runner import run  # noqa: E402


class InstantBackend(Backend):
    """Answers every request at once."""

    async def generate(self, request: Request) -> Response:
        return Response("The answer is C.", input_tokens=120, output_tokens=5, model="instant")


@register("backend", "instant", description="zero-latency backend for bench/overhead.py")
def load_instant(uri: str, target: str) -> InstantBackend:
    return InstantBackend(uri=uri, concurrency=32)


def measure(bench: Path, out: Path, cache: Path | None, concurrency: int) -> tuple[float, float]:
    """Process CPU and wall seconds of one run of ``bench`` (response cache at ``cache``, or none)."""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    summary = run(bench, "instant:now", out, concurrency=concurrency, no_cache=cache is None, cache_path=cache,
                  progress=False, score=False)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    if summary.n_errors or summary.pending:
        raise SystemExit(f"the bench run did not answer every item:\n{summary}")
    return cpu, wall


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=3000)
    p.add_argument("--concurrency", type=int, default=32)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bench = make_benchmark(root, args.items, images=False)
        measure(bench, root / "warm-up", None, args.concurrency)  # imports, first-call costs
        for label, cache in (("with response cache", root / "cache.sqlite"), ("without cache", None)):
            cpu, wall = measure(bench, root / label.replace(" ", "-"), cache, args.concurrency)
            print(f"{label:<20} {args.items} items: CPU {cpu:.2f} s, wall {wall:.2f} s -> "
                  f"{cpu / args.items * 1000:.2f} ms CPU per item (target <= 3)")


if __name__ == "__main__":
    main()
