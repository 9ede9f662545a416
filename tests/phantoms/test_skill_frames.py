"""ClinicalSkillQA phantoms: deterministic, 4 and 6 frames, and each step looks different."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import numpy as np
import pytest

from medtemporal.errors import InvalidInputError
from medtemporal.phantoms.skill_frames import PROCEDURES, draw_frame, write_skill_phantoms


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(path.relative_to(root).as_posix().encode() + path.read_bytes())
    return h.hexdigest()


def test_same_seed_same_bytes_and_both_frame_counts(tmp_path: Path) -> None:
    a = write_skill_phantoms(tmp_path / "a", instances=8, seed=5, image_size=48, progress=False)
    b = write_skill_phantoms(tmp_path / "b", instances=8, seed=5, image_size=48, progress=False)
    assert _digest(a.root) == _digest(b.root)
    counts = {len(list(p.glob("*.jpg"))) for p in a.root.iterdir() if p.is_dir()}
    assert counts == {4, 6}


@pytest.mark.parametrize("procedure", sorted(PROCEDURES))
def test_every_step_draws_a_different_frame(procedure: str) -> None:
    frames = [np.asarray(draw_frame(procedure, s, 96, random.Random(0)), dtype=float) for s in range(6)]
    for i in range(6):
        for j in range(i + 1, 6):
            assert np.abs(frames[i] - frames[j]).mean() > 0.5, (procedure, i, j)


def test_refuses_a_folder_in_use(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep.txt").write_text("mine")
    with pytest.raises(InvalidInputError, match="not an empty folder"):
        write_skill_phantoms(tmp_path / "x", instances=2, progress=False)
    assert (tmp_path / "x" / "keep.txt").read_text() == "mine"
