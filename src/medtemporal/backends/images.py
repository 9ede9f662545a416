"""Images for model requests: content digests, bounded resizing, data-URL encoding and per-run caches.

Each file is hashed once per process and encoded (or decoded) once per run
(results are kept by path, modification time and size), however many items
show it; a five-visit window slides by one visit, so each image is shown up
to five times. Files of at most `INLINE_BYTES` are hashed and encoded where
they are asked for: handing such a file to a worker thread costs more than
the work itself; larger ones go to a worker thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import io
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

import numpy as np
from PIL import Image, UnidentifiedImageError

from medtemporal.backends.base import RequestError
from medtemporal.checksums import sha256_file

DEFAULT_MAX_PIXELS = 1024 * 1024
"""Default bound on width × height of an image sent to a model (about 1024 × 1024)."""

INLINE_BYTES = 16 * 1024
"""Files up to this size are hashed and encoded on the event loop (well under a millisecond each)."""

V = TypeVar("V")
_Key = tuple[str, int, int]
"""Path, modification time (ns) and size of a file."""

_digests: dict[str, tuple[int, int, str]] = {}
_digest_lock = threading.Lock()


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        raise RequestError(f"Image {path} does not exist; check --image-root.", reason="missing_image") from None
    return st.st_mtime_ns, st.st_size


def hash_is_cheap(path: Path) -> bool:
    """True when `file_sha256` of ``path`` may run on the event loop: its digest is known for the file's current
    version, the file is at most `INLINE_BYTES`, or it is missing (which fails at once). One ``stat``."""
    try:
        stamp = _stamp(path)
    except RequestError:
        return True
    if stamp[1] <= INLINE_BYTES:
        return True
    with _digest_lock:
        hit = _digests.get(str(path))
    return hit is not None and hit[:2] == stamp


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, computed once per (path, mtime, size) in this process."""
    key = str(path)
    mtime, size = _stamp(path)
    with _digest_lock:
        hit = _digests.get(key)
    if hit is not None and hit[:2] == (mtime, size):
        return hit[2]
    digest = sha256_file(path)
    with _digest_lock:
        _digests[key] = (mtime, size, digest)
    return digest


def _open(path: Path) -> tuple[bytes, Image.Image]:
    """The bytes of ``path`` and its fully decoded image; a clear error when either fails."""
    try:
        raw = path.read_bytes()
    except OSError:
        raise RequestError(f"Image {path} does not exist; check --image-root.", reason="missing_image") from None
    try:
        image = Image.open(io.BytesIO(raw))
        image.load()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise RequestError(
            f"Image {path} cannot be read ({exc}); replace the file or rebuild the benchmark without it.",
            reason="bad_image",
        ) from None
    return raw, image


def _eight_bit(image: Image.Image) -> Image.Image:
    """``image`` as 8-bit grey or RGB; 16-bit and float images are scaled by their own range."""
    if image.mode in ("L", "RGB"):
        return image
    if image.mode in ("I", "I;16", "I;16B", "I;16L", "F"):
        arr = np.asarray(image, dtype=np.float64)
        lo, hi = float(arr.min()), float(arr.max())
        scaled = (arr - lo) * (255.0 / (hi - lo)) if hi > lo else np.zeros_like(arr)
        return Image.fromarray(scaled.round().astype(np.uint8), mode="L")
    return image.convert("RGB")


def shrink(image: Image.Image, max_pixels: int | None) -> Image.Image:
    """``image`` resized (Lanczos, aspect kept) to at most ``max_pixels`` pixels; unchanged if it fits."""
    w, h = image.size
    if not max_pixels or w * h <= max_pixels:
        return image
    scale = math.sqrt(max_pixels / (w * h))
    size = (max(1, math.floor(w * scale)), max(1, math.floor(h * scale)))
    return image.resize(size, Image.Resampling.LANCZOS)


def load_image(path: Path, max_pixels: int | None) -> Image.Image:
    """Open ``path`` as RGB, shrunk (aspect kept) so that width × height <= ``max_pixels``.

    Raises:
        RequestError: the file is missing (``missing_image``) or not a readable image (``bad_image``).
    """
    _, image = _open(path)
    return shrink(_eight_bit(image), max_pixels).convert("RGB")


