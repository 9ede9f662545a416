"""The verifiable phantom marker: a manifest of the checksums of every file a phantom generator wrote.

The licence of data comes from what the data is, never from a file anyone
can drop beside it. A phantom generator ends with `write_phantom_manifest`,
which lists the sha256 of every file under its output folder in
``phantom_manifest.json``. `licence_of` calls data ``synthetic`` only when
each given path lies in a folder whose manifest *verifies*: every listed file
is there with its checksum and no file is there that the generator did not
write. Anything else (no manifest, an empty or copied one, real files beside
phantom ones, an edited file) is ``credentialed``. Builders of every family
call `licence_of` with the roots they read.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> _ = (root / "data.csv").write_text("a,b\\n1,2\\n")
>>> _ = write_phantom_manifest(root, "doctest")
>>> licence_of(root)
'synthetic'
>>> _ = (root / "data.csv").write_text("a,b\\n1,3\\n")
>>> licence_of(root)
'credentialed'
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tqdm import tqdm

from medtemporal.checksums import sha256_file
from medtemporal.schema import Licence

MANIFEST = "phantom_manifest.json"
"""Written by every phantom generator at the root of what it wrote."""
FORMAT = 1


def _files(root: Path) -> list[str]:
    """Every file under ``root`` (the manifest excepted) as a sorted POSIX path relative to it."""
    out = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        rel = Path(folder).relative_to(root)
        out += [(rel / n).as_posix() for n in names if not (folder == str(root) and n == MANIFEST)]
    return sorted(out)


def write_phantom_manifest(root: str | Path, generator: str, **info: Any) -> Path:
    """List the sha256 of every file under ``root`` in ``root/phantom_manifest.json``; call it last.

    Args:
        root: The folder the generator wrote (nothing else may be in it).
        generator: Which generator wrote it, e.g. ``medtemporal phantoms cxr``.
        **info: JSON-serialisable settings to record (seed, patients ...).

    Returns:
        The manifest's path.
    """
    root = Path(root)
    files = {
        rel: sha256_file(root / rel)
        for rel in tqdm(_files(root), desc="phantom checksums", unit="file", disable=None, leave=False)
    }
    body = {"format": FORMAT, "generator": generator, "licence": "synthetic", **info, "files": files}
    path = root / MANIFEST
    tmp = root / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def verify_phantom(root: str | Path) -> bool:
    """True when ``root`` holds a phantom manifest listing exactly its files, each with its checksum."""
    root = Path(root)
    path = root / MANIFEST
    if not path.is_file():
        return False
    try:
        body = json.loads(path.read_bytes())
    except ValueError:
        return False
    files = body.get("files") if isinstance(body, dict) else None
    if not isinstance(files, dict) or not files or body.get("format") != FORMAT:
        return False
    if sorted(files) != _files(root):
        return False
    return all(isinstance(sha, str) and sha256_file(root / rel) == sha for rel, sha in files.items())


def _manifest_folder(path: str | Path) -> Path | None:
    """The nearest folder holding a phantom manifest: ``path`` itself (or its folder), or one of two parents."""
    path = Path(path).resolve()
    start = path if path.is_dir() else path.parent
    return next((f for f in (start, *start.parents[:2]) if (f / MANIFEST).is_file()), None)


def licence_of(*paths: str | Path) -> Licence:
    """``synthetic`` when every path (a data root or file) lies under a verified phantom manifest, else
    ``credentialed``.

    The manifest looked for is the nearest one in the path's folder or its two parents (a generator
    writes it at the root of its output, e.g. above ``mimic-cxr-jpg/`` and ``mimic-ext-cxr-qba/``).
    """
    folders = {_manifest_folder(p) for p in paths}
    if not paths or None in folders:
        return "credentialed"
    return "synthetic" if all(verify_phantom(f) for f in folders if f is not None) else "credentialed"
