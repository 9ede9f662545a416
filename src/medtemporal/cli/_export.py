"""``medtemporal export BENCH --format FORMAT --out FILE``: Parquet, VLMEvalKit TSV, lmms-eval, or a family's own layout."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from medtemporal.benchmark import load
from medtemporal.errors import InvalidInputError
from medtemporal.export import FOLDER_FORMATS, export, formats


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="export a benchmark to Parquet, VLMEvalKit TSV or its paper's release format",
                       description="Export a benchmark folder to another tool's format (image paths, or pixels with --embed-images).")
    p.add_argument("benchmark", type=Path, metavar="BENCH", help="benchmark folder (items.jsonl + manifest.json)")
    p.add_argument("--format", required=True, choices=formats(),
                   help="parquet (Hugging Face datasets), vlmevalkit (TSV), lmms-eval (task folder), or a family's "
                   "own layout such as its paper's released file")
    p.add_argument("--out", type=Path, required=True, metavar="FILE",
                   help="file to write (a folder for lmms-eval)")
    p.add_argument("--embed-images", action="store_true",
                   help="put the images' bytes into the file (parquet, lmms-eval) or base64 (vlmevalkit), "
                   "so it travels without the image folder")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load the benchmark and write it in the chosen format."""
    if args.out.is_dir() and args.format not in FOLDER_FORMATS:
        raise InvalidInputError(f"--out {args.out} is a folder; pass a file name, e.g. {args.out / ('items.' + args.format)}.")
    if args.out.exists() and not args.overwrite:
        raise InvalidInputError(f"{args.out} exists; pass --overwrite to replace it, or choose another --out.")
    n = export(load(args.benchmark), args.format, args.out, embed_images=args.embed_images)
    print(f"Wrote {n} items to {args.out} ({args.format}).", file=sys.stderr)
    return 0
