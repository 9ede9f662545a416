"""Fixtures of the MS-CXR-T tests: the small CXR cohort and an MS-CXR-T phantom over it (written once per session)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.phantoms import cxr_phantoms  # noqa: F401  (the session cohort)

from medtemporal.benchmarks.ms_cxr_t.phantom import write_ms_cxr_t_phantoms
from medtemporal.phantoms.cxr import CxrPhantom


@pytest.fixture(scope="session")
def mscxrt(cxr_phantoms: CxrPhantom, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """Both MS-CXR-T files over the 12-patient cohort (every labelled pair, 40 sentence pairs); read-only."""
    out = tmp_path_factory.mktemp("ms-cxr-t") / "release"
    write_ms_cxr_t_phantoms(cxr_phantoms.root, out, seed=0)
    return out
