import asyncio
import base64
import io
import os

import numpy as np
import pytest
from PIL import Image

from medtemporal.backends import images
from medtemporal.backends.base import RequestError
from medtemporal.backends.images import (
    ImageEncoder,
    encode_data_url,
    file_sha256,
    load_image,
)


def _png(path, w, h, mode="L", seed=0):
    rng = np.random.default_rng(seed)
    arr = rng.integers(0, 255, (h, w) if mode == "L" else (h, w, 3), dtype=np.uint8)
    Image.fromarray(arr).save(path)
    return path


def _decode(url: str) -> Image.Image:
    header, data = url.split(",", 1)
    assert header.startswith("data:image/") and header.endswith(";base64")
    return Image.open(io.BytesIO(base64.b64decode(data)))


def test_small_images_are_sent_byte_for_byte(tmp_path):
    path = _png(tmp_path / "a.png", 40, 30)
    url = encode_data_url(path, max_pixels=10_000)
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == path.read_bytes()


@pytest.mark.parametrize("fmt, mime", [("PNG", "image/png"), ("JPEG", "image/jpeg")])
def test_large_images_are_shrunk_to_the_pixel_bound_keeping_aspect(tmp_path, fmt, mime):
    path = tmp_path / f"big.{fmt.lower()}"
    Image.fromarray(np.full((300, 600, 3), 128, dtype=np.uint8)).save(path, format=fmt)
    url = encode_data_url(path, max_pixels=20_000)
    assert url.startswith(f"data:{mime};")
    image = _decode(url)
    assert image.width * image.height <= 20_000
    assert abs(image.width / image.height - 2.0) < 0.05
    assert load_image(path, 20_000).size == image.size


def test_sixteen_bit_images_are_scaled_not_clipped(tmp_path):
    arr = np.linspace(0, 4000, 64 * 64).reshape(64, 64).astype(np.uint16)
    path = tmp_path / "x16.png"
    Image.fromarray(arr).save(path)
    image = _decode(encode_data_url(path, max_pixels=None))
    values = np.asarray(image.convert("L"))
    assert values.min() == 0 and values.max() == 255 and len(np.unique(values)) > 200
    assert load_image(path, None).mode == "RGB"


def test_corrupt_and_missing_images_fail_with_one_clear_sentence(tmp_path):
    good = _png(tmp_path / "ok.jpg", 32, 32)
    Image.open(good).save(tmp_path / "full.jpg", format="JPEG")
    (tmp_path / "cut.jpg").write_bytes((tmp_path / "full.jpg").read_bytes()[:200])
    with pytest.raises(RequestError, match="cut.jpg cannot be read") as err:
        encode_data_url(tmp_path / "cut.jpg", None)
    assert err.value.reason == "bad_image"
    with pytest.raises(RequestError, match="does not exist; check --image-root") as err:
        load_image(tmp_path / "nope.png", None)
    assert err.value.reason == "missing_image"


def test_file_hash_is_computed_once_per_file_until_it_changes(tmp_path, monkeypatch):
    path = _png(tmp_path / "h.png", 8, 8)
    reads = []
    real = type(path).read_bytes

    def counting(self):
        reads.append(self)
        return real(self)

    monkeypatch.setattr(type(path), "read_bytes", counting)
    first = file_sha256(path)
    assert [file_sha256(path) for _ in range(5)] == [first] * 5
    assert len(reads) == 1
    _png(path, 8, 8, seed=1)
    os.utime(path, ns=(1, 1))
    assert file_sha256(path) != first and len(reads) == 2


def test_encoder_encodes_each_image_once_and_shares_concurrent_requests(tmp_path):
    paths = [_png(tmp_path / f"{i}.png", 64, 64, seed=i) for i in range(3)]
    encoder = ImageEncoder(max_pixels=1000)

    async def main():
        return await asyncio.gather(*(encoder.adata_url(p) for p in paths * 10))

    urls = asyncio.run(main())
    assert encoder.encoded == 3
    assert len(set(urls)) == 3
    assert encoder.data_url(paths[0]) == urls[0] and encoder.encoded == 3


def test_encoder_forgets_least_recently_used_beyond_its_byte_budget(tmp_path):
    paths = [_png(tmp_path / f"{i}.png", 64, 64, seed=i) for i in range(4)]
    size = len(encode_data_url(paths[0], None))
    encoder = ImageEncoder(max_pixels=None, max_bytes=int(size * 2.5))
    for p in paths:
        encoder.data_url(p)
    encoder.data_url(paths[3])
    assert encoder.encoded == 4
    encoder.data_url(paths[0])  # evicted: encoded again
    assert encoder.encoded == 5


def test_encoder_errors_reach_every_waiter(tmp_path):
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    encoder = ImageEncoder()

    async def main():
        return await asyncio.gather(*(encoder.adata_url(bad) for _ in range(3)), return_exceptions=True)

    results = asyncio.run(main())
    assert all(isinstance(r, RequestError) and r.reason == "bad_image" for r in results)
    assert images.DEFAULT_MAX_PIXELS == 1024 * 1024
