"""The CheXpert Plus reader: 27 columns in order, PNG/JPG path resolution, studies by date order."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from PIL import Image

from medtemporal.errors import InvalidInputError
from medtemporal.provenance import licence_of
from medtemporal.provenance import write_phantom_manifest
from medtemporal.sources.chexpert_plus import COLUMNS, CSV_NAME, load_timelines, read_csv, resolve_image


def _row(path: str, order: int, patient: str = "patient9", frontal: str = "Frontal", impression: str = "Stable.") -> dict:
    row = {c: "" for c in COLUMNS}
    row.update(path_to_image=path, frontal_lateral=frontal, ap_pa="PA" if frontal == "Frontal" else "",
               deid_patient_id=patient, patient_report_date_order=str(order), section_impression=impression,
               report=f"IMPRESSION: {impression}", split="train")
    return row


def _write(folder: Path, rows: list[dict], columns: tuple[str, ...] = COLUMNS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / CSV_NAME).open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    return folder


def test_studies_follow_patient_report_date_order_not_file_order(tmp_path: Path) -> None:
    rows = [_row("train/patient9/study3/view1_frontal.jpg", 10, impression="Third."),
            _row("train/patient9/study1/view2_lateral.jpg", 2, frontal="Lateral", impression="Second."),
            _row("train/patient9/study1/view1_frontal.jpg", 2, impression="Second."),
            _row("train/patient9/study2/view1_frontal.jpg", 1, impression="First.")]
    (timeline,) = load_timelines(_write(tmp_path, rows))
    assert [s.study_id for s in timeline.studies] == ["study2", "study1", "study3"]
    assert [s.order for s in timeline.studies] == [1, 2, 10]
    assert timeline.studies[1].frontal == "train/patient9/study1/view1_frontal.jpg"
    assert len(timeline.studies[1].images) == 2
    assert timeline.studies[0].report["impression"] == "First."
    assert timeline.licence == "credentialed"


def test_images_resolve_in_the_png_release_and_as_listed(tmp_path: Path) -> None:
    png = tmp_path / "PNG/train/patient1/study1/view1_frontal.png"
    png.parent.mkdir(parents=True)
    Image.new("L", (4, 4)).save(png)
    jpg = tmp_path / "valid/patient2/study1/view1_frontal.jpg"
    jpg.parent.mkdir(parents=True)
    Image.new("L", (4, 4)).save(jpg)
    assert resolve_image(tmp_path, "train/patient1/study1/view1_frontal.jpg") == "PNG/train/patient1/study1/view1_frontal.png"
    assert resolve_image(tmp_path, "/data/CheXpertPlus/PNG/train/patient1/study1/view1_frontal.png") == \
        "PNG/train/patient1/study1/view1_frontal.png"
    assert resolve_image(tmp_path, "valid/patient2/study1/view1_frontal.jpg") == "valid/patient2/study1/view1_frontal.jpg"
    with pytest.raises(InvalidInputError, match="No image for train/patient3"):
        resolve_image(tmp_path, "train/patient3/study1/view1_frontal.jpg")


def test_wrong_columns_or_orders_fail_in_one_sentence(tmp_path: Path) -> None:
    swapped = (COLUMNS[1], COLUMNS[0], *COLUMNS[2:])
    with pytest.raises(InvalidInputError, match="columns in another order"):
        read_csv(_write(tmp_path / "a", [_row("train/p/s/v.jpg", 1)], swapped) / CSV_NAME)
    with pytest.raises(InvalidInputError, match="lacks column\\(s\\) split"):
        read_csv(_write(tmp_path / "b", [_row("train/p/s/v.jpg", 1)], COLUMNS[:-1]) / CSV_NAME)
    with pytest.raises(InvalidInputError, match="line 2: patient_report_date_order 'x'"):
        read_csv(_write(tmp_path / "c", [{**_row("train/p/s/v.jpg", 1), "patient_report_date_order": "x"}]) / CSV_NAME)
    with pytest.raises(InvalidInputError, match="point --chexpert-plus"):
        load_timelines(tmp_path / "missing")


def test_only_a_verified_phantom_manifest_makes_the_data_synthetic(tmp_path: Path) -> None:
    folder = _write(tmp_path, [_row("train/p/s/v.jpg", 1)])
    assert licence_of(folder) == "credentialed"
    (folder / "phantom.json").write_text("{}")  # a marker anyone can drop changes nothing
    assert licence_of(folder) == "credentialed"
    (folder / "phantom.json").unlink()
    write_phantom_manifest(folder, "test")
    assert licence_of(folder) == "synthetic"
