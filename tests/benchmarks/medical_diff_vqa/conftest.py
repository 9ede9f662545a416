"""Fixtures of the Medical-Diff-VQA tests: the small CXR cohort and a Medical-Diff-VQA phantom over it."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.phantoms import cxr_phantoms  # noqa: F401  (the session cohort)

from medtemporal.benchmarks.medical_diff_vqa.phantom import write_diff_vqa_phantoms
from medtemporal.phantoms.cxr import CxrPhantom


@pytest.fixture(scope="session")
def diffvqa(cxr_phantoms: CxrPhantom, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """Both Medical-Diff-VQA files over the 12-patient cohort (test split: 60% of the patients); read-only."""
    out = tmp_path_factory.mktemp("diffvqa") / "release"
    write_diff_vqa_phantoms(cxr_phantoms.root, out, seed=0, test_share=0.6)
    return out
