"""``medtemporal leaderboard DIR ... --out SITE``: every model × every family as a static site (`medtemporal.leaderboard`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from medtemporal.progress import add_no_progress


def add(sub: argparse._SubParsersAction) -> None:
    """Register ``medtemporal leaderboard``."""
    p = sub.add_parser("leaderboard", help="a static site of every model x every family beside the published rows "
                       "(no server needed)")
    p.add_argument("runs", nargs="+", type=Path, metavar="DIR",
                   help="a run folder, or a folder of runs (an eval set's out folder); all runs under it are read")
    p.add_argument("--out", type=Path, required=True, metavar="SITE", help="the folder the site is written to")
    p.add_argument("--no-paired", dest="paired", action="store_false",
                   help="leave out the pairwise tests (quicker for many runs)")
    add_no_progress(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Score stale runs (the leaderboard, like the report, only reads), write the site and name its front page."""
    from medtemporal.leaderboard import write_leaderboard
    from medtemporal.scoring.runs import score_stale

    for path in score_stale(args.runs):
        print(f"scored {path} (its scores were missing or older than its predictions)")

    written = write_leaderboard(args.runs, args.out, paired=args.paired)
    print(f"wrote {len(written)} files; open {args.out / 'index.html'} (or put {args.out} on any static host)")
    return 0
