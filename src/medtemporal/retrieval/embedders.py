"""Embedders behind one interface: images and texts → L2-normalised float32 rows.

Named by a spec string (`load_embedder`):

- ``pixel`` / ``pixel:SIZE``: built-in and offline; the grayscale image box-averaged to
  SIZE×SIZE (default 16), mean-centred and L2-normalised. Deterministic, no model.
- ``clip:NAME_OR_PATH``: a CLIP-style model loaded with ``transformers`` (``AutoModel`` with
  ``get_image_features``/``get_text_features``: CLIP, SigLIP such as MedSigLIP, ...), from a
  local folder or a Hugging Face model name.
- ``open_clip:PATH``: an open_clip model, either a folder with ``open_clip_config.json``
  (BiomedCLIP's layout) or ``ARCH@WEIGHTS`` (an architecture name and a weights file).
- ``sentence:NAME_OR_PATH``: a sentence-transformers text encoder (texts only).

A model name resolves through the Hugging Face hub cache and is downloaded on
first use (`medtemporal.hf_models.model_folder`; ``HF_HUB_OFFLINE=1`` forbids it);
the snapshot's revision is part of `Embedder.identity`.

>>> import tempfile, pathlib
>>> from PIL import Image
>>> p = pathlib.Path(tempfile.mkdtemp()) / "a.png"
>>> Image.new("L", (64, 64), 7).save(p)
>>> load_embedder("pixel:8").embed_images([p]).shape
(1, 64)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
from PIL import Image, UnidentifiedImageError

from medtemporal.errors import InvalidInputError, require
from medtemporal.hf_models import model_folder, revision
from medtemporal.progress import progress_bar


def normalise_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (zero rows stay zero), as float32."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


def open_image(path: Path) -> Image.Image:
    """The image at ``path``, loaded, or one clear error naming it."""
    try:
        with Image.open(path) as im:
            im.load()
            return im.copy()
    except FileNotFoundError:
        raise InvalidInputError(f"Image {path} does not exist; check the image root.") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise InvalidInputError(f"Image {path} cannot be read ({exc}); replace the file.") from None


def _weight_files(folder: Path) -> list[Path]:
    """The ``*.safetensors`` then ``*.bin`` files of a Hugging Face model folder, sorted."""
    return sorted(folder.glob("*.safetensors")) + sorted(folder.glob("*.bin"))


def _batches(items: Sequence[Any], size: int, desc: str) -> Iterator[Sequence[Any]]:
    bar = progress_bar(total=len(items), desc=desc, disable=len(items) < size)
    for start in range(0, len(items), size):
        batch = items[start : start + size]
        yield batch
        bar.update(len(batch))
    bar.close()


class Embedder(ABC):
    """Maps images (by path) and, where it can, texts to comparable unit vectors."""

    spec: str = ""
    supports_images: bool = True
    supports_text: bool = False
    weights: Sequence[Path] = ()
    """The model's weight files; their names and sizes are part of `identity`."""

    def identity(self) -> dict[str, Any]:
        """What determines the vectors (the spec, the weight files and, for a hub model, its revision); part of
        every cache key."""
        found = {"spec": self.spec, "weights": [(w.name, w.stat().st_size) for w in self.weights]}
        commit = revision(self.weights[0].parent) if self.weights else None
        return {**found, "revision": commit} if commit else found

    def embed_images(self, paths: Sequence[Path]) -> np.ndarray:
        """(n, d) float32, unit rows, one per image in order."""
        if not self.supports_images:
            raise InvalidInputError(f"Embedder {self.spec!r} embeds texts only; use an image embedder such as pixel or clip:NAME_OR_PATH.")
        if not paths:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalise_rows(np.concatenate([self._images(b) for b in _batches(list(paths), 64, f"embed images ({self.spec})")]))

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """(n, d) float32, unit rows, one per text in order."""
        if not self.supports_text:
            raise InvalidInputError(
                f"Embedder {self.spec!r} cannot embed text; use clip:NAME_OR_PATH, open_clip:PATH or sentence:NAME_OR_PATH."
            )
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalise_rows(np.concatenate([self._texts(b) for b in _batches(list(texts), 64, f"embed texts ({self.spec})")]))

    @property
    @abstractmethod
    def dim(self) -> int:
        """Vector length."""

    def _images(self, paths: Sequence[Path]) -> np.ndarray:
        raise NotImplementedError

    def _texts(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError


class PixelEmbedder(Embedder):
    """Box-averaged grayscale thumbnail, mean-centred: offline, deterministic, model-free."""

    def __init__(self, size: int = 16) -> None:
        if not 2 <= size <= 256:
            raise InvalidInputError(f"Pixel embedder size {size} is out of range; use 2 to 256 (e.g. pixel:16).")
        self.size = size
        self.spec = f"pixel:{size}"

    @property
    def dim(self) -> int:
        return self.size * self.size

    def identity(self) -> dict[str, Any]:
        return {"spec": self.spec, "method": "L, BOX resize, mean-centred, L2", "version": 1}

    def _images(self, paths: Sequence[Path]) -> np.ndarray:
        rows = []
        for path in paths:
            im = open_image(Path(path)).convert("L").resize((self.size, self.size), Image.Resampling.BOX)
            v = np.asarray(im, dtype=np.float32).ravel() / 255.0
            rows.append(v - v.mean())
        return np.stack(rows)


class HFClipEmbedder(Embedder):
    """A CLIP-style model folder through ``transformers`` (``AutoModel`` + its processors)."""

    supports_text = True

    def __init__(self, path: str | Path, device: str | None = None) -> None:
        self.path = model_folder(path, what="retrieval encoder",
                                 fix="pass --embedder clip:/path/to/model, or --embedder pixel")
        transformers = require("transformers", "hf")
        self.torch = require("torch", "hf")
        self.spec = f"clip:{path}"
        self.device = device or ("cuda" if self.torch.cuda.is_available() else "cpu")
        self.model = transformers.AutoModel.from_pretrained(str(self.path)).to(self.device).eval()
        self.image_processor = transformers.AutoImageProcessor.from_pretrained(str(self.path))
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(self.path))
        except (OSError, ValueError):
            self.tokenizer, self.supports_text = None, False
        config = self.model.config
        self._dim = int(getattr(config, "projection_dim", 0) or config.vision_config.hidden_size)
        limits = (getattr(getattr(config, "text_config", None), "max_position_embeddings", None),
                  getattr(self.tokenizer, "model_max_length", None))
        self._max_tokens = min((int(x) for x in limits if x), default=None)
        """Texts are cut to what the text tower takes (a report may be longer than CLIP's 77 tokens)."""
        self.weights = _weight_files(self.path)

    @property
    def dim(self) -> int:
        return self._dim

    def _features(self, out: Any) -> np.ndarray:
        tensor = out if isinstance(out, self.torch.Tensor) else getattr(out, "pooler_output", None)
        if tensor is None:
            raise InvalidInputError(f"{self.path} returned no pooled features; use a CLIP- or SigLIP-style model.")
        return tensor.detach().float().cpu().numpy()

    def _images(self, paths: Sequence[Path]) -> np.ndarray:
        images = [open_image(Path(p)).convert("RGB") for p in paths]
        inputs = self.image_processor(images=images, return_tensors="pt").to(self.device)
        with self.torch.no_grad():
            return self._features(self.model.get_image_features(pixel_values=inputs["pixel_values"]))

    def _texts(self, texts: Sequence[str]) -> np.ndarray:
        inputs = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self._max_tokens,
                                return_tensors="pt").to(self.device)
        with self.torch.no_grad():
            return self._features(self.model.get_text_features(**inputs))


