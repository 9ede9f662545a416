"""``medtemporal import-predictions BENCH SOURCE... --from TOOL --out DIR``: score another tool's predictions here."""

from __future__ import annotations

import argparse
from pathlib import Path

from medtemporal.benchmark import load
from medtemporal.interop.imports import TOOLS, import_predictions
from medtemporal.progress import add_no_progress
from medtemporal.runs import RunFolder


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "import-predictions",
        help="import VLMEvalKit results, lmms-eval sample logs or inspect_ai logs into a run folder and score them",
        description="Read predictions another tool made on an exported benchmark into a new run folder; "
        "medtemporal extracts the answers, scores them with patient-clustered intervals, and `report` shows them.",
    )
    p.add_argument("benchmark", type=Path, metavar="BENCH", help="the benchmark folder that was exported")
    p.add_argument("sources", type=Path, nargs="+", metavar="SOURCE",
                   help="VLMEvalKit result files ({model}_{dataset}.xlsx/.tsv; one per exported layout) or "
                   "lmms-eval *_samples_<task>.jsonl files (one per task) or inspect_ai logs (.eval/.json, one per task)")
    p.add_argument("--from", dest="tool", required=True, choices=TOOLS, help="the tool that wrote SOURCE")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="new run folder")
    p.add_argument("--model", metavar="NAME", help="the model's name (default: the first SOURCE's file name)")
    p.add_argument("--allow-missing", action="store_true",
                   help="score even when more than half of the items have no prediction (they score as missing); "
                   "without it such an import is refused, as it usually means result files were left out")
    add_no_progress(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Import, score, and print what was read."""
    summary = import_predictions(load(args.benchmark), args.sources, args.out, tool=args.tool, model=args.model,
                                 allow_missing=args.allow_missing)
    print(summary)
    print(f"scores: {RunFolder(args.out).scores_file}; see them with `medtemporal report {args.out}`")
    return 0
