"""Build options several families share, declared once: the model that writes text (`add_llm_options`) and the
released file imported instead of building (`add_official_option`, with what its manifest records: `imported`).

A family's ``add_arguments`` calls these; ``medtemporal build`` itself adds ``--out``, ``--seed`` and
``--overwrite`` to every family.

>>> import argparse, contextlib, io
>>> p = argparse.ArgumentParser()
>>> add_llm_options(p, purpose="word the questions with this model", data="report text", old="question")
>>> with contextlib.redirect_stderr(io.StringIO()) as err:
...     args = p.parse_args(["--question-model", "baseline:random"])
>>> args.llm, args.llm_cache, args.allow_remote_data
('baseline:random', None, False)
>>> err.getvalue()
'medtemporal: note: --question-model is deprecated; use --llm (the same option).\\n'
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medtemporal.checksums import sha256_file
from medtemporal.provenance import Release, licence_of, most_restrictive, release_licence
from medtemporal.schema import Licence

LLM = "--llm"
"""The one name of the model a builder asks to write or word text (``--llm URI``, any backend URI)."""


class _Renamed(argparse.Action):
    """An option's old name: stores into the new option's destination and says, in one line, to use the new name."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, new: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"medtemporal: note: {option_string} is deprecated; use {self.new} (the same option).", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_llm_options(p: argparse.ArgumentParser, *, purpose: str, data: str, old: str | None = None,
                    title: str = "text written by a model") -> None:
    """``--llm URI`` (what the model does: ``purpose``), ``--llm-cache FILE`` and ``--allow-remote-data`` (for the
    family's credentialed ``data`` to reach a non-local model), as ``args.llm``, ``args.llm_cache`` and
    ``args.allow_remote_data``.

    ``old``: the family's earlier name for them (``question`` for ``--question-model`` / ``--question-cache``),
    still accepted, each use noted in one line.
    """
    group = p.add_argument_group(title)
    group.add_argument(LLM, metavar="URI", help=purpose)
    group.add_argument(f"{LLM}-cache", type=Path, metavar="FILE",
                       help=f"response cache of {LLM} (default: the shared medtemporal cache)")
    group.add_argument("--allow-remote-data", action="store_true",
                       help=f"allow credentialed {data} to go to a non-local {LLM} (check your data-use agreement)")
    if old:
        group.add_argument(f"--{old}-model", dest="llm", action=_Renamed, new=LLM, metavar="URI",
                           help=argparse.SUPPRESS)
        group.add_argument(f"--{old}-cache", dest="llm_cache", type=Path, action=_Renamed, new=f"{LLM}-cache",
                           metavar="FILE", help=argparse.SUPPRESS)


OFFICIAL = "--official"
"""The option that imports the authors' released question file(s) instead of building by rule."""


def add_official_option(group: argparse._ArgumentGroup | argparse.ArgumentParser, what: str, *,
                        folder: bool = False, required: bool = False) -> None:
    """``--official FILE`` (``DIR`` with ``folder``): ``what`` the release is (its help text), as ``args.official``."""
    group.add_argument(OFFICIAL, type=Path, required=required, metavar="DIR" if folder else "FILE", help=what)


@dataclass(frozen=True)
class Imported:
    """What a manifest records of an imported release: its licence and its files' sha256 (``sources``)."""

    licence: Licence
    sources: dict[str, str]


def imported(files: Mapping[str, Path], *roots: Path | None, releases: Iterable[Release] | None) -> Imported:
    """The licence and checksums of released ``files`` (name in the manifest → path) read with data ``roots``.

    The licence is the most restrictive of each file's (`medtemporal.provenance.release_licence` against the
    family's reviewed ``releases``; with None, a file is only ``synthetic`` under a phantom manifest, as
    `medtemporal.provenance.licence_of` says) and each root's (None roots are left out).
    """
    paths = [Path(p) for p in files.values()]
    data = [Path(r) for r in roots if r is not None]
    if releases is None:
        licence = licence_of(*paths, *data)
    else:
        licence = most_restrictive(release_licence(paths, releases), *(licence_of(r) for r in data))
    return Imported(licence, {name: sha256_file(Path(path)) for name, path in files.items()})
