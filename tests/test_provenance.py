"""The phantom licence comes from a checksum manifest that must verify, never from a file anyone can drop."""

import json
import os
import shutil
from pathlib import Path

import pytest

from medtemporal.phantoms.cxr import write_cxr_phantoms
from medtemporal.checksums import sha256_file
from medtemporal.provenance import (
    PHANTOM_MANIFEST,
    Release,
    licence_in_background,
    licence_of,
    most_restrictive,
    release_licence,
    run_licence,
    verify_phantom,
    write_phantom_manifest,
)


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
    listed = json.loads((phantom / PHANTOM_MANIFEST).read_text())["files"]
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
        (root / PHANTOM_MANIFEST).write_text("{}")
    else:
        (root / PHANTOM_MANIFEST).write_bytes(b"\x00\xff not json")
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
    shutil.copy(phantom / PHANTOM_MANIFEST, real / PHANTOM_MANIFEST)  # a copied manifest lists other files
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
    assert (tmp_path / "a" / PHANTOM_MANIFEST).read_bytes() == (tmp_path / "b" / PHANTOM_MANIFEST).read_bytes()
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


# --- issue 24: the licence follows every byte that can leave ---------------------------------------------------------

def test_the_most_restrictive_licence_wins_and_nothing_known_is_credentialed():
    assert most_restrictive("open", "synthetic") == "synthetic"
    assert most_restrictive("synthetic", "open", "credentialed") == "credentialed"
    assert most_restrictive("open") == "open" and most_restrictive() == "credentialed"


def test_a_released_file_is_open_only_when_its_checksum_is_a_reviewed_release(tmp_path):
    path = tmp_path / "micxr_test.jsonl"
    path.write_text('{"q_id": 1}\n')
    listed = Release("micxr_test.jsonl", sha256_file(path), "open", "a test")
    assert release_licence([path], [listed]) == "open"
    assert release_licence([path], []) == "credentialed"  # unknown: could hold anything
    assert release_licence([path], [Release("x", sha256_file(path), "credentialed", "a test")]) == "credentialed"
    path.write_text('{"q_id": 1, "report": "a patient\'s findings"}\n')  # edited: no longer the reviewed text
    assert release_licence([path], [listed]) == "credentialed"
    assert release_licence([], [listed]) == "credentialed"


def test_every_family_lists_its_reviewed_releases_with_a_source():
    """Read from each registered family's spec (`Published.releases`), not from a list of families kept here."""
    from medtemporal.registry import entries

    releases = {e.name: e.obj.published.releases for e in entries("benchmark")}
    assert len(releases["3d-rad"]) == 41 and {r.licence for r in releases["3d-rad"]} == {"open"}
    assert [r.licence for r in releases["eltlm"]] == ["credentialed"]  # 9 questions quote MIMIC-CXR report text
    assert releases["mi-cxr"] == () and releases["temmed"] == ()
    for name, listed in releases.items():
        assert all(len(r.sha256) == 64 and r.source and r.note for r in listed), name


OFFICIAL = Path(__file__).resolve().parents[1] / ".." / "shared" / "official"


@pytest.mark.skipif(not (OFFICIAL / "3d-rad").is_dir(), reason="the released files are not in ../shared")
def test_the_release_tables_match_the_released_files():
    from medtemporal.contract import spec

    ELTLM, RAD3D = spec("eltlm").published.releases, spec("3d-rad").published.releases
    csvs = sorted((OFFICIAL / "3d-rad" / "3DRAD" / "test").rglob("*.csv"))
    assert release_licence(csvs, RAD3D) == "open"
    assert release_licence([OFFICIAL / "eltlm" / "test.json"], ELTLM) == "credentialed"
    assert {sha256_file(p) for p in csvs} == {r.sha256 for r in RAD3D}


def _manifest(licence, root):
    from medtemporal.benchmark import Manifest

    return Manifest(benchmark="tiny", version="1", licence=licence, image_root=str(root) if root else None)


def test_a_run_is_credentialed_unless_its_images_come_from_the_verified_phantom_it_was_built_from(phantom, tmp_path):
    jpg = phantom / "mimic-cxr-jpg"
    synthetic = _manifest("synthetic", jpg)
    assert run_licence(synthetic) == "synthetic"
    assert run_licence(synthetic, jpg, ["files/p10/x.jpg"]) == "synthetic"
    copy = _copy(phantom, tmp_path)
    assert licence_of(copy / "mimic-cxr-jpg") == "synthetic"  # a verified copy, but not the root it was built from
    assert run_licence(synthetic, copy / "mimic-cxr-jpg") == "credentialed"
    assert run_licence(synthetic, image_paths=["../../real/x.jpg"]) == "credentialed"
    assert run_licence(synthetic, image_paths=["/data/mimic/x.jpg"]) == "credentialed"
    assert run_licence(_manifest("credentialed", jpg), jpg) == "credentialed"
    assert run_licence(_manifest("open", None)) == "open"  # no images: the text's licence
    assert run_licence(_manifest("open", None), jpg) == "credentialed"
    edited = _manifest("synthetic", copy / "mimic-cxr-jpg")  # built from the copy, edited afterwards
    next((copy / "mimic-cxr-jpg" / "files").rglob("*.jpg")).write_bytes(b"\xff\xd8 a real patient")
    assert run_licence(edited) == "credentialed"


def test_a_relative_image_root_is_taken_from_the_benchmark_folder(phantom, tmp_path, monkeypatch):
    bench = tmp_path / "bench"
    bench.mkdir()
    manifest = _manifest("synthetic", Path(os.path.relpath(phantom / "mimic-cxr-jpg", bench)))
    monkeypatch.chdir(tmp_path)
    assert run_licence(manifest, folder=bench) == "synthetic"
    assert run_licence(manifest, phantom / "mimic-cxr-jpg", folder=bench) == "synthetic"


def test_without_an_image_root_each_image_must_resolve_into_a_verified_phantom(phantom, tmp_path):
    """Issue 32, point 1: a benchmark built without an image root reads its images from its own folder; a symlink
    there may lead anywhere, so what the images resolve to decides, whatever the manifest says."""
    paths = sorted(str(p.relative_to(phantom / "mimic-cxr-jpg")) for p in (phantom / "mimic-cxr-jpg").rglob("*.jpg"))
    copy = _copy(phantom, tmp_path)
    (copy / PHANTOM_MANIFEST).unlink()  # the same bytes, unverifiable: real images as far as anyone can tell
    for licence in ("synthetic", "open"):
        bench = tmp_path / f"bench-{licence}"
        bench.mkdir()
        (bench / "files").symlink_to(copy / "mimic-cxr-jpg" / "files", target_is_directory=True)
        assert run_licence(_manifest(licence, None), image_paths=paths, folder=bench) == "credentialed"
        (bench / "files").unlink()
        (bench / "files").symlink_to(phantom / "mimic-cxr-jpg" / "files", target_is_directory=True)
        assert run_licence(_manifest(licence, None), image_paths=paths, folder=bench) == "synthetic"
        assert run_licence(_manifest(licence, None), image_paths=[*paths, "files/missing.jpg"],
                           folder=bench) == "credentialed"  # an image that cannot be checked
