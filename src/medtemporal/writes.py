"""Files replaced whole or not at all, and one sentence when the disk refuses a write.

Every file medtemporal rewrites (``config.json``, ``scores.json``,
``items.jsonl``, ``manifest.json``, exports ...) is written to a temporary
file of its own beside it (``NAME.PID-RANDOM.tmp``) and renamed over it: a reader sees the old file or the new one,
never half of one. `replacing` does that and, when the write fails, removes
the ``.tmp`` file and turns a full disk, a read-only file system or a
refused permission into an `InvalidInputError` naming the folder and the
cause (`disk_error`); the file it was to replace is left as it was.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "a.json"
>>> write_atomic(path, "{}\\n")
>>> path.read_text()
'{}\\n'
"""

from __future__ import annotations

import contextlib
import errno
import glob
import json
import os
import secrets
import shutil
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from medtemporal.errors import InvalidInputError

CAUSES = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission is denied",
    errno.EPERM: "permission is denied",
    errno.EFBIG: "the file is larger than the file system allows",
}
"""Causes of a failed write that are the user's to fix, by ``errno``."""

_MESSAGES = {"No space left on device": errno.ENOSPC, "Read-only file system": errno.EROFS,
             "Disk quota exceeded": errno.EDQUOT, "Permission denied": errno.EACCES}
"""Libraries that report a failed write without an ``errno`` (Arrow, SQLite) still name it in their message."""


def write_errno(exc: BaseException) -> int | None:
    """The `CAUSES` key of a failed write, from its ``errno`` or, failing that, its message; else None."""
    code = getattr(exc, "errno", None)
    if code in CAUSES:
        return int(code)
    text = str(exc)
    return next((code for message, code in _MESSAGES.items() if message in text), None)


def disk_error(exc: BaseException, path: str | Path | None = None) -> InvalidInputError | None:
    """One sentence for a write the disk refused (`CAUSES`), naming the folder of ``path`` (or of the file the
    error names); None for any other error."""
    code = write_errno(exc)
    if code is None:
        return None
    where = path if path is not None else getattr(exc, "filename", None)
    if where is None:
        return InvalidInputError(f"A file could not be written because {CAUSES[code]}; free space or write elsewhere, "
                                 "then run the same command again.")
    target = Path(where)
    folder = target if target.is_dir() else target.parent
    return InvalidInputError(
        f"Cannot write {target.name} in {folder}: {CAUSES[code]}; free space there or make it writable (or write "
        "elsewhere), then run the same command again (files already there are unchanged)."
    )