def encode_data_url(path: Path, max_pixels: int | None) -> str:
    """A ``data:`` URL of ``path``: the file's own bytes when it fits the bound, else re-encoded.

    8-bit JPEG and PNG files within ``max_pixels`` are sent byte for byte;
    anything resized or converted is re-encoded in its own format (JPEG at
    quality 95) or, for other formats, as lossless PNG.
    """
    raw, image = _open(path)
    fits = not max_pixels or image.width * image.height <= max_pixels
    if fits and image.format in ("JPEG", "PNG") and image.mode in ("L", "RGB", "RGBA", "P", "LA"):
        mime, data = f"image/{image.format.lower()}", raw
    else:
        small = shrink(_eight_bit(image), max_pixels)
        buf = io.BytesIO()
        if image.format == "JPEG":
            small.save(buf, format="JPEG", quality=95)
            mime = "image/jpeg"
        else:
            small.save(buf, format="PNG")
            mime = "image/png"
        data = buf.getvalue()
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


class ImageCache(Generic[V]):
    """Values made from image files (data URLs, decoded images), each made once and kept in a byte-bounded LRU.

    Values are keyed by path, modification time and size, so a file that
    changes is made again. `aget` makes values in a worker thread, and
    concurrent requests for one image share one making; errors are not kept.

    Args:
        make: builds the value of a path (blocking); raises `RequestError` for a missing or bad file.
        size: bytes a value takes.
        max_bytes: how many bytes of values to keep (least recently used go first).
    """

    def __init__(self, make: Callable[[Path], V], size: Callable[[V], int], max_bytes: int) -> None:
        self._build = make
        self._sizeof = size
        self.max_bytes = max_bytes
        self.made = 0
        """How many values were made (for tests and benches)."""
        self._lru: OrderedDict[_Key, V] = OrderedDict()
        self._bytes = 0
        self._pending: dict[_Key, asyncio.Future[V]] = {}
        self._lock = threading.Lock()

    def _cached(self, key: _Key) -> V | None:
        with self._lock:
            value = self._lru.get(key)
            if value is not None:
                self._lru.move_to_end(key)
            return value

    def _make(self, path: Path, key: _Key) -> V:
        value = self._build(path)
        with self._lock:
            self.made += 1
            if key not in self._lru:
                self._lru[key] = value
                self._bytes += self._sizeof(value)
                while self._bytes > self.max_bytes and len(self._lru) > 1:
                    _, old = self._lru.popitem(last=False)
                    self._bytes -= self._sizeof(old)
        return value

    def get(self, path: Path) -> V:
        """The value of ``path``, made in this thread the first time."""
        key = (str(path), *_stamp(path))
        value = self._cached(key)
        return value if value is not None else self._make(path, key)

    async def aget(self, path: Path) -> V:
        """The value of ``path``, made the first time: here for a file of at most `INLINE_BYTES`, else in a worker
        thread (cancelling a caller never cancels that)."""
        key = (str(path), *_stamp(path))
        value = self._cached(key)
        if value is not None:
            return value
        making = self._pending.get(key)
        if making is None and key[2] <= INLINE_BYTES:
            return self._make(path, key)
        if making is None:
            making = asyncio.ensure_future(asyncio.to_thread(self._make, path, key))
            self._pending[key] = making
            making.add_done_callback(lambda done: self._settled(key, done))
        return await asyncio.shield(making)

    def _settled(self, key: _Key, done: asyncio.Future[V]) -> None:
        del self._pending[key]
        if not done.cancelled():
            done.exception()  # retrieved: every waiter re-raises it itself


def data_urls(max_pixels: int | None = DEFAULT_MAX_PIXELS, max_bytes: int = 512 * 1024**2) -> ImageCache[str]:
    """A cache of `encode_data_url` results (for backends that send images as data URLs)."""
    return ImageCache(functools.partial(encode_data_url, max_pixels=max_pixels), len, max_bytes)


def decoded_images(
    max_pixels: int | None = DEFAULT_MAX_PIXELS, max_bytes: int = 256 * 1024**2
) -> ImageCache[Image.Image]:
    """A cache of `load_image` results (for in-process models that take decoded images)."""
    return ImageCache(
        functools.partial(load_image, max_pixels=max_pixels), lambda im: im.width * im.height * 3, max_bytes
    )
