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

A benchmark's licence follows every byte that can leave with it: it is the
most restrictive (`most_restrictive`) over all of its inputs, the data roots
(`licence_of`) and the released question files (`release_licence`: ``open``
only for a file whose sha256 is a public release we reviewed, listed in the
family's ``known_releases.py``). At run time `run_licence` judges the images
actually sent: from any root other than the verified phantom the benchmark
was built from, the run is ``credentialed``; without a root, every image
(symlinks resolved) must lie in a verified phantom (`phantom_licence`).

Hashing every file again on each build would take minutes for a MIMIC-scale
cohort (456,000 files, about 6 GB), so a successful check leaves a stamp in the user's cache
(`stamp_path`, outside the data folder, which stays byte-identical for a
seed): a digest of the manifest and of every listed file's path, size,
modification and status-change times, and when it was written. While the stamp matches, only files changed within `RECENT_S` of it
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
from collections.abc import Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any


from medtemporal.checksums import sha256_file
from medtemporal.errors import InvalidInputError
from medtemporal.schema import Licence
from medtemporal.writes import write_atomic
from medtemporal.progress import progress_bar

if TYPE_CHECKING:
    from medtemporal.benchmark import Manifest

PHANTOM_MANIFEST = "phantom_manifest.json"
"""The checksum manifest a phantom generator writes last: it marks its folder synthetic (`verify_phantom`)."""
PHANTOM_TRUTH = "phantom_truth.jsonl"
"""The exact ground truth a phantom generator writes beside the data (a file no real dataset has)."""
"""Written by every phantom generator at the root of what it wrote."""
FORMAT = 1
RECENT_S = 2.0
"""Files whose times are this close to the stamp's (or later) are hashed again even when the stamp matches."""


def _tree(root: Path) -> list[tuple[str, int, int]]:
    """Every file under ``root`` (the manifest excepted), sorted: its POSIX path relative to
    ``root``, its size and the later of its modification and status-change times (ns)."""
    out: list[tuple[str, int, int]] = []
    stack = [(str(root), "")]
    while stack:
        folder, rel = stack.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, f"{rel}{entry.name}/"))
                elif rel or entry.name != PHANTOM_MANIFEST:
                    st = entry.stat(follow_symlinks=False)  # a link (even a looping or dangling one) is listed as itself
                    out.append((rel + entry.name, st.st_size, max(st.st_mtime_ns, st.st_ctime_ns)))
    out.sort()
    return out


def holds_phantoms(folder: str | Path) -> bool:
    """Whether ``folder`` holds a phantom generator's output (its `PHANTOM_TRUTH`): the demo writes it only once."""
    return (Path(folder) / PHANTOM_TRUTH).is_file()


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
    tree = _tree(root)
    files = {
        rel: sha256_file(root / rel)
        for rel, _, _ in progress_bar(tree, desc="phantom checksums", unit="file", leave=False)
    }
    body = {"format": FORMAT, "generator": generator, "licence": "synthetic", **info, "files": files}
    raw = (json.dumps(body, indent=1, sort_keys=True) + "\n").encode("utf-8")
    path = root / PHANTOM_MANIFEST
    write_atomic(path, raw)
    _write_stamp(root, raw, tree)
    return path


def verify_phantom(root: str | Path) -> bool:
    """True when ``root`` holds a phantom manifest listing exactly its files, each with its checksum."""
    root = Path(root)
    path = root / PHANTOM_MANIFEST
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
    tree = _tree(root)
    listed = sorted(files)
    if listed != [rel for rel, _, _ in tree]:
        return False
    if not all(isinstance(sha, str) for sha in files.values()):
        return False
    recent = _stamped_recent(root, tree, raw)
    if recent is not None:
        return all(sha256_file(root / rel) == files[rel] for rel in recent)
    if not all(sha256_file(root / rel) == sha for rel, sha in files.items()):
        return False
    _write_stamp(root, raw, tree)
    return True


