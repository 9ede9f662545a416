"""Phantom MIMIC-CXR-JPG / reports / MIMIC-Ext-CXR-QBA cohorts: real layouts, determinism, messy cases."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from helpers.phantoms import cxr_phantoms, make_cxr_phantoms  # noqa: F401 (fixture)
from PIL import Image

from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.phantoms import cxr_text
from medtemporal.phantoms.cxr import SPLIT_SHARES, write_cxr_phantoms
from medtemporal.phantoms.cxr_text import LAYOUTS, NO_FINDINGS_LAYOUTS
from medtemporal.sources.mimic_cxr import read_report
from medtemporal.sources.mimic_cxr_reports import parse_sections
from medtemporal.sources.mimic_cxr_studies import SPLIT_COLUMNS, SPLIT_CSV

REAL_COLUMNS = [
    "dicom_id", "subject_id", "study_id", "PerformedProcedureStepDescription", "ViewPosition", "Rows", "Columns",
    "StudyDate", "StudyTime", "ProcedureCodeSequence_CodeMeaning", "ViewCodeSequence_CodeMeaning",
    "PatientOrientationCodeSequence_CodeMeaning",
]
DICOM = re.compile(r"^[0-9a-f]{8}(-[0-9a-f]{8}){4}$")


def truth(phantom) -> list[dict]:
    return [json.loads(line) for line in phantom.truth.read_text().splitlines()]


def digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_writes_byte_identical_files_and_another_seed_does_not(tmp_path):
    a = write_cxr_phantoms(tmp_path / "a", patients=4, seed=1, image_size=96)
    b = write_cxr_phantoms(tmp_path / "b", patients=4, seed=1, image_size=96)
    c = write_cxr_phantoms(tmp_path / "c", patients=4, seed=2, image_size=96)
    assert digest(a.root) == digest(b.root)
    assert digest(a.root) != digest(c.root)
    assert len(digest(a.root)) > 40


def test_metadata_csv_has_the_real_columns_ids_and_times(cxr_phantoms):
    path = cxr_phantoms.mimic_cxr_jpg / "mimic-cxr-2.0.0-metadata.csv.gz"
    header = pd.read_csv(path, nrows=0).columns.tolist()
    assert header == REAL_COLUMNS
    df = pd.read_csv(path, dtype=str)
    assert len(df) == cxr_phantoms.images
    assert df["dicom_id"].str.match(DICOM).all()
    assert df["subject_id"].str.match(r"^1\d{7}$").all() and df["study_id"].str.match(r"^5\d{7}$").all()
    assert df["StudyDate"].str.match(r"^21\d{6}$").all()
    assert df["StudyTime"].str.match(r"^\d{1,6}\.\d{3}$").all()
    assert set(df["ViewPosition"]) == {"PA", "AP", "LATERAL", "LL"}
    assert set(df["ViewCodeSequence_CodeMeaning"]) == {"postero-anterior", "antero-posterior", "lateral", "left lateral"}
    assert set(df["PerformedProcedureStepDescription"]) == {"CHEST (PA AND LAT)", "CHEST (PORTABLE AP)"}
    # study ids are random, not in time order, for at least one patient
    when = df.assign(t=df["StudyDate"] + df["StudyTime"].str.zfill(10)).drop_duplicates("study_id")
    by_time = when.sort_values(["subject_id", "t"]).groupby("subject_id")["study_id"].apply(list)
    assert any(ids != sorted(ids) for ids in by_time)
    for row in df.itertuples():
        jpg = cxr_phantoms.mimic_cxr_jpg / f"files/p{row.subject_id[:2]}/p{row.subject_id}/s{row.study_id}/{row.dicom_id}.jpg"
        assert jpg.is_file()


def test_qba_scene_graphs_and_study_metadata_follow_the_release_layout(cxr_phantoms):
    meta = pd.read_parquet(cxr_phantoms.qba / "metadata/study_metadata.parquet")
    assert {"patient_id", "study_id", "timestamp_since_first", "timespan_since_prev", "quality"} <= set(meta.columns)
    assert meta["patient_id"].str.match(r"^p1\d{7}$").all() and meta["study_id"].str.match(r"^s5\d{7}$").all()
    assert len(meta) == cxr_phantoms.studies
    assert (cxr_phantoms.qba / "metadata/study_metadata.csv.gz").is_file()
    row = meta.iloc[0]
    graph = json.loads((cxr_phantoms.qba / f"scene_data/{row.patient_id[:3]}/{row.patient_id}/{row.study_id}.scene_graph.json").read_text())
    assert graph["patient_id"] == row.patient_id and graph["study_id"] == row.study_id
    assert {"sentences", "observations", "regions", "obs_sent_relations", "study_quality"} <= set(graph)
    obs = next(iter(graph["observations"].values()))
    for key in ("obs_entities", "obs_categories", "regions", "laterality", "positiveness", "certainty", "changes",
                "change_sentence", "obs_quality", "modifiers", "localization"):
        assert key in obs
    assert obs["positiveness"] in ("pos", "neg")


def test_reports_use_comparative_language_consistent_with_the_truth(cxr_phantoms):
    words = {"new": "New ", "resolved": "Interval resolution", "worsened": "Interval worsening",
             "improved": "Interval improvement", "unchanged": "Unchanged "}
    checked = Counter()
    for rec in truth(cxr_phantoms):
        subject = rec["patient_id"][1:]
        sections = read_report(cxr_phantoms.mimic_cxr_jpg / f"files/p{subject[:2]}/p{subject}/{rec['study_id']}.txt")
        assert (sections["comparison"] == "None.") == (rec["visit"] == 1)
        assert ("findings" in sections) == (rec["report_layout"] not in NO_FINDINGS_LAYOUTS)
        findings = sections.get("findings") or sections["impression"]
        for entity, f in rec["findings"].items():
            if f["annotated"] and f["certain"] and f["change"] in words and entity not in ("bony structures intact", "normal cardiac silhouette"):
                assert words[f["change"]] in findings, (entity, f, findings)
                checked[f["change"]] += 1
    assert set(checked) == set(words)


def test_every_messy_case_is_present_and_flagged(cxr_phantoms):
    records = truth(cxr_phantoms)
    messy = Counter(tag for r in records for tag in r["messy"])
    assert {"short_timeline", "equal_timestamp", "lateral_only", "corrupt_image", "two_frontal"} <= set(messy)
    flags = Counter(k for r in records for f in r["findings"].values() for k in ("annotated", "certain", "quality_ok") if not f[k])
    assert flags["annotated"] and flags["certain"] and flags["quality_ok"]
    equal = next(r for r in records if "equal_timestamp" in r["messy"])
    before = next(r for r in records if r["patient_id"] == equal["patient_id"] and r["visit"] == equal["visit"] - 1)
    assert before["timestamp"] == equal["timestamp"]
    lateral = next(r for r in records if "lateral_only" in r["messy"])
    assert lateral["views"] == ["LATERAL"] and lateral["frontal"] is None
    corrupt = next(r for r in records if "corrupt_image" in r["messy"])
    assert corrupt["frontal"] == cxr_phantoms.corrupt_image
    data = (cxr_phantoms.mimic_cxr_jpg / cxr_phantoms.corrupt_image).read_bytes()
    assert data[:2] == b"\xff\xd8" and b"\xff\xd9" not in data[-32:]
    with pytest.raises(OSError), Image.open(cxr_phantoms.mimic_cxr_jpg / cxr_phantoms.corrupt_image) as im:
        im.load()
    images = pd.read_csv(cxr_phantoms.mimic_cxr_jpg / "mimic-cxr-2.0.0-metadata.csv.gz", dtype=str)
    for two in (r for r in records if "two_frontal" in r["messy"]):
        rows = images[images["study_id"] == two["study_id"][1:]]
        frontal = rows[rows["ViewPosition"].isin(["PA", "AP"])].sort_values("dicom_id")
        want = frontal[frontal["ViewPosition"] == "PA"] if (frontal["ViewPosition"] == "PA").any() else frontal
        assert two["frontal"].endswith(f"/{want['dicom_id'].iloc[0]}.jpg")


def test_no_images_writes_text_only_and_the_cli_reports_it(tmp_path, capsys):
    assert main(["phantoms", "cxr", "--patients", "3", "--out", str(tmp_path / "x"), "--no-images", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert "3 patients" in out and "no JPEGs written" in out
    assert not list((tmp_path / "x").rglob("*.jpg"))
    assert list((tmp_path / "x").rglob("*.scene_graph.json")) and list((tmp_path / "x").rglob("s*.txt"))
    assert main(["phantoms", "cxr", "--patients", "3", "--out", str(tmp_path / "x")]) == 2
    assert "not an empty folder" in capsys.readouterr().err


@pytest.mark.parametrize(
    "kwargs, words",
    [({"patients": 0}, "--patients must be a whole number from 1 to"), ({"patients": 2, "image_size": 10}, "--image-size"),
     ({"patients": 2, "profile": "huge"}, "profile must be one of")],
)
def test_bad_arguments_give_one_clear_sentence(tmp_path, kwargs, words):
    with pytest.raises(InvalidInputError, match=words):
        write_cxr_phantoms(tmp_path / "y", **kwargs)
    assert not (tmp_path / "y").exists()


def test_mimic_profile_is_skewed_like_mimic_and_gaps_are_heavy_tailed(tmp_path):
    made = make_cxr_phantoms(tmp_path, patients=60, seed=2, images=False)
    assert 5 < made.studies / made.patients < 9  # longitudinal default: most patients 5-15 visits
    mimic = write_cxr_phantoms(tmp_path / "m", patients=250, seed=2, images=False, profile="mimic")
    assert 2.9 < mimic.studies / mimic.patients < 4.1  # MIMIC: 228k studies / 65k patients = 3.5
    meta = pd.read_parquet(mimic.qba / "metadata/study_metadata.parquet")
    gaps = meta["timespan_since_prev"].dropna().dt.total_seconds() / 86400
    assert 0.8 < gaps.median() < 3 and (gaps > 180).mean() > 0.03


def test_the_split_file_lists_every_image_with_its_patients_split(cxr_phantoms):
    split = pd.read_csv(cxr_phantoms.mimic_cxr_jpg / SPLIT_CSV, dtype={"dicom_id": str})
    meta = pd.read_csv(cxr_phantoms.mimic_cxr_jpg / "mimic-cxr-2.0.0-metadata.csv.gz", dtype={"dicom_id": str})
    assert tuple(split.columns) == SPLIT_COLUMNS
    assert sorted(zip(split.dicom_id, split.study_id, split.subject_id)) == sorted(
        zip(meta.dicom_id, meta.study_id, meta.subject_id))
    per_patient = split.groupby("subject_id")["split"].agg(set)
    assert all(len(s) == 1 for s in per_patient)  # whole patients, as the official split
    shares = Counter(next(iter(s)) for s in per_patient)
    assert shares["test"] == round(SPLIT_SHARES["test"] * cxr_phantoms.patients) and shares["train"] >= 1
    by_study = dict(zip(split.study_id.map(lambda s: f"s{s}"), split.split))
    assert all(by_study[r["study_id"]] == r["split"] for r in truth(cxr_phantoms))


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_report_layout_holds_the_same_words_and_a_findings_section_unless_it_should_not(layout):
    findings, impression = ["New small right pleural effusion.", "No pneumothorax."], ["New effusion."]
    standard = cxr_text.report(examination="CHEST (PA AND LAT)", indication="___ with cough.", technique="PA",
                               comparison="___.", findings=findings, impression=impression)
    text = cxr_text.report(examination="CHEST (PA AND LAT)", indication="___ with cough.", technique="PA",
                           comparison="___.", findings=findings, impression=impression, layout=layout)
    sections, plain = parse_sections(text), parse_sections(standard)
    assert ("findings" in sections) == (layout not in NO_FINDINGS_LAYOUTS)
    joined = " ".join(sections.get(k, "") for k in ("findings", "impression")).strip()
    assert joined == f"{plain['findings']} {plain['impression']}" == " ".join(findings + impression)
    assert {k: sections[k] for k in ("indication", "comparison")} == {"indication": "___ with cough.",
                                                                     "comparison": "___."}


def test_split_and_layouts_come_from_streams_of_their_own(tmp_path, monkeypatch):
    """Every file but the reports and the truth is what it is with standard layouts only, and each report
    reads as the same findings-then-impression words (other families' builds stay byte-identical)."""
    mixed = write_cxr_phantoms(tmp_path / "mixed", patients=10, seed=4, images=False)
    monkeypatch.setattr(cxr_text, "LAYOUTS", {"standard": 1.0})
    plain = write_cxr_phantoms(tmp_path / "plain", patients=10, seed=4, images=False)
    a, b = digest(mixed.root), digest(plain.root)
    differ = {k for k in a if a[k] != b[k]}
    assert a.keys() == b.keys() and differ and all(k.endswith(".txt") or k in ("phantom_truth.jsonl",
                                                                              "phantom_manifest.json") for k in differ)
    for name in (k for k in differ if k.endswith(".txt")):
        joined = [" ".join(read_report(root / name).get(s, "") for s in ("findings", "impression")).strip()
                  for root in (mixed.root, plain.root)]
        assert joined[0] == joined[1]
