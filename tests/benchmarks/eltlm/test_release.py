"""The released test.json: counts as FACTS §3.1 gives them, time order from the metadata, unresolved images."""

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from medtemporal.benchmark import load
from medtemporal.benchmarks.eltlm.release import read_official
from medtemporal.benchmarks.eltlm.studies import read_studies
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.runner import run
from medtemporal.sources.mimic_cxr import METADATA_COLUMNS, METADATA_CSV

OFFICIAL = Path(__file__).resolve().parents[3] / ".." / "shared" / "official" / "eltlm" / "test.json"
needs_release = pytest.mark.skipif(not OFFICIAL.is_file(), reason="the released ELTLM file is not in ../shared")


def write_metadata(root: Path, studies: dict[str, tuple[str, str]], *, lateral_only: tuple[str, ...] = ()) -> Path:
    """A MIMIC-CXR-JPG root whose metadata lists ``study → (subject, YYYYMMDD)`` with one PA and one lateral image."""
    rows = []
    for k, (study, (subject, day)) in enumerate(sorted(studies.items())):
        for view in ("LATERAL",) if study in lateral_only else ("PA", "LATERAL"):
            rows.append({c: "" for c in METADATA_COLUMNS} | {
                "dicom_id": f"{k:08x}-{view}", "subject_id": subject[1:], "study_id": study[1:], "ViewPosition": view,
                "StudyDate": day, "StudyTime": "101500.000"})
    (root / "files").mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=list(METADATA_COLUMNS)).to_csv(root / METADATA_CSV, index=False)
    return root


@needs_release
def test_the_release_loads_with_the_facts_counts(tmp_path):
    out = tmp_path / "b"
    assert main(["build", "eltlm", "--official", str(OFFICIAL), "--no-verify-images", "--out", str(out)]) == 0
    bench = load(out)
    release = bench.manifest.config["release"]
    assert (release["records"], release["deduplicated"], release["malformed"]) == (913, 64, 3)
    assert release["id_order_not_ascending"] == 2 and release["reordered_by_time"] is None
    assert release["study_of_two_patients"] == 3  # s53637154, s53995593 under p10018328 and p10019568
    assert bench.manifest.exclusions == {"malformed_study_id": 3}
    assert len(bench.items) == 910 and Counter(i.task for i in bench.items) == {"perception": 691, "reasoning": 219}
    assert len({i.meta["patient_id"] for i in bench.items}) == 349
    lengths = Counter((i.meta["type"], len(i.images)) for i in bench.items)
    assert lengths == {("g", 2): 380, ("g", 3): 111, ("g", 4): 100, ("g", 5): 100,  # FACTS g {2: 383, ...} less 3
                       ("t", 2): 14, ("t", 3): 204, ("t", 4): 1}
    assert not bench.manifest.config["images_resolved"] and bench.manifest.image_root is None


@needs_release
def test_the_release_in_time_order_from_the_metadata(tmp_path):
    records = json.loads(OFFICIAL.read_text())
    rng = np.random.default_rng(0)
    studies = {}
    for r in records:
        for s in r["Picture number"].split(","):
            if len(s.strip()) == 9 and s.strip() not in studies:  # the first patient listing a study owns it
                studies[s.strip()] = (r["Source file"], f"2150{rng.integers(1, 13):02d}{rng.integers(1, 29):02d}")
    studies["s56162260"] = ("p10000935", "21400101")  # s561622600 with a digit dropped: resolvable
    root = write_metadata(tmp_path / "jpg", studies)
    items, counts = read_official(OFFICIAL, read_studies(root), verify_images=False)
    assert (counts.records, counts.deduplicated, counts.malformed, counts.malformed_resolved) == (913, 64, 3, 1)
    assert counts.excluded == {"malformed_study_id": 2, "study_of_another_patient": 1}
    days = {s: d for s, (_, d) in studies.items()}
    expected = 0
    for item in items:
        ids = item.meta["study_ids"]
        assert [days[s] for s in ids] == sorted(days[s] for s in ids)  # shown oldest first
        assert [ref.timestamp[:10].replace("-", "") for ref in item.images] == [days[s] for s in ids]
        original = [s for s in dict.fromkeys(x.strip() for x in records[item.meta["source_index"]]["Picture number"]
                                             .split(",")) if len(s) == 9]
        expected += ids != original[: len(ids)] if len(original) == len(ids) else 1
    assert counts.reordered_by_time == expected > 100  # random dates reorder many lists
    assert counts.date_order_differs == expected == sum(i.meta["date_order_differs"] for i in items)


