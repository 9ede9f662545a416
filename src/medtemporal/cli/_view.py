"""``medtemporal view PATH [PATH ...]``: browse every run under some folders on 127.0.0.1 until Ctrl-C."""

from __future__ import annotations

import argparse
from pathlib import Path


def add(sub: argparse._SubParsersAction) -> None:
    """Register ``medtemporal view``."""
    p = sub.add_parser("view", help="browse runs and their reports on 127.0.0.1 (loopback only)",
                       description="Serve an index of every run folder under the paths given, each run's report with "
                                   "its per-item viewer, and the runs of one benchmark together, on 127.0.0.1 (never "
                                   "another address). Prints the URL at once; a page is written when first opened. "
                                   "Stops on Ctrl-C.")
    p.add_argument("runs", nargs="+", type=Path, metavar="PATH",
                   help="a run folder written by `medtemporal run`, or a folder holding run folders (at any depth)")
    p.add_argument("--port", type=int, default=0, metavar="PORT", help="port on 127.0.0.1 (default 0: any free port)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted (Ctrl-C), then remove the pages built."""
    from medtemporal.serve import ReportServer

    server = ReportServer(args.runs, args.port)
    thread = server.start()
    print(f"serving {server.url} (Ctrl-C to stop; every run: http://127.0.0.1:{server.port}/)", flush=True)
    try:
        while thread.is_alive():
            thread.join(0.5)
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        server.close()
    return 0
