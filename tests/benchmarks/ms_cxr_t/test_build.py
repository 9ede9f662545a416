"""MS-CXR-T phantoms → build: every label agrees with the cohort's truth, the build is reproducible and counted."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

from medtemporal.benchmark import load
from medtemporal.benchmarks.ms_cxr_t.phantom import COHORT_ENTITY, progression
from medtemporal.cli import main
from medtemporal.phantoms.cxr import CxrPhantom


def _build(release: Path, jpg: Path | None, out: Path, *extra: str) -> Path:
    args = ["build", "ms-cxr-t", "--ms-cxr-t", str(release), "--out", str(out), *extra]
    assert main(args + (["--mimic-cxr-jpg", str(jpg)] if jpg else [])) == 0
    return out


def _truth(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "phantom_truth.jsonl").read_text().splitlines()]


def _cohort_states(cohort: Path) -> dict[str, dict]:
    return {s["study_id"]: s for s in map(json.loads, (cohort / "phantom_truth.jsonl").read_text().splitlines())}


def test_every_item_is_labelled_as_the_cohort_truth_says(mscxrt, cxr_phantoms: CxrPhantom, tmp_path):
    bench = load(_build(mscxrt, cxr_phantoms.mimic_cxr_jpg, tmp_path / "b", "--no-audit"))
    states = _cohort_states(cxr_phantoms.root)
    progression_items = [it for it in bench.items if it.task == "progression"]
    assert len(progression_items) == sum(1 for t in _truth(mscxrt) if "finding" in t) > 20
    for item in progression_items:
        prior, current = (states[f"s{item.meta[k]}"] for k in ("previous_study_id", "study_id"))
        entity = COHORT_ENTITY[item.subtype]
        truth = progression(prior["findings"][entity], current["findings"][entity])
        assert item.options[item.answer] == truth == item.meta["progression"]
        assert [ref.path for ref in item.images] == [prior["frontal"], current["frontal"]]  # prior first
        assert [ref.label for ref in item.images] == ["Last visit image (reference image):",
                                                      "Current visit image (new image):"]
        assert sorted(item.options.values()) == ["improving", "stable", "worsening"]
        assert current["visit"] > prior["visit"] and item.meta["patient_id"] == current["patient_id"]
    sentences = [it for it in bench.items if it.task == "sentence_similarity"]
    assert len(sentences) == 40 and not any(it.images for it in sentences)
    assert {it.options[it.answer] for it in sentences} == {"paraphrase", "contradiction"}
    assert bench.manifest.licence == "synthetic" and bench.manifest.exclusions == {}
    assert bench.manifest.config["labels"].keys() <= set(COHORT_ENTITY)  # no pneumonia in the cohort
    shown = Counter(it.answer for it in progression_items)
    assert len(shown) == 3 and min(shown.values()) > len(progression_items) / 6  # options shuffled per item


def test_same_seed_same_bytes_other_seed_other_option_order(mscxrt, cxr_phantoms: CxrPhantom, tmp_path):
    jpg = cxr_phantoms.mimic_cxr_jpg
    a = _build(mscxrt, jpg, tmp_path / "a", "--no-audit")
    b = _build(mscxrt, jpg, tmp_path / "b", "--no-audit")
    c = _build(mscxrt, jpg, tmp_path / "c", "--no-audit", "--seed", "5")
    assert (a / "items.jsonl").read_bytes() == (b / "items.jsonl").read_bytes()
    assert (a / "items.jsonl").read_bytes() != (c / "items.jsonl").read_bytes()
    truth = [(it.meta["row"], it.subtype, it.options[it.answer]) for it in load(c).items if it.task == "progression"]
    assert truth == [(it.meta["row"], it.subtype, it.options[it.answer]) for it in load(a).items
                     if it.task == "progression"]


def test_a_missing_image_leaves_its_labels_out_counted_and_real_data_is_credentialed(mscxrt, cxr_phantoms, tmp_path):
    release = tmp_path / "release"
    shutil.copytree(mscxrt, release)
    jpg = tmp_path / "jpg"
    shutil.copytree(cxr_phantoms.mimic_cxr_jpg, jpg)
    first = load(_build(mscxrt, cxr_phantoms.mimic_cxr_jpg, tmp_path / "full", "--no-audit")).items[0]
    (jpg / first.images[1].path).unlink()
    bench = load(_build(release, jpg, tmp_path / "b", "--no-audit"))
    gone = sum(1 for it in load(tmp_path / "full").items if first.images[1].path in [r.path for r in it.images])
    assert bench.manifest.exclusions == {"image_missing": gone}
    assert bench.manifest.licence == "credentialed"  # copies are not verified phantoms


def test_without_the_image_root_the_build_asks_for_it_unless_images_are_not_verified(mscxrt, tmp_path, capsys):
    assert main(["build", "ms-cxr-t", "--ms-cxr-t", str(mscxrt), "--out", str(tmp_path / "x")]) == 2
    assert "needs --mimic-cxr-jpg" in capsys.readouterr().err
    bench = load(_build(mscxrt, None, tmp_path / "y", "--no-verify-images", "--no-audit", "--tasks", "progression"))
    assert {it.task for it in bench.items} == {"progression"} and bench.manifest.image_root is None
    assert main(["build", "ms-cxr-t", "--ms-cxr-t", str(mscxrt), "--out", str(tmp_path / "z"), "--tasks", "images"]) == 2
    assert "--tasks 'images' names unknown tasks" in capsys.readouterr().err
    assert main(["build", "ms-cxr-t", "--ms-cxr-t", str(tmp_path), "--out", str(tmp_path / "w")]) == 2
    assert "holds neither MS_CXR_T_temporal_image_classification_v1.0.0.csv" in capsys.readouterr().err


def test_the_phantom_refuses_an_occupied_folder_unless_it_replaces_its_own(cxr_phantoms, tmp_path, capsys):
    out = tmp_path / "p"
    args = ["phantoms", "ms-cxr-t", "--cxr", str(cxr_phantoms.root), "--pairs", "5", "--out", str(out)]
    assert main(args) == 0
    assert len((out / "MS_CXR_T_temporal_image_classification_v1.0.0.csv").read_text().splitlines()) == 6
    assert main(args) == 2 and "pass --overwrite" in capsys.readouterr().err
    assert main([*args, "--overwrite"]) == 0
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "data.csv").write_text("x\n")
    assert main([*args[:-1], str(tmp_path / "other"), "--overwrite"]) == 2
    assert "is not an empty folder; choose a new --out." in capsys.readouterr().err
    assert main(["phantoms", "ms-cxr-t", "--cxr", str(tmp_path), "--out", str(tmp_path / "q")]) == 2
    assert "phantoms cxr" in capsys.readouterr().err
