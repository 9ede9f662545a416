"""The MIMIC-CXR-JPG image root as a build option, and the one policy for images that are not there.

Five families read their images from a MIMIC-CXR-JPG root (the folder that holds ``files/``). Each declares
the same two options with `add_jpg_arguments` (``--mimic-cxr-jpg DIR`` and ``--no-verify-images``), checks
the root with `jpg_root`, and treats a missing image the same way: the record (item, label, question) that
shows it is left out and counted under `IMAGE_MISSING` in the manifest's ``exclusions`` (`keep_with_images`);
a root that holds none of the images is refused, since it is the wrong folder.

>>> import tempfile
>>> from collections import Counter
>>> root = Path(tempfile.mkdtemp()); (root / "files").mkdir(); (root / "files" / "a.jpg").write_bytes(b"")
0
>>> dropped = Counter()
>>> keep_with_images([("x", ["files/a.jpg"]), ("y", ["files/b.jpg"])], lambda r: r[1], root, dropped)
[('x', ['files/a.jpg'])]
>>> dict(dropped)
{'image_missing': 1}
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, MutableMapping
from pathlib import Path
from typing import TypeVar

from medtemporal.errors import InvalidInputError

T = TypeVar("T")

OPTION = "--mimic-cxr-jpg"
IMAGE_MISSING = "image_missing"
"""The exclusion reason of every record left out because an image it shows is not under the image root."""
HINT = f"pass the MIMIC-CXR-JPG root (the folder that holds files/) with {OPTION}"


def add_jpg_arguments(group: argparse._ArgumentGroup | argparse.ArgumentParser, purpose: str = "the image root",
                      without: str = "build without checking the images") -> None:
    """``--mimic-cxr-jpg DIR`` (``purpose``: what else the family reads there) and ``--no-verify-images``
    (``without``: what leaving the check out allows)."""
    group.add_argument(OPTION, type=Path, metavar="DIR", help=f"MIMIC-CXR-JPG root (the folder holding files/): {purpose}")
    group.add_argument("--no-verify-images", dest="verify_images", action="store_false",
                       help=f"do not check that every image exists under {OPTION}; {without}")


def jpg_root(path: Path | None, *, verify_images: bool, needed_for: str | None = "its images") -> Path | None:
    """The resolved MIMIC-CXR-JPG root, refused in one sentence when it is not one; None when not given.

    ``needed_for``: what the family needs the root for; then leaving it out is refused unless ``verify_images``
    is off (None: the root is optional).

    Raises:
        InvalidInputError: the folder does not exist or holds no ``files/``, or a needed root is missing.
    """
    if path is None:
        if needed_for is not None and verify_images:
            raise InvalidInputError(f"The build needs {OPTION} to find {needed_for}; {HINT}, or pass "
                                    "--no-verify-images to build with the images unchecked.")
        return None
    if not path.is_dir():
        raise InvalidInputError(f"{OPTION} {path} is not a folder; {HINT}.")
    if not (path / "files").is_dir():
        raise InvalidInputError(f"{OPTION} {path} has no files/ folder, so it is not a MIMIC-CXR-JPG root; {HINT}.")
    return path.resolve()


def keep_with_images(records: Iterable[T], images: Callable[[T], Iterable[str]], root: Path,
                     exclusions: MutableMapping[str, int]) -> list[T]:
    """The records whose every image (paths relative to ``root``) exists; the others are left out and counted
    under `IMAGE_MISSING` in ``exclusions``.

    Raises:
        InvalidInputError: there are images, and none of them is under ``root`` (the wrong folder).
    """
    records = list(records)
    named = [list(images(r)) for r in records]
    present = {path: (root / path).is_file() for paths in named for path in dict.fromkeys(paths)}
    if present and not any(present.values()):
        raise InvalidInputError(f"None of the {len(present)} images the records name exists under {root}; {HINT}.")
    kept = [r for r, paths in zip(records, named) if all(present[p] for p in paths)]
    if len(kept) < len(records):
        exclusions[IMAGE_MISSING] = exclusions.get(IMAGE_MISSING, 0) + len(records) - len(kept)
    return kept


__all__ = ["IMAGE_MISSING", "add_jpg_arguments", "jpg_root", "keep_with_images"]