class OpenClipEmbedder(Embedder):
    """An open_clip model from a local folder (``open_clip_config.json``) or ``ARCH@WEIGHTS``."""

    supports_text = True

    def __init__(self, target: str, device: str | None = None) -> None:
        open_clip = require("open_clip", "clip")
        self.torch = require("torch", "clip")
        self.spec = f"open_clip:{target}"
        self.device = device or ("cuda" if self.torch.cuda.is_available() else "cpu")
        arch, sep, weights = target.partition("@")
        if sep:
            if not Path(weights).is_file():
                raise InvalidInputError(f"open_clip weights {weights} do not exist; pass open_clip:ARCH@/path/to/weights.")
            model, _, preprocess = open_clip.create_model_and_transforms(arch, pretrained=weights)
            tokenizer = open_clip.get_tokenizer(arch)
            self.weights = [Path(weights)]
        else:
            folder = Path(target)
            if not (folder / "open_clip_config.json").is_file():
                raise InvalidInputError(
                    f"{folder} has no open_clip_config.json; pass an open_clip model folder or open_clip:ARCH@WEIGHTS."
                )
            model, preprocess = open_clip.create_model_from_pretrained(f"local-dir:{folder}")
            tokenizer = open_clip.get_tokenizer(f"local-dir:{folder}")
            self.weights = sorted(p for p in folder.iterdir() if p.suffix in (".bin", ".safetensors", ".pt"))
        self.model, self.preprocess, self.tokenizer = model.to(self.device).eval(), preprocess, tokenizer
        with self.torch.no_grad():
            self._dim = int(self.model.encode_text(self.tokenizer(["x"]).to(self.device)).shape[-1])

    @property
    def dim(self) -> int:
        return self._dim

    def _images(self, paths: Sequence[Path]) -> np.ndarray:
        batch = self.torch.stack([self.preprocess(open_image(Path(p)).convert("RGB")) for p in paths]).to(self.device)
        with self.torch.no_grad():
            return self.model.encode_image(batch).float().cpu().numpy()

    def _texts(self, texts: Sequence[str]) -> np.ndarray:
        with self.torch.no_grad():
            return self.model.encode_text(self.tokenizer(list(texts)).to(self.device)).float().cpu().numpy()


