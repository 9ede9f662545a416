"""CT-RATE phantoms → 3D-RAD build: labels agree with the truth, exclusions counted, deterministic, bad input."""

from __future__ import annotations

import shutil
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from helpers.rad3d import SHAPE, build_args

from medtemporal.benchmark import load
from medtemporal.benchmarks.rad3d.command import build
from medtemporal.benchmarks.rad3d.labels import category
from medtemporal.benchmarks.rad3d.release import parse_history
from medtemporal.benchmarks.rad3d.text import NOTE
from medtemporal.errors import InvalidInputError
from medtemporal.phantoms.ct_rate import _measures, draw
from medtemporal.sources.ct_rate import LABELS, load_timelines, load_volume, read_metadata, volume_path


def test_closed_answers_agree_with_phantom_truth(rad3d_bench, truth):
    bench = load(rad3d_bench)
    assert bench.manifest.licence == "synthetic"
    by_patient_letter = {(t["patient"], t["letter"]): t["labels"] for t in truth.values() if t["reconstruction"] == 1}
    closed = [i for i in bench.items if i.task in ("task4", "task5", "task6")]
    assert {i.task for i in closed} == {"task4", "task5", "task6"}
    for item in closed:
        label, patient, letter = item.meta["label"], item.meta["patient_id"], item.meta["letter"]
        now = by_patient_letter[(patient, letter)][label]
        if item.task == "task4":
            assert item.answer == ("A" if now else "B")
            continue
        earlier = [by_patient_letter[(patient, x)][label] for x in "abcdefgh"[: "abcdefgh".index(letter)]
                   if (patient, x) in by_patient_letter]
        assert item.meta["history"] == earlier
        assert item.answer == category(earlier, now)
        if item.task == "task6":
            assert NOTE in item.question and parse_history(item.question) == earlier
    t5 = [(i.meta["patient_id"], i.meta["label"], i.answer) for i in bench.items if i.task == "task5"]
    t6 = [(i.meta["patient_id"], i.meta["label"], i.answer) for i in bench.items if i.task == "task6"]
    assert t5 == t6 and "Medical material" not in {x[1] for x in t5}


def test_open_answers_come_from_the_report(rad3d_bench, truth):
    bench = load(rad3d_bench)
    measured = [i for i in bench.items if i.task == "task3"]
    assert measured
    for item in measured:
        m = next(t["measurements"] for t in truth.values() if t["patient"] == item.meta["patient_id"])
        if item.subtype == "Diameter":
            assert item.answer == f"{m['nodule_diameter_mm']} mm"
        elif item.subtype == "Thickness":
            assert item.answer in (f"{m['pleural_thickness_mm']} mm", f"{m['pericardial_thickness_mm']} mm")
        else:
            assert item.answer == "{}x{} mm".format(*m["node_size_mm"])
    assert all(not i.options and i.reference == i.answer for i in bench.items if i.answer_type == "open")


def test_messy_cases_are_counted(rad3d_bench):
    excluded = load(rad3d_bench).manifest.exclusions
    assert excluded["label_row_without_volume"] >= 1
    assert excluded["unreadable_volume"] >= 1
    assert excluded["scan_without_raw_reconstruction"] == 1


def test_same_seed_same_bytes(ct_phantom, rad3d_bench, tmp_path):
    from medtemporal.benchmark import save

    items, manifest = build(build_args(ct_phantom, tmp_path / "again"))
    save(tmp_path / "again", items, manifest)
    assert (tmp_path / "again" / "items.jsonl").read_bytes() == (rad3d_bench / "items.jsonl").read_bytes()
    other, _ = build(build_args(ct_phantom, tmp_path / "other", seed=1))
    def key(batch):
        return sorted((i.task, i.meta["patient_id"], i.meta.get("label", i.question), i.answer) for i in batch
                      if i.answer_type == "choice")

    assert key(other) == key(items)  # the seed changes wording and order only
    assert [i.question for i in other] != [i.question for i in items]


def test_volumes_show_their_labels(ct_phantom, truth):
    meta = read_metadata(ct_phantom / "dataset" / "metadata" / "validation_metadata.csv")
    seen = Counter()
    for name, t in truth.items():
        if not t["volume_written"] or t["messy"] or t["reconstruction"] != 1:
            continue
        hu = load_volume(ct_phantom / volume_path(name), meta[name])
        assert hu.shape == SHAPE and -1100 < hu.min() < -900
        labels = t["labels"]
        assert (hu > 2000).any() == bool(labels["Medical material"]), name
        seen.update(k for k, v in labels.items() if v)
    assert seen["Medical material"]


@pytest.mark.parametrize("label", LABELS)
def test_every_label_is_drawn_visibly(label):
    m = _measures(np.random.default_rng(0))
    on = {x: int(x == label) for x in LABELS}
    off = {x: 0 for x in LABELS}
    a = draw((96, 96, 64), on, m, np.random.default_rng(1))  # the phantoms' default grid
    b = draw((96, 96, 64), off, m, np.random.default_rng(1))
    assert (np.abs(a - b) > 100).sum() >= 4, label


def test_nodule_diameter_is_measurable():
    m = {**_measures(np.random.default_rng(0)), "nodule_diameter_mm": 30, "nodule_lobe": "right lower lobe"}
    labels = {x: int(x == "Lung nodule") for x in LABELS}
    shape = (96, 96, 64)
    diff = draw(shape, labels, m, np.random.default_rng(1)) - draw(shape, {x: 0 for x in LABELS}, m, np.random.default_rng(1))
    xs = np.flatnonzero((np.abs(diff) > 100).any(axis=(1, 2)))
    assert abs((xs.max() - xs.min() + 1) * 350 / shape[0] - 30) <= 350 / shape[0]


def test_bad_input_is_one_sentence(ct_phantom, tmp_path):
    with pytest.raises(InvalidInputError, match="dataset/ folder"):
        build(build_args(tmp_path, tmp_path / "o"))
    root = tmp_path / "copy"
    shutil.copytree(ct_phantom / "dataset" / "multi_abnormality_labels", root / "dataset" / "multi_abnormality_labels")
    labels = root / "dataset" / "multi_abnormality_labels" / "valid_predicted_labels.csv"
    df = pd.read_csv(labels)
    df.drop(columns=["Emphysema"]).to_csv(labels, index=False)
    with pytest.raises(InvalidInputError, match="lacks the column.*Emphysema"):
        load_timelines(root)
    df.rename(columns={"VolumeName": "Volume"}).to_csv(labels, index=False)
    with pytest.raises(InvalidInputError, match="lacks the column.*VolumeName"):
        load_timelines(root)
    broken = tmp_path / "broken.nii.gz"
    broken.write_bytes(b"\x1f\x8b not really")
    with pytest.raises(InvalidInputError, match="not a readable NIfTI"):
        load_volume(broken)


def test_label_only_build_is_fast_path(tmp_path):
    from medtemporal.phantoms.ct_rate import write_ct_rate

    root = tmp_path / "labels-only"
    write_ct_rate(root, patients=30, seed=0, volumes=False)
    items, manifest = build(build_args(root, tmp_path / "b", no_volume_check=True))
    assert manifest.config["patients"] == 30 - 0 and Counter(i.task for i in items)["task4"] >= 18 * 25
