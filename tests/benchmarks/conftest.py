"""Fixtures of the builder tests: a simulated cohort and its timelines (no images)."""

from __future__ import annotations

import pytest
from helpers.micxr import make_patients, make_timelines

from medtemporal.phantoms.trajectory import PatientTruth
from medtemporal.schema import Timeline


@pytest.fixture(scope="session")
def patients() -> dict[str, PatientTruth]:
    """A cohort large enough for a 2,000-item build."""
    return make_patients(400)


@pytest.fixture(scope="session")
def timelines(patients: dict[str, PatientTruth]) -> list[Timeline]:
    return make_timelines(patients)