def _digest(tree: list[tuple[str, int, int]], manifest: bytes) -> str:
    """A digest of the manifest and of each file's path, size and latest time."""
    digest = hashlib.sha256(manifest)
    digest.update("\n".join(f"{rel}\0{size}\0{t}" for rel, size, t in tree).encode())
    return digest.hexdigest()


def stamp_path(root: str | Path) -> Path:
    """Where the stamp of the phantom folder ``root`` is kept: ``$MEDTEMPORAL_PHANTOM_STAMPS``, else
    ``$XDG_CACHE_HOME/medtemporal/phantom-stamps`` (``~/.cache`` by default), one file per folder."""
    folder = os.environ.get("MEDTEMPORAL_PHANTOM_STAMPS") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "medtemporal" / "phantom-stamps"
    key = hashlib.sha256(str(Path(root).resolve()).encode()).hexdigest()[:32]
    return Path(folder) / f"{key}.json"


def _write_stamp(root: Path, manifest: bytes, tree: list[tuple[str, int, int]]) -> None:
    """Record that ``root`` (as `_tree` read it before its files were hashed) verified now; where the cache cannot
    be written no stamp is kept. A file changed since ``tree`` was read no longer matches the stamp."""
    written = time.time_ns()
    digest = _digest(tree, manifest)
    path = stamp_path(root)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps({"digest": digest, "written_ns": written}) + "\n")
    except (OSError, InvalidInputError):  # a cache that cannot be written keeps no stamp
        pass


