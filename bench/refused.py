"""How long a run takes to stop when nothing listens at its endpoint (target: within 15 s, saying "refused").

A loopback port is held by a socket that never listens, so the kernel refuses every connection; the command
is ``medtemporal run BENCH --model openai+http://127.0.0.1:PORT/v1:M`` exactly as a user types it (in this
process, through the real ``openai`` client), once per HTTP transport. Prints the wall time, the exit
status, the model calls and the summary's "Stopped early" line.

    .venv/bin/python bench/refused.py [--items 400]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import socket
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _synthetic import make_benchmark  # noqa: E402

from medtemporal.cli import main  # noqa: E402


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        bench = make_benchmark(Path(tmp), args.items)
        for client in ("aiohttp", "httpx"):
            out = Path(tmp) / f"run-{client}"
            printed = io.StringIO()
            start = time.perf_counter()
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
                code = main(["run", str(bench), "--model", f"openai+http://127.0.0.1:{port}/v1:M", "--out", str(out),
                             "--no-cache", "--no-progress", "--option", f"http_client={client}"])
            wall = time.perf_counter() - start
            text = printed.getvalue()
            calls = text.split(" model calls")[0].rsplit("(", 1)[-1]
            stopped = next((line for line in text.splitlines() if line.startswith("Stopped early")), "not stopped")
            print(f"{client:8s} wall {wall:5.2f} s  exit {code}  model calls {calls}  of {args.items} items")
            print(f"         {stopped[:160]}")


if __name__ == "__main__":
    main_bench()