class SentenceEmbedder(Embedder):
    """A sentence-transformers model folder (texts only)."""

    supports_images = False
    supports_text = True

    def __init__(self, path: str | Path, device: str | None = None) -> None:
        self.path = model_folder(path, what="sentence encoder", fix="pass sentence:/path/to/model")
        st = require("sentence_transformers", "hf")
        self.spec = f"sentence:{path}"
        self.model = st.SentenceTransformer(str(self.path), device=device or "cpu")
        dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self._dim = int(dim())
        self.weights = _weight_files(self.path)

    @property
    def dim(self) -> int:
        return self._dim

    def _texts(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.model.encode(list(texts), batch_size=64, show_progress_bar=False), dtype=np.float32)


def load_embedder(spec: str, device: str | None = None) -> Embedder:
    """The embedder named by ``spec`` (see the module docstring).

    Raises:
        InvalidInputError: an unknown kind or a bad path, in one sentence.
        UnavailableError: a model that is neither on disk nor downloadable now (one sentence naming the fix).
    """
    kind, _, target = spec.partition(":")
    if kind == "pixel":
        if target and not target.isdigit():
            raise InvalidInputError(f"Embedder {spec!r}: the pixel size must be an integer, e.g. pixel:16.")
        return PixelEmbedder(int(target) if target else 16)
    if not target:
        raise InvalidInputError(f"Embedder {spec!r} needs a path or model name; write {kind or 'clip'}:/path/to/model "
                                f"or {kind or 'clip'}:NAME.")
    if kind == "clip":
        return HFClipEmbedder(target, device)
    if kind == "open_clip":
        return OpenClipEmbedder(target, device)
    if kind == "sentence":
        return SentenceEmbedder(target, device)
    raise InvalidInputError(
        f"Unknown embedder {spec!r}; use pixel[:SIZE], clip:NAME_OR_PATH, open_clip:PATH (or ARCH@WEIGHTS) or "
        "sentence:NAME_OR_PATH."
    )
