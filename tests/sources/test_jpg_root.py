"""The MIMIC-CXR-JPG root option and the one missing-image policy, the same in every family that reads one."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import pytest

import medtemporal.benchmarks  # noqa: F401  (registers the families)
from medtemporal.errors import InvalidInputError
from medtemporal.registry import entries
from medtemporal.sources.jpg_root import IMAGE_MISSING, jpg_root, keep_with_images


def _root(tmp_path: Path, *images: str) -> Path:
    (tmp_path / "files").mkdir()
    for name in images:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"jpeg")
    return tmp_path


def test_a_root_that_is_not_one_is_refused_in_one_sentence(tmp_path):
    with pytest.raises(InvalidInputError, match="is not a folder"):
        jpg_root(tmp_path / "nowhere", verify_images=True)
    with pytest.raises(InvalidInputError, match="has no files/ folder, so it is not a MIMIC-CXR-JPG root"):
        jpg_root(tmp_path, verify_images=True)
    with pytest.raises(InvalidInputError, match="needs --mimic-cxr-jpg to find the images.*--no-verify-images"):
        jpg_root(None, verify_images=True, needed_for="the images")
    assert jpg_root(None, verify_images=False) is None and jpg_root(None, verify_images=True, needed_for=None) is None
    assert jpg_root(_root(tmp_path), verify_images=True) == tmp_path.resolve()


def test_a_record_with_a_missing_image_is_left_out_and_counted(tmp_path):
    root = _root(tmp_path, "files/p1/a.jpg", "files/p1/b.jpg")
    records = [("both", ["files/p1/a.jpg", "files/p1/b.jpg"]), ("one gone", ["files/p1/a.jpg", "files/p1/c.jpg"]),
               ("none", [])]
    counted: Counter[str] = Counter({IMAGE_MISSING: 1})  # counts add up over calls (e.g. two files)
    kept = keep_with_images(records, lambda r: r[1], root, counted)
    assert [r[0] for r in kept] == ["both", "none"] and counted == {IMAGE_MISSING: 2}
    with pytest.raises(InvalidInputError, match="None of the 1 images the records name exists"):
        keep_with_images([("x", ["files/p9/z.jpg"])], lambda r: r[1], root, Counter())


def _options(spec) -> dict[str, argparse.Action]:
    parser = argparse.ArgumentParser()
    spec.add_arguments(parser)
    return {option: action for action in parser._actions for option in action.option_strings}


@pytest.mark.parametrize("family", [e.name for e in entries("benchmark")])
def test_every_family_that_reads_a_jpg_root_declares_the_same_two_options(family):
    """Each family's ``--mimic-cxr-jpg`` comes with ``--no-verify-images`` (dest ``verify_images``), both from
    `add_jpg_arguments`."""
    spec = next(e.obj for e in entries("benchmark") if e.name == family)
    options = _options(spec)
    if "--mimic-cxr-jpg" not in options:
        pytest.skip(f"{family} reads no MIMIC-CXR-JPG root")
    assert options["--mimic-cxr-jpg"].help.startswith("MIMIC-CXR-JPG root (the folder holding files/)")
    verify = options["--no-verify-images"]
    assert verify.dest == "verify_images" and verify.default is True
    assert verify.help.startswith("do not check that every image exists under --mimic-cxr-jpg")