def temporary(path: str | Path) -> Path:
    """A temporary path beside ``path``, unique to this writer (``NAME.PID-RANDOM.tmp``): two processes writing one
    file or folder never share it. Temporary files and folders of ``path`` left by writers no longer running are
    removed first.
    """
    path = Path(path)
    for stale in path.parent.glob(f"{glob.escape(path.name)}.*.tmp"):
        pid = stale.name[len(path.name) + 1:].split("-", 1)[0]
        if pid.isdigit() and not _running(int(pid)):
            with contextlib.suppress(OSError):
                shutil.rmtree(stale) if stale.is_dir() and not stale.is_symlink() else stale.unlink()
    return path.with_name(f"{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def path_error(exc: BaseException) -> InvalidInputError | None:
    """One sentence for a file operation that met the wrong kind of thing at a path (a folder where a file belongs,
    a file where a folder belongs, a symbolic link that loops), naming the path; None for any other error."""
    where = getattr(exc, "filename", None)
    code = getattr(exc, "errno", None)
    if where is None:
        return None
    if code == errno.EISDIR:
        return InvalidInputError(f"{where} is a folder where medtemporal expects a file; move the folder away, then "
                                 "run the same command again.")
    if code == errno.ENOTDIR:
        return InvalidInputError(f"A part of {where} is a file where medtemporal expects a folder; move that file "
                                 "away or choose another path.")
    if code == errno.ELOOP:
        return InvalidInputError(f"{where} is a symbolic link that leads back to itself; remove or fix the link.")
    return None


@contextlib.contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write (`temporary`); renamed over ``path`` when the block ends without
    error.

    On any error the temporary file is removed and ``path`` is left as it was; a write the disk refused
    becomes `disk_error`'s sentence.
    """
    path = Path(path)
    if path.is_dir():
        raise InvalidInputError(f"{path} is a folder where medtemporal writes its file {path.name}; move the folder "
                                "away, then run the same command again.")
    tmp = temporary(path)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        error = disk_error(exc, path)
        if error is not None:
            raise error from None
        raise


def write_atomic(path: str | Path, data: str | bytes, *, sync: bool = False) -> None:
    """Replace ``path`` by ``data`` (text is written as UTF-8) atomically (`replacing`); ``sync`` flushes it to the
    disk before the rename."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with replacing(path) as tmp, open(tmp, "wb") as fh:
        fh.write(raw)
        if sync:
            fh.flush()
            os.fsync(fh.fileno())


OWNED = ".medtemporal-files.json"
"""The list of files medtemporal wrote in a folder it writes as a set (an export, a report): ``--overwrite`` and a
new report replace only these, never a file of the user's beside or among them."""


def owned(folder: Path) -> set[str]:
    """The files (POSIX paths relative to ``folder``) that ``folder/OWNED`` lists as medtemporal's; none without it."""
    try:
        files = json.loads((folder / OWNED).read_text(encoding="utf-8")).get("files", [])
    except (OSError, ValueError, AttributeError):
        return set()
    return {f for f in files if isinstance(f, str)}


def record_owned(folder: Path, files: Iterable[Path], *, by: str) -> None:
    """Add ``files`` (in ``folder``; folders taken whole) to ``folder/OWNED``, with those it listed that still exist."""
    listed = {f for f in owned(folder) if (folder / f).is_file()}
    for path in files:
        for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
            if file.is_file() and file.name != OWNED:
                listed.add(file.relative_to(folder).as_posix())
    write_atomic(folder / OWNED, json.dumps({"written_by": by, "files": sorted(listed)}, indent=1) + "\n")


def refuse_unowned(folder: Path, paths: Iterable[Path], *, action: str) -> None:
    """Refuse, in one sentence, to replace or remove ``paths`` (in ``folder``; folders whole) when any file among them
    is not one medtemporal wrote there (`owned`): nothing of the user's is deleted.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "report.html").write_text("ours"), (folder / "notes.txt").write_text("the user's")
    >>> record_owned(folder, [folder / "report.html"], by="doctest")
    >>> refuse_unowned(folder, [folder / "report.html"], action="replace")
    >>> refuse_unowned(folder, [folder / "notes.txt"], action="replace")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    medtemporal.errors.InvalidInputError: Will not replace ...notes.txt: medtemporal did not write it ...
    """
    mine = owned(folder)
    for path in paths:
        for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
            if (file.is_file() or file.is_symlink()) and file.name != OWNED:
                if file.relative_to(folder).as_posix() not in mine:
                    raise InvalidInputError(
                        f"Will not {action} {file}: medtemporal did not write it (it is not in {folder / OWNED}); "
                        "move it elsewhere, or choose another --out."
                    )


def staging(folder: Path) -> Path:
    """Where a build writes what it makes for ``folder`` until it is whole (caches, a corpus, then items and
    manifest): a hidden sibling, so a build stopped at any moment leaves ``folder`` as it was, and the next build
    reuses the work (its caches) and moves it in with `publish`."""
    return folder.parent / f".{folder.name}.partial"


def publish(work: Path, folder: Path, first: Sequence[str] = ()) -> None:
    """Move every entry of ``work`` into ``folder`` (an entry of the same name there replaced), ``first`` in that
    order before the others, then remove ``work``. A new or empty ``folder`` becomes ``work`` in one rename; else a
    stop between two moves leaves ``folder`` with its ``first`` entries already new (a build names its manifest
    first, so ``--overwrite`` still recognises the folder)."""
    if not folder.exists() or (folder.is_dir() and not any(folder.iterdir())):
        with contextlib.suppress(FileNotFoundError):
            folder.rmdir()
        os.replace(work, folder)
        return
    names = [*[n for n in first if (work / n).exists()], *sorted(p.name for p in work.iterdir() if p.name not in first)]
    for name in names:
        source, target = work / name, folder / name
        if target.is_dir() and not target.is_symlink():
            old = temporary(target)
            os.replace(target, old)
            os.replace(source, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(source, target)
    work.rmdir()
