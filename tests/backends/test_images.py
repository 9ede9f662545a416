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
    data_urls,
    decoded_images,
    encode_data_url,
    file_sha256,
    hash_is_cheap,
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
    real = images.sha256_file

    def counting(file):
        reads.append(file)
        return real(file)

    monkeypatch.setattr(images, "sha256_file", counting)
    monkeypatch.setattr(images, "INLINE_BYTES", 0)  # hashing this small file on the event loop is cheap only once known
    assert not hash_is_cheap(path)
    first = file_sha256(path)
    assert [file_sha256(path) for _ in range(5)] == [first] * 5
    assert len(reads) == 1 and hash_is_cheap(path)
    _png(path, 8, 8, seed=1)
    os.utime(path, ns=(1, 1))
    assert not hash_is_cheap(path)
    assert file_sha256(path) != first and len(reads) == 2


def test_encoder_encodes_each_image_once_and_shares_concurrent_requests(tmp_path):
    paths = [_png(tmp_path / f"{i}.png", 64, 64, seed=i) for i in range(3)]
    encoder = data_urls(max_pixels=1000)

    async def main():
        return await asyncio.gather(*(encoder.aget(p) for p in paths * 10))

    urls = asyncio.run(main())
    assert encoder.made == 3
    assert len(set(urls)) == 3 and urls[0] == encode_data_url(paths[0], 1000)
    assert encoder.get(paths[0]) == urls[0] and encoder.made == 3


def test_cancelling_the_first_caller_does_not_fail_the_others(tmp_path):
    path = _png(tmp_path / "a.png", 256, 256)
    encoder = data_urls(max_pixels=1000)

    async def main():
        first = asyncio.ensure_future(encoder.aget(path))
        second = asyncio.ensure_future(encoder.aget(path))
        await asyncio.sleep(0)
        first.cancel()
        return await second, first.cancelled()

    url, cancelled = asyncio.run(main())
    assert cancelled and url == encode_data_url(path, 1000) and encoder.made == 1


def test_encoder_forgets_least_recently_used_beyond_its_byte_budget(tmp_path):
    paths = [_png(tmp_path / f"{i}.png", 64, 64, seed=i) for i in range(4)]
    size = len(encode_data_url(paths[0], None))
    encoder = data_urls(max_pixels=None, max_bytes=int(size * 2.5))
    for p in paths:
        encoder.get(p)
    encoder.get(paths[3])
    assert encoder.made == 4
    encoder.get(paths[0])  # evicted: encoded again
    assert encoder.made == 5


def test_a_changed_file_is_made_again(tmp_path):
    path = _png(tmp_path / "a.png", 40, 20)
    images = decoded_images(max_pixels=None)
    first = images.get(path)
    assert images.get(path) is first and images.made == 1 and first.mode == "RGB"
    _png(path, 30, 30, seed=1)
    os.utime(path, ns=(1, 1))
    assert images.get(path).size == (30, 30) and images.made == 2


def test_encoder_errors_reach_every_waiter_and_are_not_kept(tmp_path):
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    encoder = data_urls()

    async def main():
        return await asyncio.gather(*(encoder.aget(bad) for _ in range(3)), return_exceptions=True)

    results = asyncio.run(main())
    assert all(isinstance(r, RequestError) and r.reason == "bad_image" for r in results)
    _png(bad, 8, 8)
    assert encoder.get(bad).startswith("data:image/png;base64,")
    assert images.DEFAULT_MAX_PIXELS == 1024 * 1024
