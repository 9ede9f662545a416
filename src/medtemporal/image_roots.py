"""Where the images of a recorded prompt live: paths relative to a root, never a machine's absolute path.

A prediction records each image of its prompt as ``{"image": PATH}``, PATH relative to the
benchmark's image root, or as ``{"image": PATH, "root": NAME}``, PATH relative to a folder
registered under NAME: files a protocol made for the model, such as the CT slices 3D-RAD keeps
in its volume cache (``"volumes"``). Roots are looked up when a record is read, so a moved cache
or another machine's cache resolves where it is now. An image under no known root keeps only its
file name (``"root": "outside"``): records stay free of machine paths either way.

>>> register_root("demo-cache", lambda: Path("/tmp/cache"))
>>> record_image(Path("/tmp/cache/ab12/slice_000.png"), Path("/data/images"))
{'image': 'ab12/slice_000.png', 'root': 'demo-cache'}
>>> record_image(Path("/data/images/p1/s1.jpg"), Path("/data/images"))
{'image': 'p1/s1.jpg'}
>>> resolve_image({"image": "ab12/slice_000.png", "root": "demo-cache"}, Path("/data/images")).as_posix()
'/tmp/cache/ab12/slice_000.png'
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Mapping

OUTSIDE = "outside"
"""The root recorded for an image under no known root (only its file name is kept)."""

_ROOTS: dict[str, Callable[[], Path]] = {}


def register_root(name: str, locate: Callable[[], Path]) -> None:
    """Name a folder that prompt images may live under; ``locate`` gives its current place."""
    _ROOTS[name] = locate


def record_image(path: Path, image_root: Path) -> dict[str, str]:
    """The record of an image part: relative to the image root, else to a named root, else its name alone."""
    text, root = str(path), str(image_root)
    if text.startswith(root) and text[len(root) : len(root) + 1] == os.sep:  # the common case, without pathlib
        return {"image": text[len(root) + 1 :].replace(os.sep, "/")}
    for name, locate in (("", lambda: image_root), *_ROOTS.items()):
        try:
            relative = path.relative_to(locate()).as_posix()
        except ValueError:
            continue
        return {"image": relative, "root": name} if name else {"image": relative}
    return {"image": path.name, "root": OUTSIDE}


def resolve_image(part: Mapping[str, str], image_root: Path) -> Path | None:
    """The file an image record names, or None where its root is unknown here (or it was outside every root)."""
    name = part.get("root")
    if not name:
        return image_root / part["image"]
    locate = _ROOTS.get(name)
    return None if locate is None else locate() / part["image"]
