"""How a CT volume reaches a model: protocol ``ct`` with ``mode`` = ``slices`` | ``montage`` | ``volume``.

- ``slices`` (default): ``slices`` axial slices (default 32, as third-party 3D-RAD
  evaluations feed 2D models: Hulu-Med issue #9, kaiko-ai/eva PR #1030) sampled
  uniformly over the volume, clipped to the HU ``window`` (default ``-1000,1000``)
  and scaled to 0–255, resized to ``size`` × ``size`` (default 256), each captioned
  "Slice k of N, axial:".
- ``montage``: the same slices tiled row by row into one image.
- ``volume``: one ``.npy`` array 1 × ``slices`` × ``size`` × ``size`` in [0, 1] (the M3D-style
  input the authors' preprocessed files have), passed as the only image part, uncaptioned (the
  release's M3D prompt is the image tokens, then the question: ``multi_dataset.py`` lines 83–100),
  for backends that declare they take 3-D arrays (`Backend.takes_volumes`, e.g. ``hf:`` with
  ``--option volume_input=images``); any other backend is refused before the run starts.

A backend that reads no pixels (the baselines: `Backend.reads_images` is False) gets each volume named in
the prompt instead ("CT volume PATH (not sent: this model reads no images)."): nothing is prepared, and
the run needs no volume files (`CTDirect.needs_images`), e.g. on an official import without CT-RATE.

NIfTI values are rescaled to HU with the metadata CSV's slope and intercept when the image
root holds one (``dataset/metadata/*_metadata.csv``). The authors' ``.npy`` volumes
(1 × 32 × 256 × 256 in [0, 1]) are used as they are (no window). Each volume is
prepared once per input of the preparation (`preparation_key`: the file's sha256, the protocol
options the run records, the slope and intercept applied, and `RECIPE`) and kept under
``$MEDTEMPORAL_VOLUME_CACHE`` (default ``$XDG_CACHE_HOME/medtemporal/volumes``), never per call:
changed metadata gets new slices, never the old ones.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import threading
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image

from medtemporal.backends.base import Backend, GenerateConfig, ImagePart, Part, TextPart
from medtemporal.backends.images import file_sha256
from medtemporal.family import (
    Generate, InvalidInputError, Item, PromptSet, Solution, Solver, answer_request, content_hash, image_parts,
    register, write_atomic,
)
from medtemporal.image_roots import register_root
from medtemporal.protocols.direct import question_prompt
from medtemporal.sources.ct_rate import Scan, load_volume, read_metadata

CACHE_ENV = "MEDTEMPORAL_VOLUME_CACHE"
MODES = ("slices", "montage", "volume")
RECIPE = 1
"""Version of the preparation steps (sampling, windowing, orientation, resizing); part of every cache key."""
_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def cache_root() -> Path:
    """``$MEDTEMPORAL_VOLUME_CACHE``, else ``$XDG_CACHE_HOME/medtemporal/volumes`` (``~/.cache`` by default)."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "medtemporal" / "volumes"


register_root("volumes", cache_root)  # predictions record the slices shown as paths under the cache


def parse_window(window: str | tuple[float, float]) -> tuple[float, float]:
    """``"-1000,1000"`` → (-1000.0, 1000.0); one sentence when malformed."""
    try:
        low, high = (float(v) for v in (window.split(",") if isinstance(window, str) else window))
    except (ValueError, TypeError):
        raise InvalidInputError(f"window {window!r} must be two HU values LOW,HIGH such as -1000,1000.") from None
    if high <= low:
        raise InvalidInputError(f"window {window!r} must have LOW < HIGH.")
    return low, high


@lru_cache(maxsize=8)
def _metadata(files: tuple[tuple[str, int, int], ...]) -> dict[str, Scan]:
    found: dict[str, Scan] = {}
    for path, _, _ in files:
        found.update(read_metadata(Path(path)))
    return found


