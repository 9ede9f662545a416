"""``medtemporal export BENCH --format FORMAT --out PATH``: Parquet, a Hub folder, VLMEvalKit TSV, lmms-eval,
inspect_ai, or a family's own layout."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from medtemporal.benchmark import load
from medtemporal.export import export, formats
from medtemporal.progress import add_no_progress


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="export a benchmark to Parquet, a Hub folder, VLMEvalKit, lmms-eval, inspect_ai or its "
                       "paper's release format",
                       description="Export a benchmark folder to another tool's format (image paths, or pixels "
                       "with --embed-images). The files written are named on stderr.")
    p.add_argument("benchmark", type=Path, metavar="BENCH", help="benchmark folder (items.jsonl + manifest.json)")
    p.add_argument("--format", required=True, choices=formats(),
                   help="parquet (Hugging Face datasets), hf (a folder with a dataset card, ready for push_to_hub; "
                   "not for credentialed data), vlmevalkit (TSV: one per layout, <stem>_mcq/_yorn/_vqa.tsv when a "
                   "benchmark mixes them), lmms-eval (task folder), inspect (inspect_ai task module folder), or a family's own layout such as its paper's "
                   "released file (micxr, 3drad)")
    p.add_argument("--out", type=Path, required=True, metavar="PATH",
                   help="file to write (a folder for hf, lmms-eval, inspect and 3drad)")
    p.add_argument("--embed-images", action="store_true",
                   help="put the images' bytes into the file (parquet, lmms-eval, inspect) or base64 (vlmevalkit), "
                   "so it travels without the image folder (hf always embeds)")
    p.add_argument("--overwrite", action="store_true", help="replace what the export writes if it exists")
    p.add_argument("--allow-remote-data", action="store_true",
                   help="export credentialed data for lmms-eval or VLMEvalKit, which send it to any model they run, "
                   "hosted ones included (check your data-use agreement)")
    add_no_progress(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load the benchmark and write it in the chosen format."""
    done = export(load(args.benchmark), args.format, args.out, embed_images=args.embed_images,
                  overwrite=args.overwrite, allow_remote_data=args.allow_remote_data)
    print(done, file=sys.stderr)
    return 0
