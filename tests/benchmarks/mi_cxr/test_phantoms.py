"""`medtemporal build mi-cxr` end to end on phantom folders, labels checked against phantom_truth.jsonl."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from helpers.micxr import CHANGE_TYPE, check_labels

from medtemporal.benchmark import ITEMS, load
from medtemporal.benchmarks.mi_cxr.pipeline import PAPER_QUOTAS
from medtemporal.cli import main
from medtemporal.phantoms.cxr import write_cxr_phantoms


def build(phantom, out: Path, *extra: str) -> int:
    return main(["build", "mi-cxr", "--mimic-cxr-jpg", str(phantom.mimic_cxr_jpg), "--qba", str(phantom.qba),
                 "--out", str(out), *extra])


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    """300 phantom patients without images, built into a 2,000-item benchmark."""
    root = tmp_path_factory.mktemp("phantoms")
    phantom = write_cxr_phantoms(root / "data", patients=300, seed=3, images=False)
    assert build(phantom, root / "bench", "--max-items", "2000", "--no-verify-images", "--icr-variant") == 0
    return phantom, root / "bench"


def truth_by_study(path: Path) -> dict[str, dict]:
    return {rec["study_id"]: rec for rec in map(json.loads, path.read_text().splitlines())}


def test_phantom_build_is_balanced_complete_and_synthetic(cohort):
    phantom, bench_dir = cohort
    bench = load(bench_dir)
    main_items = [i for i in bench.items if i.task != "ICR-V"]
    # on this cohort GTS multi falls short (its four abnormalities must be alike and changing), and so does
    # `multiple_*_2` (a second event at C is rare, and C, D and E are kept level: 23/24/23 items each; with the
    # uniform cap held on the items built, mixed nulls replace uniform ones: `multiple_resolution_2` kept 64
    # before, 70 now); a null beyond its abnormality's share costs single items elsewhere. Each shortfall is counted.
    shortfall = {k.split(":")[1]: v for k, v in bench.manifest.exclusions.items() if k.startswith("quota_shortfall:")}
    assert shortfall == {"multi_entity_interval_summary": 125, "multiple_emergence_2": 24, "multiple_resolution_2": 22,
                         "emergence_to_resolution": 1, "resolution_to_emergence": 1, "multiple_emergence_1": 1,
                         "multiple_resolution_1": 1, "single_emergence": 1, "single_resolution": 1}
    assert len(main_items) == 2000 - sum(shortfall.values())
    # and blind, no subtype beats chance by more than 5 points, save the floor of the second-event qtypes
    assert set(bench.manifest.audit["flagged"]) <= {"TEL/multiple_emergence_2", "TEL/multiple_resolution_2"}
    letters = Counter(i.answer for i in main_items)
    assert all(abs(letters[x] / len(main_items) - 0.2) <= 0.03 for x in "ABCDE"), letters
    assert {i.subtype for i in bench.items} == set(PAPER_QUOTAS) | {"icr_variant"}
    m = bench.manifest
    assert m.licence == "synthetic" and m.seed == 0 and m.version
    assert Path(m.image_root) == phantom.mimic_cxr_jpg.resolve()
    assert set(m.sources) == {"mimic-cxr-jpg/mimic-cxr-2.0.0-metadata.csv.gz", "qba/metadata/study_metadata.parquet"}
    parquet = (phantom.qba / "metadata/study_metadata.parquet").read_bytes()
    assert m.sources["qba/metadata/study_metadata.parquet"] == hashlib.sha256(parquet).hexdigest()
    assert m.config["quotas"]["single_entity_interval_summary"] == 377 and m.config["null_cap"] == 0.2
    assert m.exclusions["obs_uncertain"] > 0 and m.exclusions["pair_missing_state"] > 0
    assert m.counts["answer"] == dict(sorted(Counter(i.answer for i in bench.items).items()))


def test_answer_letters_carry_no_prior_beyond_what_logic_fixes(cohort):
    """Per qtype, the correct letters are uniform over those the data can give (issue #9: ``multiple_*_2``
    answered D half the time because second events at C are rare; "always D" scored 52-63% blind), E taking
    one letter's share where the data can give only some letters."""
    _, bench_dir = cohort
    by_qtype: dict[str, Counter] = {}
    for item in load(bench_dir).items:
        by_qtype.setdefault(item.subtype, Counter())[item.answer] += 1
    for qtype, letters in by_qtype.items():
        non_null = [n for x, n in letters.items() if x != "E"]
        assert max(non_null) - min(non_null) <= 1, (qtype, letters)
        if qtype.startswith("multiple_") and qtype.endswith("_2"):  # two events are two intervals apart
            # C, D and E a third each: "always C" scores 1/3, the floor the question allows (40% before 1.2.1)
            assert set(letters) == set("CDE"), (qtype, letters)
            assert max(letters.values()) - min(letters.values()) <= 1, (qtype, letters)
        else:
            assert letters["E"] <= 0.2 * sum(letters.values()) + 1, (qtype, letters)
            assert set(letters) == set("ABCDE"), (qtype, letters)


