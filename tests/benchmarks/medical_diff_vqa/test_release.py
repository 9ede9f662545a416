"""The Medical-Diff-VQA readers on hand-written rows in the 1.0.1 schema, the 1.0.0 order bug included."""

from __future__ import annotations

from pathlib import Path

import pytest

from medtemporal.benchmarks.medical_diff_vqa.command import question_item
from medtemporal.benchmarks.medical_diff_vqa.release import MIMIC_ALL_FILE, QUESTIONS_FILE, read_questions
from medtemporal.errors import InvalidInputError

CHEXPERT = ("Atelectasis,Cardiomegaly,Consolidation,Edema,Enlarged Cardiomediastinum,Fracture,Lung Lesion,"
            "Lung Opacity,No Finding,Pleural Effusion,Pleural Other,Pneumonia,Pneumothorax,Support Devices")
MIMIC_ALL = [
    f"subject_id,study_id,{CHEXPERT},dicom_id,view,split,study_date,study_order",
    "18936629,54989200,,,,,,,,,1.0,,,,,,d1-aa,postero-anterior,test,21800506,1.0",
    "18936629,55088298,1.0,,,,,,,,,1.0,,,1.0,,d2-bb,antero-posterior,test,21800626,2.0",
    "18936629,50632107,,,,,,,,,,1.0,,,,,d3-cc,postero-anterior,test,21800723,3.0",
    "10000001,51111111,,,,,,,,,1.0,,,,,,d4-dd,postero-anterior,train,21500101,1.0",
]
HEADER = "study_id,subject_id,ref_id,question_type,question,answer,split"


def _release(tmp_path: Path, *rows: str) -> Path:
    (tmp_path / MIMIC_ALL_FILE).write_text("\n".join(MIMIC_ALL) + "\n")
    (tmp_path / QUESTIONS_FILE).write_text("\n".join([HEADER, *rows]) + "\n")
    return tmp_path


def test_test_split_rows_become_closed_open_and_difference_items_reference_first(tmp_path):
    folder = _release(tmp_path,
                      "55088298,18936629,54989200,presence,is there edema?,no,test",
                      '55088298,18936629,54989200,abnormality,what abnormalities are seen in this image?,'
                      '"pleural effusion, pneumothorax, atelectasis",test',
                      "55088298,18936629,54989200,difference,what has changed compared to the reference image?,"
                      "the main image has an additional finding of pneumothorax than the reference image. ,test",
                      "51111111,10000001,51111111,view,which view is this image taken?,PA view,train")
    questions, counts = read_questions(folder, "release", verify_images=False)
    assert [(q.question_type, q.closed) for q in questions] == [("presence", True), ("abnormality", False),
                                                                ("difference", False)]
    assert counts.splits == {"test": 3, "train": 1} and not counts.excluded
    items = [question_item(q) for q in questions]
    assert [(it.task, it.subtype, it.answer_type) for it in items] == [
        ("closed", "presence", "yesno"), ("open", "abnormality", "open"), ("difference", "difference", "open")]
    assert items[0].answer == "No" and items[0].reference == "no"
    assert items[2].reference.endswith("reference image. ")  # kept as released
    first = items[2].images
    assert [r.path for r in first] == ["files/p18/p18936629/s54989200/d1-aa.jpg", "files/p18/p18936629/s55088298/d2-bb.jpg"]
    assert [r.label for r in first] == ["Last visit image (reference image):", "Current visit image (main image):"]
    assert [r.timestamp for r in first] == ["2180-05-06", "2180-06-26"] and [r.visit for r in first] == [1, 2]
    assert items[0].meta["patient_id"] == "p18936629" and items[0].cluster == "p18936629"


def test_a_1_0_0_style_difference_row_is_refused_and_other_types_are_flagged(tmp_path):
    folder = _release(tmp_path,
                      # 1.0.0: the reference study (s50632107, third) after the main one (s55088298, second)
                      "55088298,18936629,50632107,difference,what has changed compared to the reference image?,"
                      "the main image is missing the finding of pleural effusion than the reference image. ,test",
                      "55088298,18936629,50632107,presence,is there edema?,no,test")
    questions, counts = read_questions(folder, "release", verify_images=False)
    assert counts.excluded == {"difference_reference_after_main": 1}
    assert counts.reference_after_main_kept == {"presence": 1}
    (item,) = [question_item(q) for q in questions]
    assert item.meta["reference_after_main"] is True
    assert [r.label for r in item.images] == ["Reference image (a later visit):", "Main image (an earlier visit):"]
    assert [r.visit for r in item.images] == [2, 1]


def test_rows_that_cannot_be_shown_are_left_out_and_counted(tmp_path):
    folder = _release(tmp_path,
                      "55088298,18936629,59999999,presence,is there edema?,no,test",  # reference not in mimic_all
                      "55088298,18936629,51111111,presence,is there edema?,no,test",  # another subject's study
                      "55088298,18936629,55088298,presence,is there edema?,no,test",  # its own reference
                      "55088298,18936629,54989200,presence,is there edema?,,test",  # no answer
                      "55088298,18936629,54989200,presence,is there edema?,no,test")  # images missing
    (tmp_path / "files").mkdir()
    questions, counts = read_questions(folder, "release", image_root=tmp_path, verify_images=True)
    assert not questions
    assert counts.excluded == {"study_not_in_mimic_all": 1, "study_of_another_subject": 1, "reference_is_main": 1,
                               "question_or_answer_empty": 1, "image_missing": 1}


@pytest.mark.parametrize("row, split, message", [
    ("55088298,18936629,54989200,size,how big?,small,test", "release", "question_type 'size' is none of"),
    ("55088298,18936629,x54989200,presence,is there edema?,no,test", "release",
     "ref_id 'x54989200' is not an integer"),
    ("55088298,18936629,54989200,presence,is there edema?,no,test", "test", "--split 'test' names no test set; "
     "use one of release, ekaid"),
    ("55088298,18936629,54989200,presence,is there edema?,no,val", "release", "has no row whose split is 'test' "
     r"\(it has val\); use the released file, or --split ekaid"),
])
def test_bad_rows_and_options_are_refused_in_one_sentence(tmp_path, row, split, message):
    folder = _release(tmp_path, row)
    with pytest.raises(InvalidInputError, match=message):
        read_questions(folder, split, verify_images=False)


def test_files_without_the_released_columns_are_refused(tmp_path):
    folder = _release(tmp_path, "55088298,18936629,54989200,presence,is there edema?,no,test")
    (folder / MIMIC_ALL_FILE).write_text("subject_id,study_id,dicom_id\n1,2,d\n")
    with pytest.raises(InvalidInputError, match="lacks the column.*view, split, study_date, study_order"):
        read_questions(folder, "release", verify_images=False)
    (folder / MIMIC_ALL_FILE).unlink()
    with pytest.raises(InvalidInputError, match="mimic_all.csv does not exist"):
        read_questions(folder, "release", verify_images=False)
