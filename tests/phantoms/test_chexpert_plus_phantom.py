"""Phantom CheXpert Plus: the released layout, determinism, and reports that agree with the truth."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from medtemporal.benchmarks.temmed.text import find_statements
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.phantoms.chexpert_plus import write_chexpert_plus
from medtemporal.phantoms.trajectory import ENTITIES
from medtemporal.provenance import licence_of
from medtemporal.sources.chexpert_plus import load_timelines, read_csv, resolve_image

DIRECTION = {"unchanged": "unchanged", "worsened": "worsened", "improved": "improved", "resolved": "improved"}


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode() + p.read_bytes())
    return h.hexdigest()


def test_same_seed_same_bytes_and_cli(tmp_path: Path) -> None:
    a = write_chexpert_plus(tmp_path / "a", patients=6, seed=5, image_size=48)
    assert main(["phantoms", "chexpert-plus", "--patients", "6", "--seed", "5", "--image-size", "48",
                 "--out", str(tmp_path / "b")]) == 0
    assert _digest(a.root) == _digest(tmp_path / "b")
    c = write_chexpert_plus(tmp_path / "c", patients=6, seed=6, image_size=48)
    assert _digest(a.root) != _digest(c.root)
    with pytest.raises(InvalidInputError, match="not an empty folder"):
        write_chexpert_plus(a.root, patients=1)


def test_layout_is_the_released_one_and_every_image_resolves(tmp_path: Path) -> None:
    made = write_chexpert_plus(tmp_path / "p", patients=8, seed=0, image_size=48)
    df = read_csv(made.csv)
    assert df["path_to_image"].str.endswith(".jpg").all()
    assert licence_of(made.root) == "synthetic"
    timelines = load_timelines(made.root)
    assert sum(len(t.studies) for t in timelines) == made.studies
    for t in timelines:
        for s in t.studies:
            assert resolve_image(made.root, s.frontal).startswith("PNG/") and s.order is not None


def test_every_change_statement_agrees_with_the_trajectory(tmp_path: Path) -> None:
    made = write_chexpert_plus(tmp_path / "p", patients=40, seed=1, image_size=32)
    checked = 0
    for line in made.truth.read_text().splitlines():
        study = json.loads(line)
        for sent in study["sentences"]:
            if sent["entity"] is None or sent["change"] not in DIRECTION:
                continue
            for st in find_statements(sent["text"]):
                if st.direction is not None:
                    assert st.direction == DIRECTION[sent["change"]], sent
                    checked += 1
            assert sent["entity"] in ENTITIES
    assert checked > 50