def test_phantom_labels_agree_with_the_ground_truth(cohort):
    phantom, bench_dir = cohort
    truth = truth_by_study(phantom.truth)
    for item in load(bench_dir).items:
        visits = [truth[s] for s in item.meta["study_ids"]]
        assert [v["visit"] for v in visits] == list(range(visits[0]["visit"], visits[0]["visit"] + 5))
        assert [r.path for r in item.images] == [v["frontal"] for v in visits]

        def of(entity: str, visits=visits) -> tuple[str, list[str]]:
            states = [v["findings"][entity] for v in visits]
            presence = "".join("1" if s["present"] else "0" for s in states)
            return presence, [CHANGE_TYPE[s["change"]] for s in states[1:]]

        check_labels(item, of)


@pytest.mark.slow  # two phantom cohorts and builds: about 12 s
def test_same_phantoms_and_seed_give_byte_identical_items(cohort, tmp_path):
    """A second build in a fresh interpreter with another hash seed writes the same bytes."""
    phantom, bench_dir = cohort
    cmd = [sys.executable, "-m", "medtemporal", "build", "mi-cxr", "--mimic-cxr-jpg", str(phantom.mimic_cxr_jpg),
           "--qba", str(phantom.qba), "--out", str(tmp_path / "again"), "--max-items", "2000",
           "--no-verify-images", "--icr-variant"]
    subprocess.run(cmd, check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": "12345"})
    assert (tmp_path / "again" / ITEMS).read_bytes() == (bench_dir / ITEMS).read_bytes()


def test_images_are_verified_and_the_corrupt_jpeg_is_left_out(tmp_path):
    phantom = write_cxr_phantoms(tmp_path / "data", patients=24, seed=5, images=True, image_size=64)
    assert build(phantom, tmp_path / "bench", "--max-items", "300") == 0
    bench = load(tmp_path / "bench")
    assert bench.items and bench.manifest.exclusions.get("study_image_corrupt") == 1
    used = {r.path for i in bench.items for r in i.images}
    assert phantom.corrupt_image not in used
    assert all((bench.image_root / p).is_file() for p in used)


@pytest.mark.parametrize(
    "args, words",
    [
        (["--qba", "QBA"], "--mimic-cxr-jpg is required"),
        (["--mimic-cxr-jpg", "JPG"], "--qba is required"),
        (["--mimic-cxr-jpg", "JPG", "--qba", "JPG"], "no scene_data/ folder"),
        (["--mimic-cxr-jpg", "QBA", "--qba", "QBA"], "no files/ folder"),
        (["--mimic-cxr-jpg", "JPG", "--qba", "QBA", "--null-cap", "1.5"], "--null-cap must be a fraction"),
        (["--mimic-cxr-jpg", "JPG", "--qba", "QBA", "--quota", "single_emergnce=3"], "Unknown MI-CXR qtype"),
        (["--mimic-cxr-jpg", "JPG", "--qba", "QBA", "--quota", "single_emergence"], "is not QTYPE=N"),
    ],
)
def test_bad_input_gives_one_sentence_and_writes_nothing(cohort, tmp_path, capsys, args, words):
    phantom, _ = cohort
    paths = {"JPG": str(phantom.mimic_cxr_jpg), "QBA": str(phantom.qba)}
    args = [paths.get(a, a) for a in args]
    assert main(["build", "mi-cxr", "--out", str(tmp_path / "out"), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and err.count("\n") == 0 and err.startswith("medtemporal: error: ")
    assert not (tmp_path / "out").exists()


def test_an_existing_benchmark_is_not_replaced_without_overwrite(cohort, capsys):
    phantom, bench_dir = cohort
    before = (bench_dir / ITEMS).read_bytes()
    assert build(phantom, bench_dir, "--max-items", "50", "--no-verify-images") == 2
    assert "pass --overwrite" in capsys.readouterr().err
    assert (bench_dir / ITEMS).read_bytes() == before
