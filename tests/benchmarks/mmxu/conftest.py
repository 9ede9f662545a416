"""Fixtures of the MMXU tests: a phantom CXR cohort, an MMXU release over it and its build (once per session)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.mmxu import build_args
from helpers.phantoms import make_cxr_phantoms

from medtemporal.benchmark import save
from medtemporal.benchmarks.mmxu.command import build
from medtemporal.benchmarks.mmxu.phantom import write_mmxu_phantoms
from medtemporal.phantoms.cxr import CxrPhantom


@pytest.fixture(scope="session")
def cohort(tmp_path_factory: pytest.TempPathFactory) -> CxrPhantom:
    """40 phantom patients with 64-pixel images (about 200 MMXU questions)."""
    return make_cxr_phantoms(tmp_path_factory.getbasetemp() / "phantoms", patients=40, seed=1, image_size=64)


@pytest.fixture(scope="session")
def release(cohort: CxrPhantom, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``MMXU-test.jsonl`` written by the mmxu phantom kind over the cohort; treat it as read-only."""
    path, _ = write_mmxu_phantoms(cohort.root, tmp_path_factory.mktemp("mmxu") / "release")
    return path


@pytest.fixture(scope="session")
def bench(release: Path, cohort: CxrPhantom, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The phantom release built (with the audit and the blind picks); treat it as read-only."""
    items, manifest = build(build_args(release, cohort.mimic_cxr_jpg))
    return save(tmp_path_factory.mktemp("mmxu-bench") / "bench", items, manifest)
