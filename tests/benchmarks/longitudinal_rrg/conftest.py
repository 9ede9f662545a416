"""Fixtures of the longitudinal-rrg tests: the session's small CXR cohort and one build of the family over it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.phantoms import cxr_phantoms  # noqa: F401  (the session cohort)

from medtemporal.cli import main
from medtemporal.phantoms.cxr import CxrPhantom


_BUILT: dict[str, Path] = {}


@pytest.fixture(scope="session")
def build_split(cxr_phantoms: CxrPhantom, tmp_path_factory: pytest.TempPathFactory):  # noqa: F811
    """``split`` → the family built from that split of the 12-patient cohort (once per session; read-only). The
    test split (4 patients) is the family's; the others hold the cohort's messy cases (equal times, a
    lateral-only study, a corrupt image), and are built without retrieval (their corpus would be themselves)."""

    def build(split: str) -> Path:
        if split not in _BUILT:
            out = tmp_path_factory.mktemp(f"rrg-{split}") / "bench"
            extra = [] if split == "test" else ["--split", split, "--no-retrieval"]
            assert main(["build", "longitudinal-rrg", "--mimic-cxr-jpg", str(cxr_phantoms.mimic_cxr_jpg),
                         *extra, "--out", str(out)]) == 0
            _BUILT[split] = out
        return _BUILT[split]

    return build


@pytest.fixture(scope="session")
def rrg_bench(build_split) -> Path:
    """The family built from the test split of the 12-patient cohort (4 patients); read-only."""
    return build_split("test")


@pytest.fixture(scope="session")
def truth(cxr_phantoms: CxrPhantom) -> dict[str, dict]:  # noqa: F811
    """The cohort's truth by study id."""
    return {r["study_id"]: r for r in map(json.loads, cxr_phantoms.truth.read_text().splitlines())}
