"""``medtemporal score RUN [RUN ...]``: write each run's ``scores.json`` and print the headline table."""

from __future__ import annotations

import argparse
from pathlib import Path

from medtemporal.report import load_runs
from medtemporal.report.tables import headline
from medtemporal.scoring import score_run
from medtemporal.scoring.ci import CONFIDENCE, RESAMPLES


def add(sub: argparse._SubParsersAction) -> None:
    """Register ``medtemporal score``."""
    p = sub.add_parser("score", help="score runs: each task's metrics with patient-clustered 95%% CIs → scores.json")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folder written by `medtemporal run`")
    p.add_argument("--resamples", type=int, default=RESAMPLES, help=f"bootstrap resamples (default {RESAMPLES})")
    p.add_argument("--confidence", type=float, default=CONFIDENCE, help=f"interval level (default {CONFIDENCE})")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Score each run, then print the per-family table of the first metric."""
    for path in args.runs:
        score_run(path, resamples=args.resamples, confidence=args.confidence, seed=args.seed)
        print(f"wrote {path / 'scores.json'}")
    print(headline(load_runs(args.runs, rescore=False)))
    return 0
