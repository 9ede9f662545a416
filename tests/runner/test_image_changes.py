"""Images are hashed and encoded once per file version: small files on the event loop, large ones in a worker
thread; a file changed on disk between runs is read again, asked about again and sent as it now is."""

import asyncio
import base64
import os

import numpy as np
from helpers.tiny import make_tiny_benchmark
from PIL import Image

from medtemporal.backends import images
from medtemporal.backends.images import INLINE_BYTES, data_urls, file_sha256, hash_is_cheap
from medtemporal.runner import run


def _png(path, side, seed):
    Image.fromarray(np.random.default_rng(seed).integers(0, 255, (side, side), dtype=np.uint8)).save(path)
    return path


def test_a_file_changed_between_runs_is_asked_about_again_with_its_new_bytes(fake, tmp_path):
    fake.configure(keep_bodies=True)
    bench = make_tiny_benchmark(tmp_path, n=3)
    first = run(bench, fake.uri(), tmp_path / "r1", progress=False)
    changed = tmp_path / "data" / "img" / "p0_1.png"
    _png(changed, 16, seed=99)
    os.utime(changed, ns=(1, 1))  # a new version whatever the clock's resolution
    fake.reset()
    fake.configure(keep_bodies=True)
    second = run(bench, fake.uri(), tmp_path / "r2", progress=False)
    assert (first.requests, second.requests, second.cache_hits) == (3, 1, 2)
    (body,) = fake.stats()["bodies"]
    url = body["messages"][0]["content"][1]["image_url"]["url"]
    assert url == "data:image/png;base64," + base64.b64encode(changed.read_bytes()).decode()


def test_small_files_are_made_on_the_loop_and_large_ones_in_a_thread(tmp_path, monkeypatch):
    small, large = _png(tmp_path / "small.png", 16, 0), _png(tmp_path / "large.png", 200, 1)
    assert small.stat().st_size <= INLINE_BYTES < large.stat().st_size
    threads = []
    real = asyncio.to_thread

    def counting(func, *args):
        threads.append(args[0])
        return real(func, *args)

    monkeypatch.setattr(images.asyncio, "to_thread", counting)
    urls = data_urls(max_pixels=None)

    async def main():
        return [await urls.aget(p) for p in (small, large, small, large)]

    made = asyncio.run(main())
    assert threads == [large] and urls.made == 2 and made[0] == made[2] != made[1] == made[3]
    _png(small, 16, 2)
    os.utime(small, ns=(1, 1))
    again = asyncio.run(urls.aget(small))
    assert urls.made == 3 and again != made[0]
    assert again == "data:image/png;base64," + base64.b64encode(small.read_bytes()).decode()


def test_hashing_is_cheap_for_small_files_and_for_large_ones_already_hashed(tmp_path):
    small, large = _png(tmp_path / "small.png", 16, 0), _png(tmp_path / "large.png", 200, 1)
    assert hash_is_cheap(small) and not hash_is_cheap(large)
    file_sha256(large)
    assert hash_is_cheap(large)
    _png(large, 200, 3)
    os.utime(large, ns=(1, 1))
    assert not hash_is_cheap(large)
    assert hash_is_cheap(tmp_path / "missing.png")  # fails at once when hashed: nothing to read
