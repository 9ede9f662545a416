"""``medtemporal view RUN [RUN ...]``: serve the report and its per-item viewer on 127.0.0.1 until Ctrl-C."""

from __future__ import annotations

import argparse
from pathlib import Path


def add(sub: argparse._SubParsersAction) -> None:
    """Register ``medtemporal view``."""
    p = sub.add_parser("view", help="serve the report and its per-item viewer on 127.0.0.1 (loopback only)",
                       description="Write the HTML report of the runs into a temporary folder and serve it on "
                                   "127.0.0.1 (never another address); prints the URL, stops on Ctrl-C.")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folder written by `medtemporal run`")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default 0: any free port)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted (Ctrl-C), then remove the temporary report."""
    from medtemporal.report.serve import ReportServer

    server = ReportServer(args.runs, args.port)
    print(f"serving {server.url} (Ctrl-C to stop)", flush=True)
    thread = server.start()
    try:
        while thread.is_alive():
            thread.join(0.5)
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        server.close()
    return 0
