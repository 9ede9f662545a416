"""Reading MIMIC-CXR-JPG + reports + MIMIC-Ext-CXR-QBA: round trip of the phantom truth, exclusions, errors."""

from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter

import pandas as pd
import pytest
from helpers.phantoms import cxr_phantoms, make_cxr_phantoms  # noqa: F401 (fixture)

from medtemporal.phantoms.cxr_text import NO_FINDINGS_LAYOUTS
from medtemporal.errors import InvalidInputError
from medtemporal.sources.mimic_cxr import parse_study_datetime, read_timelines


@pytest.fixture(scope="module")
def read(cxr_phantoms):
    timelines, excluded = read_timelines(cxr_phantoms.mimic_cxr_jpg, cxr_phantoms.qba)
    return timelines, excluded


def truth_of(phantom) -> dict[str, dict]:
    return {r["study_id"]: r for r in map(json.loads, phantom.truth.read_text().splitlines())}


def copy(phantom, tmp_path):
    shutil.copytree(phantom.root, tmp_path / "c")
    return tmp_path / "c" / phantom.mimic_cxr_jpg.name, tmp_path / "c" / phantom.qba.name


def test_findings_round_trip_the_phantom_truth(cxr_phantoms, read):
    timelines, _ = read
    truth = truth_of(cxr_phantoms)
    compared = Counter()
    for timeline in timelines:
        assert timeline.source == "mimic-cxr" and timeline.licence == "credentialed"
        for study in timeline.studies:
            rec = truth[study.study_id]
            assert study.patient_id == rec["patient_id"] == timeline.patient_id
            assert study.frontal == rec["frontal"] and study.order == rec["visit"]
            assert study.timestamp == rec["timestamp"]
            kept = {e for e, f in rec["findings"].items() if f["annotated"] and f["certain"] and f["quality_ok"]}
            assert {f.entity for f in study.findings} == kept
            for finding in study.findings:
                want = rec["findings"][finding.entity]
                assert finding.present == want["present"] and finding.certain
                assert finding.laterality == want["laterality"] and finding.severity == want["severity"]
                assert finding.changes == ((want["change"],) if want["change"] else ())
                compared[finding.present] += 1
    assert compared[True] > 50 and compared[False] > 200


def test_timelines_are_in_time_order_with_gaps_where_studies_were_left_out(cxr_phantoms, read):
    timelines, _ = read
    truth = truth_of(cxr_phantoms)
    assert [t.patient_id for t in timelines] == sorted(t.patient_id for t in timelines)
    for timeline in timelines:
        times = [s.timestamp for s in timeline.studies]
        assert times == sorted(times) and len(set(times)) == len(times)
        for study in timeline.studies:
            assert study.images[0].path == study.frontal and study.images[0].view in ("PA", "AP")
            assert all(r.visit == study.order and (cxr_phantoms.mimic_cxr_jpg / r.path).is_file() for r in study.images)
            no_findings = truth[study.study_id]["report_layout"] in NO_FINDINGS_LAYOUTS
            assert {"impression", "comparison"} <= set(study.report) and ("findings" in study.report) != no_findings
    left_out = {r["study_id"] for r in truth.values() if {"equal_timestamp", "lateral_only", "corrupt_image"} & set(r["messy"])}
    equal = [(r["patient_id"], r["visit"] - 1) for r in truth.values() if "equal_timestamp" in r["messy"]]
    left_out |= {r["study_id"] for r in truth.values() if (r["patient_id"], r["visit"]) in equal}  # the partner
    assert {s.study_id for t in timelines for s in t.studies} == set(truth) - left_out
    orders = {t.patient_id: [s.order for s in t.studies] for t in timelines}
    assert any(o != list(range(1, len(o) + 1)) for o in orders.values())  # a left-out study leaves a gap


def test_every_messy_case_is_counted(cxr_phantoms, read):
    _, excluded = read
    truth = list(truth_of(cxr_phantoms).values())
    messy = Counter(tag for r in truth for tag in r["messy"])
    assert excluded["study_equal_timestamp"] == 2 * messy["equal_timestamp"]
    assert excluded["study_lateral_only"] == messy["lateral_only"]
    assert excluded["study_image_corrupt"] == 1
    assert set(excluded) >= {"obs_uncertain", "obs_low_quality", "obs_not_disease_category"}
    assert all(v > 0 for v in excluded.values())
    assert "study_order_mismatch" not in excluded and "study_no_scene_graph" not in excluded


def test_min_visits_and_categories_are_applied(cxr_phantoms, read):
    timelines, _ = read
    five, excluded = read_timelines(cxr_phantoms.mimic_cxr_jpg, cxr_phantoms.qba, min_visits=5)
    assert all(len(t.studies) >= 5 for t in five)
    assert five == [t for t in timelines if len(t.studies) >= 5]  # short patients dropped before reading: same result
    assert excluded["patient_too_few_visits"] == sum(len(t.studies) < 5 for t in timelines) > 0
    _, with_devices = read_timelines(cxr_phantoms.mimic_cxr_jpg, cxr_phantoms.qba, categories=("ANATOMICAL_FINDING", "DEVICE"))
    assert "obs_not_disease_category" not in with_devices and with_devices["obs_other_entity"] > 0
    _, strict = read_timelines(cxr_phantoms.mimic_cxr_jpg, cxr_phantoms.qba, min_quality="A++")
    assert strict["obs_low_quality"] > 5 * read[1]["obs_low_quality"]


