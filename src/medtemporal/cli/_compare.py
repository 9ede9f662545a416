"""``medtemporal compare BASE RUN [RUN ...]``: each run against the first, paired on common items."""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

from medtemporal.scoring.ci import RESAMPLES
from medtemporal.scoring.compare import ComparisonWarning, compare_runs
from medtemporal.writes import write_atomic


def add(sub: argparse._SubParsersAction) -> None:
    """Register ``medtemporal compare``."""
    p = sub.add_parser(
        "compare",
        help="paired differences of runs on their common items (patient-clustered bootstrap, McNemar's exact test)",
        description="Compare each RUN with BASE on the items both answered (A = BASE, B = RUN): B − A per metric, a paired "
                    "bootstrap interval resampling patients, and McNemar's exact test for accuracy. Warns when "
                    "the runs cover different items or were made with different settings.",
    )
    p.add_argument("base", type=Path, metavar="BASE", help="the reference run folder")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folders compared with BASE")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the comparisons as JSON")
    p.add_argument("--resamples", type=int, default=RESAMPLES, metavar="N",
                   help=f"bootstrap resamples (default {RESAMPLES})")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="bootstrap seed (default 0)")
    p.add_argument("--metric", dest="metrics", action="append", default=[], metavar="NAME",
                   help="compare on this metric only (repeatable, or comma-separated): any the benchmark lists, "
                        "model-based report metrics included (e.g. radgraph_f1_partial, temporal_entity_f1)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Print one Markdown table per run (its warnings first); exit 0."""
    out = []
    for run in args.runs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ComparisonWarning)  # printed with the table instead
            comparison = compare_runs(run, args.base, resamples=args.resamples, seed=args.seed,
                                      metrics=tuple(n.strip() for m in args.metrics for n in m.split(",") if n.strip()))
        print(comparison.markdown(b_first=True))
        out.append(comparison.to_json())
    if args.json is not None:
        write_atomic(args.json, json.dumps(out, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {args.json}")
    return 0
