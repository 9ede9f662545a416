"""Run one ``medtemporal`` command with its output folder on a full or read-only file system.

Run as ``python full_disk.py SPEC`` inside a private mount namespace (``unshare -m``), as root. SPEC is
JSON: ``mount`` (an empty folder), ``prepared`` (a folder copied onto the mount first: the work already
there), ``mode`` (``full``: a tmpfs filled to the last byte; ``ro``: remounted read-only), ``argv`` (the
command; ``{mnt}`` is the mount). Prints one JSON object: the exit status, stderr, the ``*.tmp`` files
left on the mount, and the files that were there before and changed or went missing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

TESTS = str(Path(__file__).resolve().parents[1])
CHILD = (
    f"import sys; sys.path.insert(0, {TESTS!r}); import helpers.tiny; "
    "from medtemporal.cli import main; sys.exit(main())"
)
FILLER = "zz-filler.bin"


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != FILLER}


def _fill(root: Path) -> None:
    """Write to ``root`` until the file system has no byte left."""
    chunk = b"\0" * 65536
    with open(root / FILLER, "wb", buffering=0) as fh:
        for size in (65536, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    fh.write(chunk[:size])


def main() -> None:
    spec = json.loads(sys.argv[1])
    mnt = Path(spec["mount"])
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={spec.get('size', '8m')}", "tmpfs", str(mnt)], check=True)
    shutil.copytree(spec["prepared"], mnt, dirs_exist_ok=True)
    before = _digests(mnt)
    if spec["mode"] == "full":
        _fill(mnt)
    else:
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
    argv = [a.replace("{mnt}", str(mnt)) for a in spec["argv"]]
    done = subprocess.run([sys.executable, "-c", CHILD, *argv], capture_output=True, text=True,
                          env={**os.environ, "CI": "1"}, timeout=300)
    after = _digests(mnt)
    print(json.dumps({
        "code": done.returncode,
        "stderr": done.stderr,
        "tmp": sorted(str(p.relative_to(mnt)) for p in mnt.rglob("*.tmp")),
        "changed": sorted(k for k, v in before.items() if after.get(k) != v),
    }))


if __name__ == "__main__":
    main()
