"""One small phantom benchmark of every family, built through the CLI as a user would (seconds each).

`build_families(root)` writes phantoms and builds ``mi-cxr``, ``temmed``, ``eltlm``, ``skillqa`` and
``3d-rad`` under ``root``; the session fixture `family_benches` does it once per session (treat the folders
as read-only). 3D-RAD volumes are prepared into a volume cache under ``root`` (``MEDTEMPORAL_VOLUME_CACHE``
is set for the session by the fixture).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from medtemporal.cli import main
from medtemporal.phantoms.chexpert_plus import write_chexpert_plus
from medtemporal.phantoms.ct_rate import write_ct_rate
from medtemporal.phantoms.cxr import write_cxr_phantoms
from medtemporal.phantoms.skill_frames import write_skill_phantoms

FAMILIES = ("mi-cxr", "temmed", "eltlm", "skillqa", "3d-rad")


def build_families(root: Path) -> dict[str, Path]:
    """Phantoms and one benchmark folder per family under ``root``; family name → benchmark folder."""
    data, out = root / "data", root / "benchmarks"
    write_cxr_phantoms(data / "cxr", patients=12, seed=0, image_size=64)
    write_chexpert_plus(data / "cxp", patients=40, seed=3, image_size=64)
    write_skill_phantoms(data / "skill", instances=6, seed=0, image_size=64, progress=False)
    write_ct_rate(data / "ct", patients=2, seed=0, shape=(24, 24, 8))
    cxr = ["--mimic-cxr-jpg", str(data / "cxr" / "mimic-cxr-jpg"), "--qba", str(data / "cxr" / "mimic-ext-cxr-qba")]
    commands = {
        "mi-cxr": ["build", "mi-cxr", *cxr],
        "temmed": ["build", "temmed", "--chexpert-plus", str(data / "cxp"), "--test-size", "12", "--vqa-items", "12"],
        "eltlm": ["build", "eltlm", *cxr],
        "skillqa": ["build", "skillqa", "--frames", str(data / "skill")],
        "3d-rad": ["build", "3d-rad", "--ct-rate", str(data / "ct")],
    }
    benches = {}
    for family, command in commands.items():
        benches[family] = out / family
        assert main([*command, "--out", str(benches[family])]) == 0, family
    return benches


@pytest.fixture(scope="session")
def family_benches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every family's phantom benchmark, built once per session."""
    root = tmp_path_factory.mktemp("families")
    os.environ.setdefault("MEDTEMPORAL_VOLUME_CACHE", str(root / "volume-cache"))
    return build_families(root)
