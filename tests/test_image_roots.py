"""Prompt images are recorded relative to the image root or a named root, never by a machine's path."""

from pathlib import Path

from medtemporal import image_roots
from medtemporal.image_roots import OUTSIDE, record_image, register_root, resolve_image


def test_images_are_recorded_relative_and_resolved_where_their_root_is_now(tmp_path, monkeypatch):
    monkeypatch.setattr(image_roots, "_ROOTS", dict(image_roots._ROOTS))  # this test's root goes with it
    cache = tmp_path / "cache"
    register_root("test-cache", lambda: cache)
    image_root = tmp_path / "data"
    assert record_image(image_root / "p1" / "s1.jpg", image_root) == {"image": "p1/s1.jpg"}
    part = record_image(cache / "abc" / "slice_003.png", image_root)
    assert part == {"image": "abc/slice_003.png", "root": "test-cache"}
    assert resolve_image(part, image_root) == cache / "abc" / "slice_003.png"
    moved = tmp_path / "elsewhere"
    register_root("test-cache", lambda: moved)  # another machine, or the cache moved: resolved where it is now
    assert resolve_image(part, image_root) == moved / "abc" / "slice_003.png"
    assert resolve_image({"image": "p1/s1.jpg"}, image_root) == image_root / "p1" / "s1.jpg"


def test_an_image_under_no_known_root_keeps_only_its_name(tmp_path):
    part = record_image(Path("/somewhere/private/x.png"), tmp_path)
    assert part == {"image": "x.png", "root": OUTSIDE} and "/" not in part["image"]
    assert resolve_image(part, tmp_path) is None and resolve_image({"image": "x", "root": "unknown"}, tmp_path) is None