def test_reading_rules_on_a_small_file(tmp_path):
    records = [
        {"Source file": "p10000001", "type": "g", "Picture number": "s50000001,s50000002,s50000001",
         "Question": "What changed?", "Standard Answer": "New effusion."},
        {"Source file": "p10000001", "type": "t", "Picture number": "s50000002,s50000003",
         "Question": "Why?", "Standard Answer": "Heart failure."},
        {"Source file": "p10000002", "type": "g", "Picture number": "s50000004,s500000050",
         "Question": "What changed?", "Standard Answer": "Nothing."},
        {"Source file": "p10000002", "type": "g", "Picture number": "s50000004,s50000006",
         "Question": "Lateral?", "Standard Answer": "Nothing."},
    ]
    path = tmp_path / "test.json"
    path.write_text(json.dumps(records))
    root = write_metadata(tmp_path / "jpg", {"s50000001": ("p10000001", "21500310"), "s50000002": ("p10000001",
                          "21500101"), "s50000003": ("p10000001", "21500601"), "s50000004": ("p10000002", "21500101"),
                          "s50000005": ("p10000002", "21500201"), "s50000006": ("p10000002", "21500301")},
                          lateral_only=("s50000006",))
    items, counts = read_official(path, read_studies(root), verify_images=True, image_root=root)
    assert counts.deduplicated == 1 and counts.malformed == 1 and counts.malformed_resolved == 1
    assert counts.excluded == {"study_image_missing": 4}
    items, counts = read_official(path, read_studies(root), verify_images=False)
    assert counts.excluded == {"study_lateral_only": 1}
    assert [i.meta["study_ids"] for i in items] == [["s50000002", "s50000001"], ["s50000002", "s50000003"],
                                                  ["s50000004", "s50000005"]]
    assert counts.reordered_by_time == 1 and [i.task for i in items] == ["perception", "reasoning", "perception"]
    assert items[0].images[0].path.endswith(".jpg") and items[0].images[0].view == "PA"
    assert [i.meta["date_order_differs"] for i in items] == [True, False, False] and counts.date_order_differs == 1
    # --order file: the file's lists as they are, the same items flagged
    as_listed, counts = read_official(path, read_studies(root), verify_images=False, order="file")
    assert [i.meta["study_ids"] for i in as_listed] == [["s50000001", "s50000002"], ["s50000002", "s50000003"],
                                                      ["s50000004", "s50000005"]]
    assert counts.reordered_by_time == 0 and counts.date_order_differs == 1
    assert [i.meta["date_order_differs"] for i in as_listed] == [True, False, False]
    assert {i.meta["order"] for i in as_listed} == {"file"} and {i.meta["order"] for i in items} == {"date"}
    days = [ref.timestamp[:10] for ref in as_listed[0].images]
    assert days == ["2150-03-10", "2150-01-01"]  # shown by id: the later study first


def test_the_build_records_the_order_in_the_manifest(tmp_path, capsys):
    path = tmp_path / "test.json"
    path.write_text(json.dumps([
        {"Source file": "p10000001", "type": "g", "Picture number": "s50000001,s50000002",
         "Question": "What changed between the first and the second report?", "Standard Answer": "New effusion."},
        {"Source file": "p10000001", "type": "t", "Picture number": "s50000002,s50000003",
         "Question": "Why?", "Standard Answer": "Heart failure."}]))
    root = write_metadata(tmp_path / "jpg", {"s50000001": ("p10000001", "21500310"),
                                            "s50000002": ("p10000001", "21500101"),
                                            "s50000003": ("p10000001", "21500601")})
    for order in ("date", "file"):
        out = tmp_path / order
        assert main(["build", "eltlm", "--official", str(path), "--mimic-cxr-jpg", str(root), "--no-verify-images",
                     "--order", order, "--out", str(out)]) == 0
        config = load(out).manifest.config
        assert config["order"] == order and config["date_order_differs"] == 1
        assert config["release"]["reordered_by_time"] == (1 if order == "date" else 0)
    assert main(["build", "eltlm", "--official", str(path), "--no-verify-images", "--out", str(tmp_path / "q")]) == 0
    config = load(tmp_path / "q").manifest.config
    assert config["order"] == "file" and config["date_order_differs"] is None  # no metadata: no dates to compare
    capsys.readouterr()
    assert main(["build", "eltlm", "--mimic-cxr-jpg", str(root), "--qba", str(tmp_path), "--order", "file",
                 "--out", str(tmp_path / "rule")]) == 2
    assert "--order file applies to --official imports" in capsys.readouterr().err


def test_without_a_root_the_file_is_validated_and_a_run_refuses(tmp_path, capsys):
    path = tmp_path / "test.json"
    path.write_text(json.dumps([{"Source file": "p10000001", "type": "g", "Picture number": "s50000002,s50000001",
                                 "Question": "Q?", "Standard Answer": "A."}]))
    assert main(["build", "eltlm", "--official", str(path), "--out", str(tmp_path / "x")]) == 2
    assert "--no-verify-images" in capsys.readouterr().err
    assert main(["build", "eltlm", "--official", str(path), "--no-verify-images", "--out", str(tmp_path / "b")]) == 0
    # a baseline reads no pixels, so it runs on the questions alone (a model that reads images is refused before
    # anything runs: tests/runner/test_run.py::test_missing_images_are_named_before_anything_runs)
    assert run(tmp_path / "b", "baseline:constant-A", tmp_path / "r", progress=False).done == 1
    path.write_text(json.dumps([{"Source file": "p10000001", "type": "x", "Picture number": "s50000002",
                                 "Question": "Q?", "Standard Answer": "A."}]))
    with pytest.raises(InvalidInputError, match=r"record 0 is not an ELTLM question \(key `type` must be one of g, t, "
                                                r"not 'x'\); fix or remove it"):
        read_official(path, None)
