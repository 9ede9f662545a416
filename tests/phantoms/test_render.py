"""The phantom renderer shows each finding where a reader looks, on its side, growing with severity."""

from __future__ import annotations

import numpy as np
import pytest

from medtemporal.phantoms.render import region_boxes, render_cxr
from medtemporal.phantoms.trajectory import ENTITIES, EntityState, sample_anatomy

SIZE = 256
ANATOMY = sample_anatomy(np.random.default_rng(3))
BOXES = region_boxes(ANATOMY, SIZE)
NORMAL = {e: EntityState(e in ("bony structures intact", "normal cardiac silhouette")) for e in ENTITIES}


def render(view: str = "PA", seed: int = 0, devices=(), **changes: EntityState) -> np.ndarray:
    states = {**NORMAL, **{k.replace("_", " "): v for k, v in changes.items()}}
    image = render_cxr(states, view, SIZE, np.random.default_rng(seed), anatomy=ANATOMY, devices=devices)
    assert image.mode == "L" and image.size == (SIZE, SIZE)
    return np.asarray(image, dtype=float)


def region(img: np.ndarray, name: str) -> np.ndarray:
    x1, y1, x2, y2 = (int(round(v)) for v in BOXES[name])
    return img[max(y1, 0) : y2, max(x1, 0) : x2]


BASE = render()


@pytest.mark.parametrize(
    "entity, where, other",
    [
        ("pleural effusion", "right costophrenic angle", "left costophrenic angle"),
        ("pneumothorax", "right apical zone", "left apical zone"),
        ("consolidation", "right lower lung zone", "left lower lung zone"),
        ("lung opacity", "right mid lung zone", "left mid lung zone"),
        ("atelectasis", "right lower lung zone", "left lower lung zone"),
        ("sub-diaphragmatic air", "right hemidiaphragm", "left hemidiaphragm"),
        ("elevated hemidiaphragm", "right hemidiaphragm", "left hemidiaphragm"),
        ("cardiomegaly", "heart", None),
        ("pulmonary edema", "hilar structures", None),
        ("vascular congestion", "hilar structures", None),
    ],
)
def test_a_right_sided_finding_changes_the_right_side(entity, where, other):
    sided = other is not None
    img = render(**{entity: EntityState(True, 3, "right" if sided else ("bilateral" if "edema" in entity or "congestion" in entity else None))})
    diff = np.abs(img - BASE)
    assert region(diff, where).mean() > 4, entity
    if sided:  # the patient's right is the image's left
        assert region(diff, where).mean() > 5 * region(diff, other).mean() + 1, entity


def test_a_rib_fracture_shows_when_bony_structures_are_not_intact():
    diff = np.abs(render(bony_structures_intact=EntityState(False)) - BASE)
    assert diff.max() > 10 and (diff > 5).sum() > 10


def test_effusion_rises_with_severity_and_pneumothorax_rim_grows():
    effusion = [region(render(pleural_effusion=EntityState(True, k, "left")), "left costophrenic angle").mean() for k in (1, 2, 3)]
    baseline = region(BASE, "left costophrenic angle").mean()
    assert baseline < effusion[0] < effusion[1] < effusion[2]
    dark = [(region(render(pneumothorax=EntityState(True, k, "left")), "left lung") < 25).sum() for k in (1, 2, 3)]
    assert (region(BASE, "left lung") < 25).sum() < dark[0] < dark[1] < dark[2]


def test_heart_width_grows_with_cardiomegaly():
    row = int(ANATOMY.heart_y * SIZE)
    lo, hi = int((ANATOMY.center_x - 0.33) * SIZE), int((ANATOMY.center_x + 0.33) * SIZE)

    def width(grade: int) -> int:
        img = render(cardiomegaly=EntityState(grade > 0, grade))
        return int((img[row - 2 : row + 3, lo:hi].mean(axis=0) > 110).sum())

    widths = [width(k) for k in range(4)]
    assert widths == sorted(widths) and len(set(widths)) == 4 and widths[3] > 1.3 * widths[0]


def test_same_random_state_gives_identical_pixels_and_noise_varies():
    assert np.array_equal(render(seed=7), render(seed=7))
    assert not np.array_equal(render(seed=7), render(seed=8))


def test_lateral_view_shows_effusion_and_devices_show_on_frontal():
    lateral = render("LATERAL")
    wet = render("LATERAL", pleural_effusion=EntityState(True, 3, "bilateral"))
    y, x = int(0.68 * SIZE), int(0.7 * SIZE)
    assert wet[y - 5 : y + 5, x - 5 : x + 5].mean() > lateral[y - 5 : y + 5, x - 5 : x + 5].mean() + 40
    tube = render(devices=("endotracheal tube",))
    cx = int(ANATOMY.center_x * SIZE)
    assert tube[int(0.05 * SIZE) : int(0.25 * SIZE), cx - 1 : cx + 2].mean() > BASE[int(0.05 * SIZE) : int(0.25 * SIZE), cx - 1 : cx + 2].mean() + 30
