"""Released volume names → files: the default CT-RATE mapping, a VolumeName,Path CSV (the authors' npy files)."""

from __future__ import annotations

import pytest

from medtemporal.benchmarks.rad3d.release import VolumeMap, read_volume_map
from medtemporal.errors import InvalidInputError


def test_default_mapping_is_valid_prefix():
    assert VolumeMap().path("test_1019_d_1.nii.gz") == "dataset/valid/valid_1019/valid_1019_d/valid_1019_d_1.nii.gz"
    with pytest.raises(InvalidInputError, match="not a CT-RATE volume name"):
        VolumeMap().path("scan.nii.gz")


def test_volume_map_csv_takes_relative_and_absolute_paths(tmp_path):
    csv = tmp_path / "valid_path.csv"
    csv.write_text(f"VolumeName,Path\ntest_1_a_1.nii.gz,npy/test_1_a_1.npy\ntest_2_a_1.nii.gz,{tmp_path}/npy/b.npy\n")
    paths = read_volume_map(csv, tmp_path)
    assert paths == {"test_1_a_1.nii.gz": "npy/test_1_a_1.npy", "test_2_a_1.nii.gz": "npy/b.npy"}
    assert VolumeMap(paths=paths).path("test_2_a_1.nii.gz") == "npy/b.npy"
    with pytest.raises(InvalidInputError, match="not under the image root"):
        read_volume_map(csv, tmp_path / "elsewhere")
    bad = tmp_path / "bad.csv"
    bad.write_text("Name,File\nx,y\n")
    with pytest.raises(InvalidInputError, match="columns VolumeName and Path"):
        read_volume_map(bad, tmp_path)


def test_a_map_path_may_not_climb_out_of_the_image_root(tmp_path):
    csv = tmp_path / "valid_path.csv"
    csv.write_text("VolumeName,Path\ntest_1_a_1.nii.gz,../real/test_1_a_1.npy\n")
    with pytest.raises(InvalidInputError, match="climbs out of the image root"):
        read_volume_map(csv, tmp_path)
