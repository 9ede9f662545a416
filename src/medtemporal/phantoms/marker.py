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

Hashing every file again on each build would take minutes for a MIMIC-scale
cohort (456,000 files, about 6 GB), so a successful check leaves a stamp,
``phantom_manifest.verified``: a digest of the manifest and of every listed
file's path, size, modification and status-change times, and when it was
written. While the stamp matches, only files changed within `RECENT_S` of it
are hashed again (as git does for racily clean files: file times have a
coarse clock); any other change (an edit, a copy, a touched file) makes the
stamp stale, and the next check hashes everything and writes it anew.

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

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from medtemporal.checksums import sha256_file
from medtemporal.schema import Licence

MANIFEST = "phantom_manifest.json"
"""Written by every phantom generator at the root of what it wrote."""
STAMP = "phantom_manifest.verified"
"""Written beside the manifest by a successful check (see the module docstring); not listed in it."""
FORMAT = 1
RECENT_S = 2.0
"""Files whose times are this close to the stamp's (or later) are hashed again even when the stamp matches."""


def _files(root: Path) -> list[str]:
    """Every file under ``root`` (the manifest excepted) as a sorted POSIX path relative to it."""
    out = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        rel = Path(folder).relative_to(root)
        out += [(rel / n).as_posix() for n in names if not (folder == str(root) and n in (MANIFEST, STAMP))]
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
    _write_stamp(root, sorted(files), path.read_bytes())
    return path


def verify_phantom(root: str | Path) -> bool:
    """True when ``root`` holds a phantom manifest listing exactly its files, each with its checksum."""
    root = Path(root)
    path = root / MANIFEST
    if not path.is_file():
        return False
    try:
        raw = path.read_bytes()
        body = json.loads(raw)
    except ValueError:
        return False
    files = body.get("files") if isinstance(body, dict) else None
    if not isinstance(files, dict) or not files or body.get("format") != FORMAT:
        return False
    listed = sorted(files)
    if listed != _files(root):
        return False
    if not all(isinstance(sha, str) for sha in files.values()):
        return False
    recent = _stamped_recent(root, listed, raw)
    if recent is not None:
        return all(sha256_file(root / rel) == files[rel] for rel in recent)
    if not all(sha256_file(root / rel) == sha for rel, sha in files.items()):
        return False
    _write_stamp(root, listed, raw)
    return True


def _stat_digest(root: Path, listed: list[str], manifest: bytes) -> tuple[str, list[tuple[str, int]]]:
    """The digest of the manifest and of each listed file's path, size and times; each file's latest time."""
    digest = hashlib.sha256(manifest)
    latest = []
    base = str(root)
    for rel in listed:
        st = os.stat(os.path.join(base, rel))
        digest.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\n".encode())
        latest.append((rel, max(st.st_mtime_ns, st.st_ctime_ns)))
    return digest.hexdigest(), latest


def _write_stamp(root: Path, listed: list[str], manifest: bytes) -> None:
    """Record that ``root`` verified now; a folder that cannot be written keeps no stamp."""
    written = time.time_ns()
    digest, _ = _stat_digest(root, listed, manifest)
    try:
        (root / STAMP).write_text(json.dumps({"digest": digest, "written_ns": written}) + "\n", encoding="utf-8")
    except OSError:
        pass


def _stamped_recent(root: Path, listed: list[str], manifest: bytes) -> list[str] | None:
    """The files to hash again when the stamp matches (those changed near or after it), else None."""
    try:
        stamp = json.loads((root / STAMP).read_bytes())
        written = int(stamp["written_ns"])
        digest = str(stamp["digest"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    now_digest, latest = _stat_digest(root, listed, manifest)
    if now_digest != digest:
        return None
    margin = written - int(RECENT_S * 1e9)
    return [rel for rel, t in latest if t >= margin]


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
