"""The readers of the two MS-CXR-T files on hand-written rows in the released schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from medtemporal.benchmarks.ms_cxr_t.release import (
    IMAGE_COLUMNS,
    IMAGE_FILE,
    SENTENCE_FILE,
    read_labels,
    read_sentence_pairs,
)
from medtemporal.errors import InvalidInputError

HEADER = ",".join(IMAGE_COLUMNS)
A = "p10/p10002428/s55758034/0a1b2c3d-4e5f6a7b-8c9d0e1f-2a3b4c5d-6e7f8a9b"
A_PRIOR = "p10/p10002428/s51234567/1a1b2c3d-4e5f6a7b-8c9d0e1f-2a3b4c5d-6e7f8a9b"
B = "p11/p11000001/s50000002/2a1b2c3d-4e5f6a7b-8c9d0e1f-2a3b4c5d-6e7f8a9b"
B_PRIOR = "p11/p11000001/s50000001/3a1b2c3d-4e5f6a7b-8c9d0e1f-2a3b4c5d-6e7f8a9b"


def _write(tmp_path: Path, *rows: str, header: str = HEADER, name: str = IMAGE_FILE) -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def test_one_item_per_labelled_finding_prior_and_current_by_their_dicom_paths(tmp_path):
    path = _write(tmp_path,
                  # consolidation improving (one expert), pleural effusion stable; the rest not annotated (NaN)
                  f"{A},{A_PRIOR},51234567,55758034,10002428,improving,one_expert,,,stable,multiple_experts,,,,",
                  # upper case and spaces are read as the value; pneumonia worsening without a quality
                  f"{B},{B_PRIOR},50000001,50000002,11000001,,,,,,, Worsening ,,,")
    labels, counts = read_labels(path)
    assert [(lab.row, lab.finding, lab.progression, lab.label_quality) for lab in labels] == [
        (0, "consolidation", "improving", "one_expert"), (0, "pleural_effusion", "stable", "multiple_experts"),
        (1, "pneumonia", "worsening", None)]
    assert labels[0].current == f"files/{A}.jpg" and labels[0].prior == f"files/{A_PRIOR}.jpg"
    assert (labels[0].subject_id, labels[0].study_id, labels[0].previous_study_id) == (10002428, 55758034, 51234567)
    assert counts == {"label_quality_missing": 1}


def test_rows_without_labels_or_with_ids_that_disagree_with_their_paths_are_left_out_and_counted(tmp_path):
    path = _write(tmp_path,
                  f"{A},{A_PRIOR},51234567,55758034,10002428,,,,,,,,,,",  # nothing annotated
                  f"{A},{A_PRIOR},51234567,55758099,10002428,stable,one_expert,,,,,,,,",  # study_id not the path's
                  f"{B},{B_PRIOR},50000001,50000002,11000001,,one_expert,,,,,,,improving,disagreement")
    labels, counts = read_labels(path)
    assert [(lab.row, lab.finding) for lab in labels] == [(2, "pneumothorax")]
    assert counts == {"row_without_labels": 1, "ids_disagree_with_dicom_path": 1, "label_quality_without_label": 1}


@pytest.mark.parametrize("row, message", [
    (f"{A},{A_PRIOR},51234567,55758034,10002428,better,one_expert,,,,,,,,", "consolidation_progression 'better'"),
    (f"{A},{A_PRIOR},51234567,55758034,10002428,stable,two_experts,,,,,,,,", "label_quality 'two_experts'"),
    (f"0a1b2c3d,{A_PRIOR},51234567,55758034,10002428,stable,one_expert,,,,,,,,", "dicom_id '0a1b2c3d'"),
    (f"{A},{A_PRIOR},x,55758034,10002428,stable,one_expert,,,,,,,,", "previous_study_id 'x'"),
])
def test_bad_values_are_refused_in_one_sentence_naming_the_row(tmp_path, row, message):
    path = _write(tmp_path, row)
    with pytest.raises(InvalidInputError, match="line 2") as err:
        read_labels(path)
    assert message in str(err.value) and str(err.value).count(". ") == 0


def test_a_file_without_the_released_columns_is_refused(tmp_path):
    path = _write(tmp_path, f"{A},{A_PRIOR},51234567,55758034,10002428", header="dicom_id,previous_dicom_id,"
                  "previous_study_id,study_id,subject_id")
    with pytest.raises(InvalidInputError, match="lacks the column.*consolidation_progression"):
        read_labels(path)
    with pytest.raises(InvalidInputError, match="does not exist"):
        read_labels(tmp_path / "nothing.csv")


def test_sentence_pairs_keep_their_subset_and_refuse_an_unknown_category(tmp_path):
    path = _write(tmp_path, "RadGraph,Effusion is unchanged.,Stable effusion.,paraphrase",
                  "RadGraph,Edema has improved.,Edema has worsened.,contradiction",
                  "other,,Edema has worsened.,contradiction",
                  header="subset_name,sentence_1,sentence_2,category", name=SENTENCE_FILE)
    pairs, counts = read_sentence_pairs(path)
    assert [(p.row, p.subset, p.category) for p in pairs] == [(0, "RadGraph", "paraphrase"),
                                                               (1, "RadGraph", "contradiction")]
    assert counts == {"sentence_empty": 1}
    _write(tmp_path, "RadGraph,a,b,unrelated", header="subset_name,sentence_1,sentence_2,category", name=SENTENCE_FILE)
    with pytest.raises(InvalidInputError, match="category 'unrelated' is none of paraphrase, contradiction; fix that row"):
        read_sentence_pairs(path)


def test_a_sentence_over_the_csv_field_limit_is_read_not_a_traceback(tmp_path):
    """Issue 42 item 14, through a family's reader: a field over 131,072 characters in the last row (which the
    end-of-file check parses with the csv module) and a bad row after one (named by its line)."""
    long = "The effusion is unchanged. " * 6_000  # 162,000 characters
    header = "subset_name,sentence_1,sentence_2,category"
    path = _write(tmp_path, "RadGraph,Stable effusion.,Effusion is unchanged.,paraphrase",
                  f'RadGraph,"{long}",Stable effusion.,paraphrase', header=header, name=SENTENCE_FILE)
    pairs, _ = read_sentence_pairs(path)
    assert [len(p.sentence_1) for p in pairs] == [len("Stable effusion."), len(long.strip())]
    _write(tmp_path, f'RadGraph,"{long}",Stable effusion.,paraphrase', "RadGraph,a,b,unrelated", header=header,
           name=SENTENCE_FILE)
    with pytest.raises(InvalidInputError, match="line 3: category 'unrelated'"):
        read_sentence_pairs(path)