def _scan_for(path: Path, root: Path | None) -> Scan:
    """The metadata row of volume ``path`` under ``root`` (read again whenever a metadata file changes)."""
    if root is None:
        return Scan()
    files = []
    for csv in sorted((Path(root) / "dataset" / "metadata").glob("*_metadata.csv")):
        st = csv.stat()
        files.append((str(csv), st.st_mtime_ns, st.st_size))
    return _metadata(tuple(files)).get(path.name, Scan())


def preparation_key(path: Path, settings: dict[str, object], scan: Scan | None) -> str:
    """The cache folder name of volume ``path`` prepared with ``settings`` and rescaled by ``scan``: the file's
    sha256 and a hash of every other input (settings, slope and intercept, `RECIPE`)."""
    rescale = None if scan is None else [scan.slope, scan.intercept]
    return f"{file_sha256(path)}-{content_hash({**settings, 'rescale': rescale, 'recipe': RECIPE}, 12)}"


def sample_indices(depth: int, n: int) -> np.ndarray:
    """``n`` slice indices spread uniformly over ``depth`` (all of them when ``depth <= n``).

    >>> sample_indices(300, 4).tolist(), sample_indices(3, 32).tolist()
    ([0, 100, 199, 299], [0, 1, 2])
    """
    if depth <= n:
        return np.arange(depth)
    return np.linspace(0, depth - 1, n).round().astype(int)


def axial_slices(path: Path, n: int, window: tuple[float, float], root: Path | None = None,
                 scan: Scan | None = None) -> np.ndarray:
    """``n`` axial slices of a volume as float32 in [0, 1], shape (n, rows, cols).

    A NIfTI volume is rescaled by ``scan`` (default: its row of the metadata under ``root``). Only the sampled
    slices are converted to floats, so memory stays near the stored volume's size.
    """
    if path.suffix == ".npy":
        try:
            data = np.load(path, mmap_mode="r")
        except (OSError, ValueError):
            raise InvalidInputError(f"{path} is not a readable .npy volume; check the preprocessed files.") from None
        vol = np.asarray(data).reshape(-1, *data.shape[-2:])  # (1, D, H, W) → (D, H, W), already in [0, 1]
        return np.clip(vol[sample_indices(vol.shape[0], n)].astype(np.float32), 0, 1)
    picked = load_volume(path, scan or _scan_for(path, root), lambda depth: sample_indices(depth, n))
    low, high = window
    picked = (np.clip(picked, low, high) - low) / (high - low)
    return np.ascontiguousarray(np.transpose(picked, (2, 1, 0))[:, ::-1, :])  # (z, y, x), anterior up


def _resize(slice_: np.ndarray, size: int) -> Image.Image:
    return Image.fromarray((slice_ * 255).round().astype(np.uint8)).resize((size, size), Image.Resampling.BILINEAR)


PNG_LEVEL = 1
"""zlib level of the cached PNGs: lossless either way; level 1 writes a slice about 3 × faster than PIL's 6."""


