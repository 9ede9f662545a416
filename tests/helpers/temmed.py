"""TemMed-Bench test helpers: a phantom CheXpert Plus folder and a benchmark built from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from medtemporal.cli import main
from medtemporal.phantoms.chexpert_plus import write_chexpert_plus

PATIENTS = 120
TEST_SIZE = 40


def build_args(data: Path, out: Path, *extra: str) -> list[str]:
    """``medtemporal build temmed`` arguments for a small phantom build."""
    return ["build", "temmed", "--chexpert-plus", str(data), "--out", str(out), "--test-size", str(TEST_SIZE),
            "--vqa-items", "60", *extra]


@pytest.fixture(scope="module")
def temmed_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A phantom CheXpert Plus folder (96-pixel images)."""
    root = tmp_path_factory.mktemp("chexpert_plus")
    write_chexpert_plus(root / "data", patients=PATIENTS, seed=3, image_size=96)
    return root / "data"


@pytest.fixture(scope="module")
def temmed_bench(temmed_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TemMed benchmark folder built from `temmed_data` with the defaults."""
    out = tmp_path_factory.mktemp("temmed") / "bench"
    assert main(build_args(temmed_data, out)) == 0
    return out