def test_a_disagreeing_qba_order_and_a_missing_image_are_left_out(cxr_phantoms, read, tmp_path):
    jpg, qba = copy(cxr_phantoms, tmp_path)
    timelines, _ = read
    long = next(t for t in timelines if len(t.studies) >= 5)
    a, b = long.studies[1].study_id, long.studies[3].study_id
    meta = pd.read_parquet(qba / "metadata/study_metadata.parquet")
    ia, ib = meta.index[meta["study_id"] == a][0], meta.index[meta["study_id"] == b][0]
    meta.loc[[ia, ib], "timestamp_since_first"] = meta.loc[[ib, ia], "timestamp_since_first"].to_numpy()
    meta.to_parquet(qba / "metadata/study_metadata.parquet", index=False)
    (jpg / long.studies[0].frontal).unlink()
    again, excluded = read_timelines(jpg, qba)
    ids = {s.study_id for t in again for s in t.studies}
    assert a not in ids and b not in ids and long.studies[0].study_id not in ids
    assert excluded["study_order_mismatch"] >= 2 and excluded["study_image_missing"] == 1
    (qba / "metadata/study_metadata.parquet").unlink()  # the csv.gz copy is read instead
    _, from_csv = read_timelines(jpg, qba)
    assert from_csv["study_image_missing"] == 1 and from_csv["study_order_mismatch"] == 0


def test_a_cohort_without_images_reads_with_verify_images_off(tmp_path):
    phantom = make_cxr_phantoms(tmp_path, patients=5, seed=3, images=False)
    timelines, excluded = read_timelines(phantom.mimic_cxr_jpg, phantom.qba, verify_images=False)
    assert sum(len(t.studies) for t in timelines) > 20 and "study_image_missing" not in excluded
    _, verified = read_timelines(phantom.mimic_cxr_jpg, phantom.qba)
    assert verified["study_image_missing"] > 20


def test_bad_roots_and_files_give_one_sentence_naming_the_thing(cxr_phantoms, tmp_path):
    jpg, qba = copy(cxr_phantoms, tmp_path)
    cases = [
        (lambda: read_timelines(qba, qba), "has no files/ folder"),
        (lambda: read_timelines(jpg, jpg), "has no scene_data/ folder"),
        (lambda: read_timelines(tmp_path / "nope", qba), "does not exist"),
        (lambda: read_timelines(jpg, qba, min_quality="Z"), "min_quality must be one of"),
    ]
    for call, words in cases:
        with pytest.raises(InvalidInputError, match=words) as err:
            call()
        assert "\n" not in str(err.value)
    csv = jpg / "mimic-cxr-2.0.0-metadata.csv.gz"
    df = pd.read_csv(csv, dtype=str)
    with gzip.open(csv, "wt") as fh:
        df.drop(columns=["ViewPosition"]).to_csv(fh, index=False)
    with pytest.raises(InvalidInputError, match=r"lacks the column\(s\) ViewPosition"):
        read_timelines(jpg, qba)
    csv.unlink()
    with pytest.raises(InvalidInputError, match="has no mimic-cxr-2.0.0-metadata.csv.gz"):
        read_timelines(jpg, qba)
    with gzip.open(csv, "wt") as fh:
        df.to_csv(fh, index=False)
    (qba / "metadata/study_metadata.parquet").write_bytes(b"not a parquet file")
    with pytest.raises(InvalidInputError, match="study_metadata.parquet cannot be read as Parquet"):
        read_timelines(jpg, qba)
    shutil.move(qba / "scene_data", tmp_path / "sd")
    (qba / "scene_data.zip").write_bytes(b"PK")
    with pytest.raises(InvalidInputError, match="unzip it there"):
        read_timelines(jpg, qba)


def test_study_time_parses_the_released_format():
    got = parse_study_datetime(pd.Series(["21800506", "21800506", "2180x506"]), pd.Series(["84530.031", "213014.5", "1"]))
    assert str(got[0]) == "2180-05-06 08:45:30.031000" and str(got[1]) == "2180-05-06 21:30:14.500000"
    assert pd.isna(got[2])


def test_worker_processes_and_skipped_reports_change_nothing_but_the_report_text(cxr_phantoms, read, monkeypatch):
    import medtemporal.sources.mimic_cxr as source

    monkeypatch.setattr(source, "_CHUNK", 7)  # several chunks from a tiny cohort
    timelines, excluded = read
    parallel, parallel_excluded = read_timelines(cxr_phantoms.mimic_cxr_jpg, cxr_phantoms.qba, workers=2)
    assert parallel == timelines and list(parallel_excluded.items()) == list(excluded.items())
    bare, _ = read_timelines(cxr_phantoms.mimic_cxr_jpg, cxr_phantoms.qba, with_reports=False)
    assert any(s.report for t in timelines for s in t.studies) and not any(s.report for t in bare for s in t.studies)
    assert [[s.model_copy(update={"report": {}}) for s in t.studies] for t in timelines] == [list(t.studies) for t in bare]
