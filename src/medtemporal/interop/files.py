"""Export folders written whole or not at all, and the refusal to replace what exists (single files are written
with `medtemporal.writes.replacing`)."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Iterator

from medtemporal.errors import InvalidInputError
from medtemporal.writes import record_owned, refuse_unowned, temporary


@contextlib.contextmanager
def folder_atomically(out: Path, *, overwrite: bool = False) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``out`` (unique to this writer), renamed to ``out`` at the end.

    Temporary folders left by killed exports are removed first, so a second export starts clean; an existing
    ``out`` is replaced only with ``overwrite``, only when every file in it is one an export wrote (listed in its
    `medtemporal.writes.OWNED`), and only once the new folder is complete.
    """
    if out.exists() and not out.is_dir():
        raise InvalidInputError(f"--out {out} is a file; this export writes a folder, so name a folder.")
    if out.is_dir() and any(out.iterdir()):
        refuse_existing([out], overwrite)
        refuse_unowned(out, [out], action="delete")
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(out)
    tmp = temporary(out.with_name(f"{out.name}.partial"))
    tmp.mkdir()
    try:
        yield tmp
        record_owned(tmp, [tmp], by="medtemporal export")
        if out.exists():
            old = temporary(out.with_name(f"{out.name}.old"))
            os.replace(out, old)
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _remove_stale(out: Path) -> None:
    """Remove the temporary folders of ``out`` that killed exports left (``temporary`` names of dead writers, and
    the fixed names older versions used)."""
    for suffix in ("partial", "old"):
        legacy = out.with_name(f"{out.name}.{suffix}")
        if legacy.is_dir():
            shutil.rmtree(legacy, ignore_errors=True)
        temporary(legacy)  # removes those of writers no longer running


def refuse_existing(paths: list[Path], overwrite: bool) -> None:
    """Refuse, in one sentence, to replace any of ``paths`` that exists unless ``overwrite``."""
    existing = [p for p in paths if p.exists()]
    if existing and not overwrite:
        names = ", ".join(str(p) for p in existing)
        raise InvalidInputError(f"{names} {'exists' if len(existing) == 1 else 'exist'}; "
                                "pass --overwrite to replace, or choose another --out.")