def _stamped_recent(root: Path, tree: list[tuple[str, int, int]], manifest: bytes) -> list[str] | None:
    """The files to hash again when the stamp matches (those changed near or after it), else None."""
    try:
        stamp = json.loads(stamp_path(root).read_bytes())
        written = int(stamp["written_ns"])
        digest = str(stamp["digest"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if _digest(tree, manifest) != digest:
        return None
    margin = written - int(RECENT_S * 1e9)
    return [rel for rel, _, t in tree if t >= margin]


def _manifest_folder(path: str | Path) -> Path | None:
    """The nearest folder holding a phantom manifest: ``path`` itself (or its folder), or one of two parents."""
    path = Path(path).resolve()
    start = path if path.is_dir() else path.parent
    return next((f for f in (start, *start.parents[:2]) if (f / PHANTOM_MANIFEST).is_file()), None)


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


def licence_in_background(*paths: str | Path) -> Future[Licence]:
    """`licence_of` in another process, for a builder to read its data meanwhile.

    At MIMIC scale the check stats ~450,000 files (about 6 s of one core), and a reader leaves a core idle
    while it prepares its tables; a thread would contend with it for the interpreter instead.
    """
    executor = ProcessPoolExecutor(1)
    future = executor.submit(licence_of, *paths)
    executor.shutdown(wait=False)  # the submitted check still runs to the end
    return future


RESTRICTION: dict[str, int] = {"open": 0, "synthetic": 1, "credentialed": 2}
"""How restrictive each licence is: data under a more restrictive one may go to fewer places."""


def most_restrictive(*licences: Licence) -> Licence:
    """The most restrictive of ``licences``: what data from all of them together may be treated as.

    >>> most_restrictive("open", "synthetic"), most_restrictive("synthetic", "credentialed"), most_restrictive()
    ('synthetic', 'credentialed', 'credentialed')
    """
    if not licences:
        return "credentialed"
    return max(licences, key=lambda x: RESTRICTION.get(x, RESTRICTION["credentialed"]))


@dataclass(frozen=True)
class Release:
    """A released question or answer file whose text we reviewed, known by its sha256.

    Attributes:
        name: the file as released (its path in the release).
        sha256: hex sha256 of its bytes.
        licence: what its text may be treated as: ``open`` when it holds nothing from a credentialed
            source, ``credentialed`` when it does (a release can quote the data it was made from).
        source: where the file and its checksum come from (repository, commit, path).
        note: why the licence is what it is.
    """

    name: str
    sha256: str
    licence: Licence
    source: str
    note: str = ""


def release_licence(paths: Iterable[str | Path], releases: Iterable[Release]) -> Licence:
    """The licence of released files as read: each is what its `Release` says when its sha256 is listed, and
    ``credentialed`` otherwise (an edited, newer or unknown file may hold anything); the most restrictive over
    all of them (``credentialed`` for none).

    >>> import tempfile, pathlib, hashlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "q.json"
    >>> _ = path.write_text("[]")
    >>> known = Release("q.json", hashlib.sha256(b"[]").hexdigest(), "open", "doctest")
    >>> release_licence([path], [known]), release_licence([path], [])
    ('open', 'credentialed')
    """
    by_sha = {r.sha256: r.licence for r in releases}
    return most_restrictive(*(by_sha.get(sha256_file(Path(p)), "credentialed") for p in paths))


def _escapes(path: str) -> bool:
    """True when an item's image path is absolute or climbs out of its root with ``..``.

    >>> _escapes("p1/s2/a.jpg"), _escapes("/data/a.jpg"), _escapes("p1/../../a.jpg"), _escapes("p1/..a.jpg")
    (False, True, True, False)
    """
    if ".." not in path:  # most paths: string checks, no PurePath built for each
        return os.path.isabs(path)
    pure = PurePath(path)
    return pure.is_absolute() or ".." in pure.parts


def run_licence(manifest: Manifest, image_root: str | Path | None = None, image_paths: Iterable[str] = (),
                *, folder: str | Path | None = None) -> Licence:
    """The licence of what a run of a benchmark sends: the data-use guard's input.

    It is the manifest's licence when the images are read from the root the benchmark was built from (and
    that root still verifies when the manifest says ``synthetic``: files may have changed since the build),
    and ``credentialed`` when they come from anywhere else: another ``image_root``, or an item path that
    is absolute or climbs out of the root with ``..``. A benchmark built with no image root reads its images
    relative to its own folder: each of them, symlinks resolved, must then lie in a verified phantom folder
    (`phantom_licence`), whatever the manifest says; one that does not, or that is missing, makes the run
    ``credentialed`` (an unverifiable root is treated as credentialed).

    Args:
        manifest: the benchmark's manifest (its ``licence`` and ``image_root``).
        image_root: the root the run reads images from; None for the manifest's own.
        image_paths: the item image paths the run will read (relative to the root).
        folder: the benchmark folder, which a relative manifest ``image_root`` is relative to, and the
            root of a benchmark built without one.
    """
    if manifest.licence == "credentialed":
        return "credentialed"
    base = Path(folder or ".")
    built = None
    if manifest.image_root is not None:
        built = Path(manifest.image_root)
        built = (built if built.is_absolute() else base / built).resolve()
    if image_root is not None and (built is None or Path(image_root).resolve() != built):
        return "credentialed"
    paths = list(image_paths)
    if any(_escapes(p) for p in paths):
        return "credentialed"
    if built is not None:
        return most_restrictive(manifest.licence, licence_of(built))
    if not paths:
        return manifest.licence
    return most_restrictive(manifest.licence, phantom_licence(base.resolve() / p for p in paths))


def phantom_licence(files: Iterable[str | Path]) -> Licence:
    """``synthetic`` when every file, symlinks resolved, lies in a folder with a verified phantom manifest (the
    nearest above it), else ``credentialed``: the check of images read without an image root.

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "files").mkdir(), (root / "files" / "a.jpg").write_bytes(b"phantom pixels")
    >>> _ = write_phantom_manifest(root, "doctest")
    >>> phantom_licence([root / "files" / "a.jpg"]), phantom_licence([root / "files" / "missing.jpg"])
    ('synthetic', 'credentialed')
    """
    folders: set[Path] = set()
    for file in files:
        real = Path(file).resolve()
        if not real.is_file():
            return "credentialed"
        folder = next((f for f in real.parents if (f / PHANTOM_MANIFEST).is_file()), None)
        if folder is None:
            return "credentialed"
        folders.add(folder)
    return "synthetic" if folders and all(verify_phantom(f) for f in folders) else "credentialed"
