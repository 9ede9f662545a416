"""A corpus of image pairs with reports, and embeddings cached beside it.

A corpus is a JSON Lines file of `PairEntry` records. Embeddings are
computed once per embedder and set of inputs and stored as
``<folder>/<kind>-<embedder>-<key>.npy`` with a ``.json`` note; ``key`` is the
sha256 of the embedder's identity and the inputs (image paths with file
sizes, or the texts), so a changed corpus or model never reuses stale vectors.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> e = PairEntry(id=0, patient_id="p1", historical="a.png", current="b.png", report="Stable.")
>>> save_corpus(folder / "corpus.jsonl", [e]) and load_corpus(folder / "corpus.jsonl")[0] == e
True
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from medtemporal.errors import InvalidInputError
from medtemporal.retrieval.embedders import Embedder
from medtemporal.schema import Record, iter_jsonl, write_jsonl
from medtemporal.writes import replacing


class PairEntry(Record):
    """One knowledge-corpus instance: a historical and a current image and the change report."""

    id: int
    """Position in the corpus (0-based); retrieval results refer to it."""
    patient_id: str
    historical: str
    """Historical (last-visit) image, relative to the image root."""
    current: str
    """Current-visit image, relative to the image root."""
    report: str


def save_corpus(path: str | Path, entries: Iterable[PairEntry]) -> int:
    """Write ``entries`` to ``path`` (JSON Lines, atomically); return how many."""
    return write_jsonl(path, entries)


def load_corpus(path: str | Path) -> list[PairEntry]:
    """Read a corpus file, checking that ids are 0..n-1 in order."""
    entries = list(iter_jsonl(path, PairEntry))
    for i, e in enumerate(entries):
        if e.id != i:
            raise InvalidInputError(f"{path}: entry {i} has id {e.id}; ids must count 0, 1, 2, ... in order.")
    return entries


def _key(identity: dict[str, Any], inputs: Any) -> str:
    """sha256 of the embedder's identity and the inputs."""
    text = json.dumps({"embedder": identity, "inputs": inputs}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _cached(
    folder: Path, kind: str, embedder: Embedder, key: str, n: int, compute: Callable[[], np.ndarray]
) -> np.ndarray:
    """The ``n`` vectors stored under ``key`` in ``folder``, else ``compute()`` stored there (atomically)."""
    slug = re.sub(r"[^A-Za-z0-9]+", "_", embedder.spec).strip("_")[-40:]
    path = folder / f"{kind}-{slug}-{key[:16]}.npy"
    if path.is_file():
        vectors = np.load(path)
        if vectors.shape[0] == n:
            return vectors
    vectors = np.asarray(compute(), dtype=np.float32)
    folder.mkdir(parents=True, exist_ok=True)
    with replacing(path) as tmp, open(tmp, "wb") as fh:
        np.save(fh, vectors)
    note = {"embedder": embedder.identity(), "kind": kind, "count": n, "inputs_sha256": key}
    path.with_suffix(".json").write_text(json.dumps(note, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return vectors


def image_embeddings(embedder: Embedder, image_root: Path, paths: Sequence[str], folder: Path) -> np.ndarray:
    """Vectors of the images at ``paths`` (relative to ``image_root``), each distinct file embedded once,
    cached in ``folder``."""
    unique = sorted(set(paths))
    sizes = [(image_root / p).stat().st_size if (image_root / p).is_file() else -1 for p in unique]
    key = _key(embedder.identity(), [unique, sizes])
    vectors = _cached(folder, "images", embedder, key, len(unique),
                      lambda: embedder.embed_images([image_root / p for p in unique]))
    where = {p: i for i, p in enumerate(unique)}
    return vectors[[where[p] for p in paths]] if paths else vectors[:0]


def text_embeddings(embedder: Embedder, texts: Sequence[str], folder: Path) -> np.ndarray:
    """Vectors of ``texts`` in order, cached in ``folder``."""
    key = _key(embedder.identity(), list(texts))
    return _cached(folder, "texts", embedder, key, len(texts), lambda: embedder.embed_texts(list(texts)))
