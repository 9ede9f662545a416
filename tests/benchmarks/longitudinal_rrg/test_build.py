"""The longitudinal-rrg builder against the phantom cohort's truth: items, priors, exclusions, bytes, retrieval."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from medtemporal.benchmark import load
from medtemporal.benchmarks.longitudinal_rrg.items import caption, interval_words
from medtemporal.cli import main
from medtemporal.phantoms.cxr_text import NO_FINDINGS_LAYOUTS
from medtemporal.retrieval import load_embedder
from medtemporal.sources.mimic_cxr import read_report, report_path

SPLITS = ("test", "train", "validate")


def expected(truth: dict[str, dict], split: str, corrupt: str | None) -> dict[str, str | None]:
    """Study id → the id of its prior, for every study of ``split`` that should be an item, from the truth alone:
    a findings section; the prior the latest strictly earlier study of the patient, ties to the larger id; not the
    study whose only image is the corrupt one (its prior's images are left out, the case kept)."""
    out = {}
    for sid, rec in truth.items():
        if rec["split"] != split or rec["report_layout"] in NO_FINDINGS_LAYOUTS:
            continue
        earlier = [r for r in truth.values()
                   if r["patient_id"] == rec["patient_id"] and r["timestamp"] < rec["timestamp"]]
        latest = max((r["timestamp"] for r in earlier), default=None)
        prior = max((r["study_id"] for r in earlier if r["timestamp"] == latest), default=None)
        if corrupt != rec["frontal"] or len(rec["views"]) > 1:
            out[sid] = prior
    return out


@pytest.mark.parametrize("split", SPLITS)
def test_items_are_the_studies_with_findings_and_their_priors_are_the_latest_earlier_study(build_split, truth,
                                                                                          cxr_phantoms, split):
    bench = load(build_split(split))
    want = expected(truth, split, cxr_phantoms.corrupt_image)
    findings = [i for i in bench.items if i.task == "findings"]
    assert {i.meta["study_id"]: (i.meta["prior"] or {}).get("study_id") for i in findings} == want
    for item in findings:
        rec = truth[item.meta["study_id"]]
        sections = read_report(cxr_phantoms.mimic_cxr_jpg / report_path(rec["patient_id"], rec["study_id"]))
        assert item.answer == item.reference == sections["findings"]
        assert item.subtype == ("with_prior" if item.meta["prior"] else "no_prior")
        current = [r for r in item.images if r.role == "current"]
        assert [r.view for r in current][0] in ("PA", "AP") or rec["views"] == ["LATERAL"]
        folder = report_path(rec["patient_id"], rec["study_id"]).removesuffix(".txt")
        assert {r.path.rsplit("/", 1)[0] for r in current} == {folder}
        if item.meta["prior"]:
            prior = truth[item.meta["prior"]["study_id"]]
            days = (np.datetime64(rec["timestamp"]) - np.datetime64(prior["timestamp"])) / np.timedelta64(1, "D")
            assert item.meta["prior"]["days_before"] == pytest.approx(days, abs=1e-3)
            assert [r.visit for r in item.images] == [2] * len(current) + [1] * (len(item.images) - len(current))
    impression = {i.meta["study_id"] for i in bench.items if i.task == "impression"}
    assert impression == {i.meta["study_id"] for i in findings if read_report(
        cxr_phantoms.mimic_cxr_jpg / report_path(truth[i.meta["study_id"]]["patient_id"], i.meta["study_id"])).get(
        "impression")}


def test_every_left_out_study_and_every_messy_prior_is_counted(build_split, truth, cxr_phantoms):
    counted: Counter[str] = Counter()
    notes: Counter[str] = Counter()
    for split in SPLITS:
        manifest = load(build_split(split)).manifest
        counted.update(manifest.exclusions)
        notes.update(manifest.config["notes"])
    layouts = Counter(r["report_layout"] in NO_FINDINGS_LAYOUTS for r in truth.values())
    assert counted["study_no_findings"] == layouts[True]
    assert counted["image_corrupt"] >= 1  # the cohort's truncated JPEG, left out once
    assert counted["study_no_usable_image"] >= 1  # its study has no other image
    assert notes["prior_time_tied"] >= 1  # the study after the pair that shares a time
    messy = {tag for r in truth.values() for tag in r["messy"]}
    assert {"equal_timestamp", "lateral_only", "corrupt_image"} <= messy


def test_the_manifest_states_the_set_its_size_and_the_prior_rule(rrg_bench, truth):
    bench = load(rrg_bench)
    config = bench.manifest.config
    findings = [i for i in bench.items if i.task == "findings"]
    assert config["studies"] == len(findings) and config["patients"] == len({i.meta["patient_id"] for i in findings})
    assert config["with_prior"] == sum(i.subtype == "with_prior" for i in findings) > 0
    assert config["no_prior"] == config["patients"]  # each patient's first test study has none
    assert config["prior_rule"] == "ours" and "StudyDate then StudyTime" in config["prior_rule_text"]
    assert bench.manifest.licence == "synthetic"
    assert set(bench.manifest.sources) == {"mimic-cxr-jpg/mimic-cxr-2.0.0-metadata.csv.gz",
                                           "mimic-cxr-2.0.0-split.csv.gz"}
    assert bench.manifest.counts["answer"] == {}  # reference reports are not categories to count


def test_captions_name_the_visit_the_interval_and_the_view(rrg_bench):
    item = next(i for i in load(rrg_bench).items if i.subtype == "with_prior")
    interval = item.meta["prior"]["interval"]
    assert interval == interval_words(pd.Timedelta(days=item.meta["prior"]["days_before"]))
    for ref in item.images:
        assert ref.label == caption(ref, interval, True)
        assert ref.label.startswith("Current study (visit 2)" if ref.role == "current" else
                                    f"Prior study (visit 1, {interval} before the current study)")


def test_the_same_data_and_seed_give_the_same_bytes(rrg_bench, cxr_phantoms, tmp_path):
    again = tmp_path / "again"
    assert main(["build", "longitudinal-rrg", "--mimic-cxr-jpg", str(cxr_phantoms.mimic_cxr_jpg), "--out",
                 str(again)]) == 0
    digest = [hashlib.sha256((p / "items.jsonl").read_bytes()).hexdigest() for p in (rrg_bench, again)]
    assert digest[0] == digest[1]


def test_the_nearest_report_is_the_most_similar_training_image_s(rrg_bench, truth, cxr_phantoms):
    bench = load(rrg_bench)
    train = sorted((sid for sid, r in truth.items() if r["split"] == "train" and r["frontal"]
                    and r["frontal"] != cxr_phantoms.corrupt_image
                    and read_report(cxr_phantoms.mimic_cxr_jpg / report_path(r["patient_id"], sid)).get("findings")),
                   key=lambda s: (truth[s]["patient_id"], truth[s]["timestamp"], s))
    embedder = load_embedder("pixel")
    keys = embedder.embed_images([cxr_phantoms.mimic_cxr_jpg / truth[s]["frontal"] for s in train])
    for item in (i for i in bench.items if i.task == "findings"):
        query = embedder.embed_images([cxr_phantoms.mimic_cxr_jpg / item.images[0].path])[0]
        best = int(np.argmax(keys @ query))
        near = item.meta["nearest"]
        assert near["study_id"] == train[best] and near["score"] == pytest.approx(float(keys[best] @ query), abs=1e-5)
        assert near["text"] == read_report(cxr_phantoms.mimic_cxr_jpg / report_path(
            truth[near["study_id"]]["patient_id"], near["study_id"]))["findings"]
    assert bench.manifest.config["retrieval"]["corpus_studies"] >= len(train)


@pytest.mark.parametrize(("args", "message"), [
    (["--sections", "findings,conclusion"], "names unknown sections"),
    (["--retrieval-corpus", "-1"], "must be 0"),
    (["--split-file", "nowhere.csv.gz"], "does not exist"),
    (["--retrieval-embedder", "clip:nobody/no-such-encoder"], "or --no-retrieval (no nearest-report baseline)"),
])
def test_bad_options_are_refused_in_one_sentence(cxr_phantoms, tmp_path, capsys, args, message):
    assert main(["build", "longitudinal-rrg", "--mimic-cxr-jpg", str(cxr_phantoms.mimic_cxr_jpg), *args,
                 "--out", str(tmp_path / "b")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and not (tmp_path / "b").exists()


def test_a_build_without_a_root_says_what_it_reads_there(tmp_path: Path, capsys):
    assert main(["build", "longitudinal-rrg", "--no-verify-images", "--out", str(tmp_path / "b")]) != 0
    assert "reads the metadata and split file of a MIMIC-CXR-JPG root" in capsys.readouterr().err


def test_a_root_without_files_is_refused(tmp_path: Path, capsys):
    assert main(["build", "longitudinal-rrg", "--mimic-cxr-jpg", str(tmp_path), "--out", str(tmp_path / "b")]) != 0
    assert "has no files/ folder" in capsys.readouterr().err


def test_retrieval_never_returns_the_query_s_patient_on_the_training_split(cxr_phantoms, truth, tmp_path):
    """Issue 42 item 19: built from the train split, each item's nearest report is another patient's (the nearest
    image is otherwise its own study's, and the baseline would copy the reference)."""
    out = tmp_path / "train"
    assert main(["build", "longitudinal-rrg", "--mimic-cxr-jpg", str(cxr_phantoms.mimic_cxr_jpg), "--split", "train",
                 "--out", str(out)]) == 0
    items = [i for i in load(out).items if i.meta["nearest"]]
    assert items
    for item in items:
        near = item.meta["nearest"]
        assert near["study_id"] != item.meta["study_id"]
        assert truth[near["study_id"]]["patient_id"] != item.meta["patient_id"]


def test_an_empty_nearest_report_corpus_is_refused_at_build_time(cxr_phantoms, truth, tmp_path, capsys):
    """Issue 42 item 20: reports of the test studies only, so no training study has one: one sentence, no folder."""
    import shutil

    reports = tmp_path / "reports"
    for sid, rec in truth.items():
        if rec["split"] == "test":
            path = report_path(rec["patient_id"], sid)
            (reports / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(cxr_phantoms.mimic_cxr_jpg / path, reports / path)
    assert main(["build", "longitudinal-rrg", "--mimic-cxr-jpg", str(cxr_phantoms.mimic_cxr_jpg), "--reports",
                 str(reports), "--retrieval-embedder", "pixel", "--out", str(tmp_path / "b")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "The nearest-report corpus is empty" in err[0] and "--no-retrieval" in err[0]
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("rule", ["libra", "longitudinal-mimic"])
def test_the_other_papers_prior_rules_choose_their_priors_and_longitudinal_mimic_its_studies(cxr_phantoms, truth,
                                                                                           tmp_path, rule):
    """Libra: the latest study of an earlier day; Longitudinal-MIMIC: only test studies with an earlier test study
    with findings, that one as the prior (the 2,058-study set on the release)."""
    out = tmp_path / rule
    assert main(["build", "longitudinal-rrg", "--mimic-cxr-jpg", str(cxr_phantoms.mimic_cxr_jpg), "--prior-rule", rule,
                 "--no-retrieval", "--out", str(out)]) == 0
    bench = load(out)
    day = lambda sid: np.datetime64(truth[sid]["timestamp"], "D")  # noqa: E731
    test = {sid: r for sid, r in truth.items() if r["split"] == "test" and r["report_layout"] not in NO_FINDINGS_LAYOUTS}
    want = {}
    for sid, rec in test.items():
        pool = test if rule == "longitudinal-mimic" else truth
        earlier = [r for r in pool.values() if r["patient_id"] == rec["patient_id"] and (
            day(r["study_id"]) < day(sid) if rule == "libra" else r["timestamp"] < rec["timestamp"])]
        latest = max((r["timestamp"] for r in earlier), default=None)
        prior = max((r["study_id"] for r in earlier if r["timestamp"] == latest), default=None)
        if prior is not None or rule == "libra":
            want[sid] = prior
    if cxr_phantoms.corrupt_image:
        want = {s: p for s, p in want.items() if cxr_phantoms.corrupt_image not in
                (truth[s]["frontal"], truth[p]["frontal"] if p else None)}
    findings = [i for i in bench.items if i.task == "findings"]
    assert {i.meta["study_id"]: (i.meta["prior"] or {}).get("study_id") for i in findings} == want
    assert bench.manifest.config["prior_rule"] == rule
    if rule == "longitudinal-mimic":
        assert bench.manifest.config["no_prior"] == 0
        assert bench.manifest.exclusions["no_earlier_study_in_split"] == len({r["patient_id"] for r in test.values()})


def test_one_missing_lateral_image_leaves_that_image_out_not_two_studies(cxr_phantoms, truth, tmp_path):
    """Issue 42 item 16: the study keeps its other images, and the study whose prior it is keeps its prior."""
    import shutil

    root = tmp_path / "root"
    shutil.copytree(cxr_phantoms.mimic_cxr_jpg, root)
    assert main(["build", "longitudinal-rrg", "--mimic-cxr-jpg", str(root), "--no-retrieval", "--out",
                 str(tmp_path / "before")]) == 0
    before = {i.meta["study_id"]: i for i in load(tmp_path / "before").items if i.task == "findings"}
    later = next(i for i in before.values() if i.meta["prior"] and i.meta["prior"]["images"] > 1
                 and i.meta["prior"]["study_id"] in before)
    prior_id = later.meta["prior"]["study_id"]
    lateral = next(r.path for r in before[prior_id].images if r.role == "current" and r.view in ("LATERAL", "LL"))
    (root / lateral).unlink()
    assert main(["build", "longitudinal-rrg", "--mimic-cxr-jpg", str(root), "--no-retrieval", "--out",
                 str(tmp_path / "after")]) == 0
    after = load(tmp_path / "after")
    items = {i.meta["study_id"]: i for i in after.items if i.task == "findings"}
    assert set(items) == set(before)  # no study is lost
    assert after.manifest.exclusions.get("image_missing") == 1
    for sid in (prior_id, later.meta["study_id"]):
        assert [r.path for r in items[sid].images] == [r.path for r in before[sid].images if r.path != lateral]
    assert items[later.meta["study_id"]].meta["prior"]["study_id"] == prior_id


def test_a_build_stopped_after_its_embeddings_never_blocks_the_next(cxr_phantoms, tmp_path, monkeypatch):
    """Issue 42 item 12: the retrieval cache is written beside --out until the build is whole, so a build stopped
    after it (Ctrl-C here; SIGKILL or a full disk alike) leaves --out as it was, and the next one, --overwrite or
    not, builds and reuses the cache."""
    from medtemporal.benchmarks.longitudinal_rrg import command

    real = command.nearest_reports

    def stopped(*args, **kwargs):
        real(*args, **kwargs)  # the embeddings are on disk
        raise KeyboardInterrupt

    out, work = tmp_path / "b", tmp_path / ".b.partial"
    argv = ["build", "longitudinal-rrg", "--mimic-cxr-jpg", str(cxr_phantoms.mimic_cxr_jpg), "--out", str(out)]
    for extra in ([], ["--overwrite"]):
        monkeypatch.setattr(command, "nearest_reports", stopped)
        assert main([*argv, *extra]) == 130
        assert any((work / "embeddings").iterdir())
        assert not out.exists() if not extra else load(out).items  # the benchmark already there is untouched
        monkeypatch.setattr(command, "nearest_reports", real)
        assert main([*argv, *extra]) == 0
        assert load(out).items and any((out / "embeddings").iterdir()) and not work.exists()
