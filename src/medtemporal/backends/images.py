"""Images for model requests: content digests, bounded resizing and data-URL encoding.

Each file is hashed once per process and encoded once per run (results are
kept by path, modification time and size), however many items show it; a
five-visit window slides by one visit, so each image is shown up to five
times.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import math
import os
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from medtemporal.backends.base import RequestError

DEFAULT_MAX_PIXELS = 1024 * 1024
"""Default bound on width × height of an image sent to a model (about 1024 × 1024)."""

_digests: dict[str, tuple[int, int, str]] = {}
_digest_lock = threading.Lock()


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        raise RequestError(f"Image {path} does not exist; check --image-root.", reason="missing_image") from None
    return st.st_mtime_ns, st.st_size


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, computed once per (path, mtime, size) in this process."""
    key = str(path)
    mtime, size = _stamp(path)
    with _digest_lock:
        hit = _digests.get(key)
    if hit is not None and hit[:2] == (mtime, size):
        return hit[2]
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
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
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
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


class ImageEncoder:
    """Data URLs of images, each encoded once and kept in a byte-bounded LRU.

    Encoding runs in a worker thread; concurrent requests for the same image
    share one encoding.

    Args:
        max_pixels: bound on width × height; larger images are shrunk.
        max_bytes: how many bytes of encoded images to keep (least recently used go first).
    """

    def __init__(self, max_pixels: int | None = DEFAULT_MAX_PIXELS, max_bytes: int = 512 * 1024**2) -> None:
        self.max_pixels = max_pixels
        self.max_bytes = max_bytes
        self.encoded = 0
        """How many encodings were done (for tests and benches)."""
        self._lru: OrderedDict[tuple[str, int, int], str] = OrderedDict()
        self._bytes = 0
        self._pending: dict[tuple[str, int, int], asyncio.Future[str]] = {}
        self._lock = threading.Lock()

    def _get(self, key: tuple[str, int, int]) -> str | None:
        with self._lock:
            url = self._lru.get(key)
            if url is not None:
                self._lru.move_to_end(key)
            return url

    def _put(self, key: tuple[str, int, int], url: str) -> None:
        with self._lock:
            self.encoded += 1
            if key in self._lru:
                return
            self._lru[key] = url
            self._bytes += len(url)
            while self._bytes > self.max_bytes and len(self._lru) > 1:
                _, old = self._lru.popitem(last=False)
                self._bytes -= len(old)

    def data_url(self, path: Path) -> str:
        """The data URL of ``path`` (blocking)."""
        key = (str(path), *_stamp(path))
        url = self._get(key)
        if url is None:
            url = encode_data_url(path, self.max_pixels)
            self._put(key, url)
        return url

    async def adata_url(self, path: Path) -> str:
        """The data URL of ``path``, encoded in a worker thread the first time."""
        key = (str(path), *_stamp(path))
        url = self._get(key)
        if url is not None:
            return url
        pending = self._pending.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            url = await asyncio.to_thread(encode_data_url, path, self.max_pixels)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            del self._pending[key]
        self._put(key, url)
        future.set_result(url)
        return url
