"""Files replaced whole or not at all, and one sentence when the disk refuses a write.

Every file medtemporal rewrites (``config.json``, ``scores.json``,
``items.jsonl``, ``manifest.json``, exports ...) is written to ``NAME.tmp``
beside it and renamed over it: a reader sees the old file or the new one,
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
import os
from collections.abc import Iterator
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


@contextlib.contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write; renamed over ``path`` when the block ends without error.

    On any error the temporary file is removed and ``path`` is left as it was; a write the disk refused
    becomes `disk_error`'s sentence.
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
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
