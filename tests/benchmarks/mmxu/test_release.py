"""The released MMXU file: read whole, every field kept, written back byte for byte; bad input in one sentence."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from helpers.mmxu import OFFICIAL, build_args, needs_release

from medtemporal.benchmark import load
from medtemporal.benchmarks.mmxu.command import build
from medtemporal.benchmarks.mmxu.release import (
    CURRENT_LABEL,
    KEYS,
    PRIOR_LABEL,
    read_release,
    release_record,
    write_release,
)
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError

RECORD = {"id": 7, "content_type": "worsen", "question": "What change is seen in the right lung?",
          "options": {"A": "Improved.", "B": "Worsened.", "C": "Unchanged.", "D": "New nodule."}, "answer": "B",
          "cur_image_path": "files/p10/p10000032/s50414267/aa-bb.jpg",
          "prior_image_path": "files/p10/p10000032/s53189527/cc-dd.jpg"}


@needs_release
def test_the_release_imports_whole_with_every_field_and_round_trips(tmp_path: Path) -> None:
    assert main(["build", "mmxu", "--official", str(OFFICIAL), "--no-verify-images", "--no-audit",
                 "--out", str(tmp_path / "bench")]) == 0
    bench = load(tmp_path / "bench")
    items, records = bench.items, [json.loads(line) for line in OFFICIAL.read_text(encoding="utf-8").splitlines()]
    assert len(items) == len(records) == 3000
    assert Counter(i.subtype for i in items) == {"no change": 1000, "worsen": 1000, "improved": 1000}
    assert len({i.cluster for i in items}) == 1201 and {i.task for i in items} == {"change"}
    for item, record in zip(items, records, strict=True):
        assert release_record(item) == record and list(release_record(item)) == list(KEYS)
        assert item.meta["id"] == record["id"] and item.meta["content_type"] == record["content_type"]
        prior, current = item.images
        assert (prior.path, prior.label, prior.visit) == (record["prior_image_path"], PRIOR_LABEL, 1)
        assert (current.path, current.label, current.visit) == (record["cur_image_path"], CURRENT_LABEL, 2)
        assert item.meta["patient_id"] == record["cur_image_path"].split("/")[2]
    manifest = bench.manifest
    assert manifest.licence == "credentialed" and manifest.image_root is None and manifest.audit is None
    assert manifest.config["patients"] == 1201 and manifest.config["blind_picks"] is False
    out = tmp_path / "MMXU-test.jsonl"
    assert main(["export", str(tmp_path / "bench"), "--format", "mmxu", "--out", str(out)]) == 0
    assert out.read_bytes() == OFFICIAL.read_bytes()


def _write(tmp_path: Path, *records: object) -> Path:
    path = tmp_path / "MMXU-test.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize(("change", "message"), [
    ({"answer": "E"}, "key `answer` 'E' is not one of the options"),
    ({"content_type": "stable"}, "key `content_type` must be one of"),
    ({"prior_image_path": "files/p10/p10000099/s53189527/cc.jpg"}, "the prior and current images belong to different"),
    ({"cur_image_path": "/abs/cur.jpg"}, "key `cur_image_path` must be a MIMIC-CXR-JPG path"),
    ({"id": "7"}, "key `id` must be an integer"),
    ({"explanation": "dev only"}, "key `explanation` is not one of the release's"),
])
def test_a_bad_record_names_its_line_and_key(tmp_path: Path, change: dict, message: str) -> None:
    path = _write(tmp_path, RECORD, {**RECORD, "id": 8, **change})
    with pytest.raises(InvalidInputError) as err:
        read_release(path)
    assert f"line 2 is not an MMXU record ({message}" in str(err.value) and "\n" not in str(err.value)


def test_missing_keys_repeated_ids_and_empty_files_are_refused(tmp_path: Path) -> None:
    broken = {k: v for k, v in RECORD.items() if k != "options"}
    for records, message in (((broken,), "key `options` is missing"), ((RECORD, RECORD), "line 2 repeats id 7 of line 1"),
                             (("{not json",), "line 1 is not a JSON record"), ((), "holds no records")):
        with pytest.raises(InvalidInputError, match=message):
            read_release(_write(tmp_path, *records))
    with pytest.raises(InvalidInputError, match="does not exist"):
        read_release(tmp_path / "absent.jsonl")


def test_images_resolve_under_the_root_or_the_build_says_why_not(tmp_path: Path) -> None:
    path = _write(tmp_path, RECORD)
    with pytest.raises(InvalidInputError, match="needs --mimic-cxr-jpg"):
        build(build_args(path, None, audit=False))
    with pytest.raises(InvalidInputError, match="has no files/ folder"):
        build(build_args(path, tmp_path, audit=False))
    (tmp_path / "files").mkdir()
    with pytest.raises(InvalidInputError, match="None of the 2 images"):
        build(build_args(path, tmp_path, audit=False))
    image = tmp_path / RECORD["prior_image_path"]
    image.parent.mkdir(parents=True)
    image.write_bytes(b"jpeg")
    items, manifest = build(build_args(path, tmp_path, audit=False))  # one of its two images: left out, counted
    assert items == [] and manifest.exclusions == {"image_missing": 1}
    assert manifest.image_root == str(tmp_path.resolve())
    assert manifest.licence == "credentialed"  # neither the file nor the root is a verified phantom


def test_written_items_are_the_release_layout(tmp_path: Path) -> None:
    items = read_release(_write(tmp_path, RECORD, {**RECORD, "id": 9, "question": "Is the heart’s size unchanged?"}))
    out = tmp_path / "again.jsonl"
    assert write_release(items, out) == 2
    assert out.read_bytes() == (tmp_path / "MMXU-test.jsonl").read_bytes().replace(b"\\u2019", "’".encode())
