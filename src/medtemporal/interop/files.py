"""Export folders written whole or not at all, and the refusal to replace what exists (single files are written
with `medtemporal.writes.replacing`)."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Iterator

from medtemporal.errors import InvalidInputError


@contextlib.contextmanager
def folder_atomically(out: Path, *, overwrite: bool = False) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``out``, renamed to ``out`` at the end.

    A temporary folder left by a killed export is removed first, so a second export starts clean;
    an existing ``out`` is replaced only with ``overwrite`` (and only once the new folder is complete).
    """
    if out.exists() and not out.is_dir():
        raise InvalidInputError(f"--out {out} is a file; this export writes a folder, so name a folder.")
    refuse_existing([out], overwrite)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f"{out.name}.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        yield tmp
        if out.exists():
            old = out.with_name(f"{out.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(out, old)
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def refuse_existing(paths: list[Path], overwrite: bool) -> None:
    """Refuse, in one sentence, to replace any of ``paths`` that exists unless ``overwrite``."""
    existing = [p for p in paths if p.exists()]
    if existing and not overwrite:
        names = ", ".join(str(p) for p in existing)
        raise InvalidInputError(f"{names} {'exists' if len(existing) == 1 else 'exist'}; "
                                "pass --overwrite to replace, or choose another --out.")
