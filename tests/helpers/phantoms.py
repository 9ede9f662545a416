"""Small phantom MIMIC-CXR cohorts for tests: `make_cxr_phantoms` and the session fixture `cxr_phantoms`.

Use the fixture by importing it into a test module or a ``conftest.py``
(``from helpers.phantoms import cxr_phantoms``), or call `make_cxr_phantoms`
with a folder from ``tmp_path_factory`` for another size or seed. A cohort is
written once per session and folder; treat it as read-only (copy it with
``shutil.copytree`` before tampering).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from medtemporal.phantoms.cxr import CxrPhantom, write_cxr_phantoms

_MADE: dict[Path, CxrPhantom] = {}


def make_cxr_phantoms(
    root: str | Path, patients: int = 12, seed: int = 0, *, images: bool = True, image_size: int = 128
) -> CxrPhantom:
    """A phantom cohort under ``root`` (written on first use, then reused within the session).

    With the defaults (12 patients, seed 0) every messy case occurs: a short
    timeline, an equal-timestamp pair, a lateral-only study, a corrupt JPEG,
    a study with two frontal images, uncertain, low-quality and missing
    observations.
    """
    out = Path(root) / f"cxr-p{patients}-s{seed}-{'img' if images else 'noimg'}-{image_size}"
    if out not in _MADE:
        if out.exists():
            shutil.rmtree(out)
        _MADE[out] = write_cxr_phantoms(out, patients=patients, seed=seed, images=images, image_size=image_size)
    return _MADE[out]


@pytest.fixture(scope="session")
def cxr_phantoms(tmp_path_factory: pytest.TempPathFactory) -> CxrPhantom:
    """The default small cohort (12 patients, seed 0, 128-pixel images)."""
    return make_cxr_phantoms(tmp_path_factory.getbasetemp() / "phantoms")
