"""The phantom licence comes from a checksum manifest that must verify, never from a file anyone can drop."""

import json
import os
import shutil
from pathlib import Path

import pytest

from medtemporal.phantoms.cxr import write_cxr_phantoms
from medtemporal.provenance import MANIFEST, licence_in_background, licence_of, verify_phantom, write_phantom_manifest


@pytest.fixture(scope="module")
def phantom(tmp_path_factory) -> Path:
    return write_cxr_phantoms(tmp_path_factory.mktemp("cxr") / "p", patients=2, seed=0, image_size=64).root


def _copy(phantom: Path, tmp_path: Path) -> Path:
    out = tmp_path / "copy"
    shutil.copytree(phantom, out)
    return out


def test_a_generated_phantom_verifies_for_each_of_its_roots(phantom):
    assert verify_phantom(phantom)
    assert licence_of(phantom / "mimic-cxr-jpg", phantom / "mimic-ext-cxr-qba") == "synthetic"
    listed = json.loads((phantom / MANIFEST).read_text())["files"]
    assert "phantom_truth.jsonl" in listed and any(p.endswith(".jpg") for p in listed)


@pytest.mark.parametrize(
    "tamper",
    [
        "edit",  # real data under a copied manifest: a listed file with other content
        "add",  # a file the generator did not write
        "remove",  # a listed file gone
        "empty",  # an empty manifest
        "garbage",  # not JSON
    ],
)
def test_anything_that_does_not_verify_is_credentialed(phantom, tmp_path, tamper):
    root = _copy(phantom, tmp_path)
    jpg = next((root / "mimic-cxr-jpg" / "files").rglob("*.jpg"))
    if tamper == "edit":
        jpg.write_bytes(b"\xff\xd8 a real patient's image")
    elif tamper == "add":
        (root / "mimic-cxr-jpg" / "files" / "extra.jpg").write_bytes(b"x")
    elif tamper == "remove":
        jpg.unlink()
    elif tamper == "empty":
        (root / MANIFEST).write_text("{}")
    else:
        (root / MANIFEST).write_bytes(b"\x00\xff not json")
    assert licence_of(root / "mimic-cxr-jpg", root / "mimic-ext-cxr-qba") == "credentialed"


def test_the_check_run_in_another_process_gives_the_same_licence(phantom, tmp_path):
    edited = _copy(phantom, tmp_path)
    (edited / "phantom_truth.jsonl").write_text("edited\n")
    checks = [licence_in_background(root / "mimic-cxr-jpg", root / "mimic-ext-cxr-qba") for root in (phantom, edited)]
    assert [check.result(timeout=120) for check in checks] == ["synthetic", "credentialed"]


def test_real_data_beside_a_phantom_manifest_or_without_one_is_credentialed(phantom, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "data.csv").write_text("a\n1\n")
    assert licence_of(real) == "credentialed"
    shutil.copy(phantom / MANIFEST, real / MANIFEST)  # a copied manifest lists other files
    assert licence_of(real) == "credentialed"
    (real / "phantom.json").write_text("{}")  # the old marker means nothing
    assert licence_of(real) == "credentialed"
    assert licence_of() == "credentialed"
    # one verified root and one not: credentialed
    assert licence_of(phantom / "mimic-cxr-jpg", real) == "credentialed"


def test_the_manifest_is_written_by_any_generator_and_is_deterministic(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name / "sub").mkdir(parents=True)
        (tmp_path / name / "sub" / "x.txt").write_text("same")
        write_phantom_manifest(tmp_path / name, "test", seed=1)
    assert (tmp_path / "a" / MANIFEST).read_bytes() == (tmp_path / "b" / MANIFEST).read_bytes()
    assert licence_of(tmp_path / "a" / "sub" / "x.txt") == "synthetic"


def test_a_matching_stamp_spares_the_hashing_but_not_an_edit(phantom, tmp_path, monkeypatch):
    import medtemporal.provenance as provenance

    root = _copy(phantom, tmp_path)  # a copy: new status-change times, so the copied stamp is stale
    assert verify_phantom(root) and provenance.stamp_path(root).is_file()
    hashed: list[str] = []
    real_sha = provenance.sha256_file
    monkeypatch.setattr(provenance, "sha256_file", lambda p: hashed.append(str(p)) or real_sha(p))
    monkeypatch.setattr(provenance, "RECENT_S", -60.0)  # treat every file as older than the stamp
    assert verify_phantom(root) and hashed == []
    report = next((root / "mimic-cxr-jpg" / "files").rglob("*.txt"))
    st = report.stat()
    report.write_bytes(report.read_bytes().replace(b"FINDINGS", b"FINDINGX"))  # same size, times restored
    os.utime(report, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not verify_phantom(root)  # the status-change time moved: the stamp is stale, everything is hashed
    assert len(hashed) > 1
