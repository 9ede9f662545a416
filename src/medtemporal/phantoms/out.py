"""The output folder of every phantom kind: new or empty, or holding that kind's phantoms to replace with
``--overwrite`` (never a folder holding anything else)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from medtemporal.errors import InvalidInputError
from medtemporal.provenance import PHANTOM_MANIFEST


def _written_by(out: Path, generator: str) -> bool:
    """Whether folder ``out`` holds phantoms that ``generator`` wrote (its manifest names it)."""
    try:
        return json.loads((out / PHANTOM_MANIFEST).read_bytes()).get("generator") == generator
    except (OSError, ValueError, AttributeError):
        return False


def check_out(out: Path, overwrite: bool, generator: str) -> bool:
    """Whether ``out`` must be emptied first: refuse a non-empty ``out`` unless ``overwrite`` and ``generator``
    wrote it (nothing is removed here; `prepare_out` does it once everything else has been checked)."""
    if not out.exists() or (out.is_dir() and not any(out.iterdir())):
        return False
    ours = out.is_dir() and _written_by(out, generator)
    if not (overwrite and ours):
        raise InvalidInputError(f"{out} is not an empty folder; choose a new --out"
                                + (", or pass --overwrite to replace the phantoms in it." if ours else "."))
    return True


def prepare_out(out: Path, overwrite: bool, generator: str) -> None:
    """Make ``out`` an empty folder (`check_out` decides whether its phantoms may be replaced)."""
    if check_out(out, overwrite, generator):
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
