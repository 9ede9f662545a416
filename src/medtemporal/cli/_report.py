"""``medtemporal report RUN [RUN ...]``: Markdown, CSV and HTML tables and charts of scored runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from medtemporal.progress import add_no_progress
from medtemporal.report import DEFAULT_FORMATS, FORMATS, parse_formats, write_report


def add(sub: argparse._SubParsersAction) -> None:
    """Register ``medtemporal report``."""
    p = sub.add_parser("report", help="write report.md / .csv / .html for runs (scoring them first if needed)")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folder written by `medtemporal run`")
    p.add_argument("--out", type=Path, metavar="DIR", help="write one report here instead of into each run folder")
    p.add_argument("--formats", default=",".join(DEFAULT_FORMATS), metavar="LIST",
                   help=f"comma-separated, any of {','.join(FORMATS)} (default {','.join(DEFAULT_FORMATS)})")
    p.add_argument("--single-file", action="store_true",
                   help="make report.html self-contained (charts, thumbnails and item data inline) instead of "
                        "loading them from the assets/ folder beside it")
    add_no_progress(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Score stale runs (the report itself only reads), then write the report files and list them."""
    from medtemporal.scoring.runs import score_stale

    for path in score_stale(args.runs):
        print(f"scored {path} (its scores were missing or older than its predictions)")
    for path in write_report(args.runs, args.out, parse_formats(args.formats), single_file=args.single_file):
        print(f"wrote {path}")
    return 0
