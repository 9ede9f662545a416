"""The ``medtemporal`` command line: one sub-command per module, no logic of its own.

Each module in `COMMANDS` defines ``add(subparsers)``, which adds its parser
and sets ``func`` to a function taking the parsed arguments.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings

from medtemporal import __version__
from medtemporal.errors import MedTemporalError, UndefinedMetricWarning

COMMANDS = ("demo", "list", "score", "report", "build", "export", "import-predictions", "run", "runs", "phantoms", "nltk-data")


def parser() -> argparse.ArgumentParser:
    """The full argument parser."""
    p = argparse.ArgumentParser(prog="medtemporal", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"medtemporal {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"medtemporal.cli._{name.replace('-', '_')}").add(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the sub-command; user errors print one line and exit 2."""
    args = parser().parse_args(argv)
    with warnings.catch_warnings():
        python_show = warnings.showwarning

        def show(message, category, *rest, **kw):  # noqa: ANN001, ANN002, ANN003
            if issubclass(category, UndefinedMetricWarning):  # ours: one plain line
                print(f"medtemporal: warning: {message}", file=sys.stderr)
            else:
                python_show(message, category, *rest, **kw)

        warnings.showwarning = show
        try:
            return int(args.func(args) or 0)
        except MedTemporalError as exc:
            print(f"medtemporal: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("medtemporal: interrupted; finished work is saved, run the same command to resume.", file=sys.stderr)
            return 130


if __name__ == "__main__":
    sys.exit(main())
