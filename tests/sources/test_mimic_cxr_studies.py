"""The study table of MIMIC-CXR-JPG with its official split, read from the phantom cohort's real layouts."""

from __future__ import annotations

import gzip
import json
import re
import shutil

import pandas as pd
import pytest
from helpers.phantoms import cxr_phantoms  # noqa: F401 (fixture)

from medtemporal.errors import InvalidInputError
from medtemporal.sources.mimic_cxr_studies import SPLIT_CSV, read_split, read_study_table


def truth(phantom) -> dict[str, dict]:
    return {r["study_id"]: r for r in map(json.loads, phantom.truth.read_text().splitlines())}


def test_every_study_has_its_patients_split_and_its_images_frontal_first_in_time_order(cxr_phantoms):
    table, excluded = read_study_table(cxr_phantoms.mimic_cxr_jpg)
    known = truth(cxr_phantoms)
    studies = [s for group in table.values() for s in group]
    assert not excluded and {s.study for s in studies} == set(known)
    for subject, group in table.items():
        assert [s.time for s in group] == sorted(s.time for s in group) and {s.subject_id for s in group} == {subject}
        for s in group:
            rec = known[s.study]
            assert s.split == rec["split"] and s.patient == rec["patient_id"]
            assert [v for _, v in s.images] == sorted((v for _, v in s.images), key=lambda v: v not in ("PA", "AP"))
            assert s.frontal == rec["frontal"] and len(s.images) == len(rec["views"])


@pytest.fixture()
def copy(cxr_phantoms, tmp_path):
    """A writable copy of the cohort's metadata and split file (no images needed)."""
    root = tmp_path / "jpg"
    (root / "files").mkdir(parents=True)
    for name in ("mimic-cxr-2.0.0-metadata.csv.gz", SPLIT_CSV):
        shutil.copy(cxr_phantoms.mimic_cxr_jpg / name, root / name)
    return root


def _rewrite(path, frame: pd.DataFrame) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        frame.to_csv(fh, index=False)


def test_studies_the_split_leaves_out_or_splits_are_counted(copy):
    split = pd.read_csv(copy / SPLIT_CSV, dtype={"dicom_id": str})
    sizes = split.groupby("study_id").size()
    gone = split["study_id"] == sizes.index[0]
    torn = split.index[split["study_id"] == sizes[sizes > 1].index[-1]]
    split.loc[torn, "split"] = ["train"] + ["test"] * (len(torn) - 1)
    _rewrite(copy / SPLIT_CSV, split[~gone])
    _, excluded = read_study_table(copy)
    assert excluded == {"study_not_in_split": 1, "study_split_inconsistent": 1}


@pytest.mark.parametrize(("change", "message"), [
    (lambda f: f.drop(columns=["split"]), "lacks the column(s) split; pass the split file"),
    (lambda f: f.assign(split="testing"), ", line 2: split 'testing' is not one of the release's"),
    (lambda f: f.assign(study_id="s1"), ", line 2: study_id 's1' is not an integer"),
])
def test_a_bad_split_file_is_refused_in_one_sentence(copy, change, message):
    _rewrite(copy / SPLIT_CSV, change(pd.read_csv(copy / SPLIT_CSV, dtype={"dicom_id": str})))
    with pytest.raises(InvalidInputError, match=re.escape(message)):
        read_split(copy / SPLIT_CSV)


def test_a_missing_split_file_names_the_release_file_and_the_option(copy):
    (copy / SPLIT_CSV).unlink()
    with pytest.raises(InvalidInputError, match=f"has no {SPLIT_CSV}.*--split-file"):
        read_study_table(copy)
