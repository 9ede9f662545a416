"""``medtemporal phantoms KIND``: write synthetic raw data in a real dataset's (or release file's) layout.

Every kind is a registered `medtemporal.phantoms.kinds.PhantomKind`, the datasets' and the families' own.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from medtemporal.phantoms.kinds import common_options
from medtemporal.progress import add_no_progress
from medtemporal.registry import entries


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("phantoms", help="write synthetic raw data (phantoms) in a real dataset's layout")
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    for entry in entries("phantom"):
        kind = entry.obj
        q = kinds.add_parser(entry.name, help=kind.help, description=kind.description)
        common_options(q)
        kind.add_arguments(q)
        add_no_progress(q)
        q.set_defaults(func=_writer(kind.write))


def _writer(write: Callable[[argparse.Namespace], list[str]]) -> Callable[[argparse.Namespace], int]:
    """The sub-command's function: write, then print what was written."""

    def run(args: argparse.Namespace) -> int:
        print("\n".join(write(args)))
        return 0

    return run
