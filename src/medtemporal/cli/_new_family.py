"""``medtemporal new-family NAME``: write a working family folder (`medtemporal.scaffold`) that passes ``check``."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from medtemporal.errors import InvalidInputError
from medtemporal.writes import write_atomic

SCAFFOLD = Path(__file__).resolve().parents[1] / "scaffold"
"""The folder's templates: ``__FAMILY__``, ``__PACKAGE__``, ``__MODULE__`` and ``__TITLE__`` are replaced."""
NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")
BUILT_IN = Path(__file__).resolve().parents[1] / "benchmarks"


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("new-family", help="write a new benchmark family's folder that passes `medtemporal check`",
                       description="Write a working benchmark family (spec, prompt, question-file reader, phantom "
                                   "kind, tests) into OUT/PACKAGE, to edit into your paper's; it passes "
                                   "`medtemporal check NAME` as written. Then register it: a `medtemporal` entry "
                                   "point in your package, or one line in medtemporal.benchmarks.FAMILIES for a built-in family.")
    p.add_argument("name", metavar="NAME", help="the family's name: lower case, digits and hyphens (my-bench)")
    p.add_argument("--out", type=Path, default=Path("."), metavar="DIR",
                   help="folder to write the family's package into (default: the current folder)")
    p.add_argument("--title", default=None, metavar="TEXT", help="the benchmark as its paper names it (default: NAME)")
    p.set_defaults(func=run)


def write_family(name: str, out: Path, title: str | None = None) -> Path:
    """Write family ``name`` into ``out/<package>`` (``my-bench`` → ``my_bench``); returns that folder.

    Raises:
        InvalidInputError: a bad name, or the folder exists already.
    """
    if not NAME.fullmatch(name):
        raise InvalidInputError(f"{name!r} is not a family name; use lower case letters, digits and hyphens, "
                                "starting with a letter (e.g. my-bench).")
    package = name.replace("-", "_")
    folder = out / package
    if folder.exists():
        raise InvalidInputError(f"{folder} exists already; choose another --out or NAME (nothing was written).")
    inside = out.resolve() == BUILT_IN
    tokens = {"__FAMILY__": name, "__PACKAGE__": package, "__TITLE__": title or name,
              "__MODULE__": f"medtemporal.benchmarks.{package}" if inside else package}
    for template in sorted(SCAFFOLD.rglob("*.tmpl")):
        rel = template.relative_to(SCAFFOLD).as_posix().removesuffix(".tmpl")
        text = template.read_text(encoding="utf-8")
        for token, value in tokens.items():
            rel, text = rel.replace(token, value), text.replace(token, value)
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / rel, text)
    return folder


def run(args: argparse.Namespace) -> int:
    folder = write_family(args.name, args.out, args.title)
    package = folder.name
    print(f"Wrote the {args.name} family to {folder}. Register it, then check it:\n"
          f"  plugin:   in your pyproject.toml, [project.entry-points.medtemporal] {args.name} = \"{package}\"\n"
          f"  built-in: in medtemporal/benchmarks/__init__.py, FAMILIES[\"{args.name}\"] = "
          f"\"medtemporal.benchmarks.{package}\"\n"
          f"  medtemporal check {args.name} --build && python -m pytest {folder / 'tests'}")
    return 0