def prepare(path: Path, mode: str = "slices", slices: int = 32, window: tuple[float, float] = (-1000.0, 1000.0),
            size: int = 256, root: Path | None = None, cache: Path | None = None) -> list[Path]:
    """The files a model is shown for volume ``path`` (PNG slices, one montage PNG, or one ``.npy``), cached.

    The cache key is `preparation_key`; a second call reads nothing but the stats of the file and of
    the metadata (the volume's digest is remembered per process) and the cache folder.
    """
    if mode not in MODES:
        raise InvalidInputError(f"mode {mode!r} is unknown; use one of {', '.join(MODES)}.")
    settings = {"mode": mode, "slices": slices, "window": list(window), "size": size}
    scan = None if path.suffix == ".npy" else _scan_for(path, root)  # the authors' arrays are used as they are
    folder = (cache or cache_root()) / preparation_key(path, settings, scan)
    done = folder / "done.json"
    with _locks_guard:
        lock = _locks.setdefault(str(folder), threading.Lock())
    with lock:
        if not done.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            stack = axial_slices(path, slices, window, root, scan)
            if mode == "volume":
                arr = np.stack([np.asarray(_resize(s, size), dtype=np.float32) / 255 for s in stack])[None]
                names = ["volume.npy"]
                np.save(folder / names[0], arr)
            elif mode == "montage":
                cols = math.ceil(math.sqrt(len(stack)))
                rows = math.ceil(len(stack) / cols)
                sheet = Image.new("L", (cols * size, rows * size))
                for k, s in enumerate(stack):
                    sheet.paste(_resize(s, size), ((k % cols) * size, (k // cols) * size))
                names = ["montage.png"]
                sheet.save(folder / names[0], compress_level=PNG_LEVEL)
            else:
                names = [f"slice_{k:03d}.png" for k in range(len(stack))]
                for name, s in zip(names, stack):
                    _resize(s, size).save(folder / name, compress_level=PNG_LEVEL)
            rescale = None if scan is None else [scan.slope, scan.intercept]
            write_atomic(done, json.dumps({"files": names, **settings, "rescale": rescale, "source": path.name}))
        names = json.loads(done.read_text())["files"]
    return [folder / name for name in names]


@register("protocol", "ct", description="3D volumes to a model: mode=slices (32 axial, default) | montage | volume")
class CTDirect(Solver):
    """One call: each volume as captioned slices (or a montage, or a 3D array), then the question."""

    name = "ct"

    def __init__(self, prompts: PromptSet | None = None, mode: str = "slices", slices: int = 32, window: str = "-1000,1000",
                 size: int = 256) -> None:
        super().__init__(prompts)
        if mode not in MODES:
            raise InvalidInputError(f"Protocol ct: mode {mode!r} is unknown; use one of {', '.join(MODES)}.")
        if int(slices) < 1 or int(size) < 8:
            raise InvalidInputError("Protocol ct: slices must be at least 1 and size at least 8.")
        self.mode, self.slices, self.window, self.size = mode, int(slices), parse_window(str(window)), int(size)
        self._pixels = True

    @property
    def settings(self) -> dict[str, object]:
        """The resolved options, defaults included; the runner records them as the protocol's options."""
        return {"mode": self.mode, "slices": self.slices, "window": f"{self.window[0]:g},{self.window[1]:g}",
                "size": self.size}

    def needs_images(self, backend: Backend) -> bool:
        """Only a backend that reads images needs the volumes (a baseline answers from the text alone)."""
        return backend.reads_images

    def check_backend(self, backend: Backend) -> None:
        """Refuse ``mode=volume`` for a backend that does not declare it takes 3-D volumes; note whether the
        backend reads pixels at all (if not, volumes are named, not prepared or sent)."""
        self._pixels = backend.reads_images
        if self.mode == "volume" and not backend.takes_volumes:
            raise InvalidInputError(
                f"Protocol ct with mode=volume sends 3-D arrays, which {backend.uri} does not declare it takes; "
                "use mode=slices or mode=montage, or a backend that reads volumes (hf: with --option volume_input=images)."
            )

    def _parts(self, item: Item, image_root: Path) -> list[Part]:
        parts: list[Part] = []
        for ref in item.images:
            if ref.role != "volume":
                parts += image_parts([ref], image_root)
                continue
            if not self._pixels:
                parts.append(TextPart(f"CT volume {ref.path} (not sent: this model reads no images)."))
                continue
            files = prepare(image_root / ref.path, self.mode, self.slices, self.window, self.size, image_root)
            if self.mode == "slices":
                for k, f in enumerate(files, 1):
                    parts += [TextPart(f"Slice {k} of {len(files)}, axial:"), ImagePart(f)]
            elif self.mode == "montage":
                parts += [TextPart(f"{self.slices} axial slices, left to right and top to bottom:"), ImagePart(files[0])]
            else:
                parts.append(ImagePart(files[0]))
        return parts

    async def solve(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig) -> Solution:
        parts = await asyncio.to_thread(self._parts, item, image_root)
        template, text = question_prompt(item, self.prompts)
        response = await generate(answer_request(item, (*parts, TextPart(text)), config))
        return Solution(response.text, [{"template": template, "output": response.text, "mode": self.mode,
                                         "slices": self.slices, "window": list(self.window), "size": self.size}])
