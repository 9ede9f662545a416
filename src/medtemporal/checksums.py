"""Checksums of the raw and released files a benchmark is built from (``Manifest.sources``)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes, read in chunks (metadata files can be large).

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.txt")
    >>> _ = open(p, "wb").write(b"abc")
    >>> sha256_file(p)[:16]
    'ba7816bf8f01cfea'
    """
    with Path(path).open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()
