"""The viewer shows a CT volume (NIfTI) as its middle slice where a run recorded no slices (a 3D-RAD baseline):
no "(image not found) ….nii.gz" rows."""

from __future__ import annotations

import numpy as np
import pytest

from medtemporal.report.assets import Assets
from medtemporal.report.viewer import Thumbnails

nib = pytest.importorskip("nibabel")


def test_a_nifti_volume_gets_a_thumbnail(tmp_path):
    volume = np.full((24, 24, 9), -1000.0, dtype=np.float32)
    volume[6:18, 6:18, 4] = 40.0  # a bright square on the middle slice only
    path = tmp_path / "valid_1_a_1.nii.gz"
    nib.save(nib.Nifti1Image(volume, np.eye(4)), str(path))
    thumbs = Thumbnails(Assets(single_file=True))
    assert thumbs.add(path) == 0 and thumbs.srcs[0].startswith("data:image/jpeg")
    (tmp_path / "broken.nii.gz").write_bytes(b"not a volume")
    assert thumbs.add(tmp_path / "broken.nii.gz") is None  # an unreadable file is still "not found", not an error
