"""Synthetic chest radiographs that show a visit's `EntityState` s, with numpy and PIL only.

A frontal image (``PA``/``AP``) has a body, two lungs with vessel markings,
mediastinum, heart, spine, clavicles, posterior ribs and two diaphragm domes.
Findings change it where a reader would look, growing with severity and on
the annotated side (the patient's right is the image's left):

* pleural effusion: fluid filling the costophrenic angle with a meniscus;
* pneumothorax: a dark rim without lung markings at the apex and lateral wall,
  bounded by a thin visceral pleural line;
* cardiomegaly: a wider cardiac silhouette (cardiothoracic ratio +0.07 per grade);
  ``normal cardiac silhouette`` is its absence;
* pulmonary edema: perihilar haze (and Kerley lines from moderate on);
* vascular congestion: prominent upper-zone vessels and hila;
* consolidation: dense lower-zone patches; lung opacity: a fainter mid-zone patch;
* atelectasis: linear bands above the diaphragm;
* sub-diaphragmatic air: a dark crescent under the hemidiaphragm;
* elevated hemidiaphragm: that dome raised;
* ``bony structures intact`` absent: a rib with a fracture gap;
* devices: bright tube and line shadows.

The lateral view is simpler (lungs, heart, spine, effusion in the posterior
sulcus, haze and patches). Per-patient layers are cached, so a 320-pixel image
takes a few milliseconds.

>>> from medtemporal.phantoms.trajectory import simulate_patient
>>> rng = np.random.default_rng(0)
>>> truth = simulate_patient(rng, 3)
>>> render_cxr(truth.visits[0].states, "PA", 128, rng, anatomy=truth.anatomy).size
(128, 128)
"""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping, Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from medtemporal.phantoms.trajectory import Anatomy, EntityState

FRONTAL_VIEWS = ("PA", "AP")
LATERAL_VIEWS = ("LATERAL", "LL")

_BG, _SOFT, _MEDIASTINUM, _HEART, _ABDOMEN, _LUNG, _FLUID = 0.04, 0.40, 0.60, 0.64, 0.55, 0.15, 0.58

_NOMINAL = Anatomy(0.5, 0.4, 0.76, 0.02, 0.43, 0.615, 0.0, 1.0, "right", 4)


@lru_cache(maxsize=4)
def _grid(size: int) -> tuple[np.ndarray, np.ndarray]:
    c = (np.arange(size, dtype=np.float32) + 0.5) / size
    return c[None, :], c[:, None]


class _Frontal:
    """Geometry of one frontal image: lung ellipses, domes and heart for an anatomy and a state."""

    def __init__(self, a: Anatomy, states: Mapping[str, EntityState]) -> None:
        self.cx, self.tw = a.center_x, a.thorax_half_width
        self.lung = {
            "right": (self.cx - 0.47 * self.tw, 0.46, 0.39 * self.tw, 0.34),
            "left": (self.cx + 0.48 * self.tw, 0.47, 0.38 * self.tw, 0.34),
        }
        self.dome_base = {"right": a.diaphragm_y - a.right_dome_lift, "left": a.diaphragm_y}
        elevated = states.get("elevated hemidiaphragm")
        if elevated is not None and elevated.present:
            for side in _sides(elevated.laterality):
                self.dome_base[side] -= 0.04 * max(elevated.severity, 1)
        cardio = states.get("cardiomegaly")
        grade = cardio.severity if cardio is not None and cardio.present else 0
        self.heart_rx = (a.heart_ctr + 0.07 * grade) * self.tw
        self.heart_c = (self.cx + 0.3 * self.heart_rx, a.heart_y)
        self.heart_ry = 0.14 + 0.4 * (self.heart_rx - 0.17)

    def lateral_u(self, side: str, x: np.ndarray) -> np.ndarray:
        """-1 at the medial and +1 at the lateral edge of ``side`` 's lung."""
        lx, _, rx, _ = self.lung[side]
        return (lx - x) / rx if side == "right" else (x - lx) / rx

    def dome(self, side: str, x: np.ndarray) -> np.ndarray:
        """The y of the diaphragm under ``side`` 's lung."""
        lx, _, rx, _ = self.lung[side]
        u = np.clip((x - lx) / rx, -1.0, 1.0)
        return self.dome_base[side] - 0.065 * (1 - u**2)

    def ellipse(self, side: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        lx, ly, rx, ry = self.lung[side]
        return ((x - lx) / rx) ** 2 + ((y - ly) / ry) ** 2

    def lung_mask(self, side: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return (self.ellipse(side, x, y) < 1) & (y < self.dome(side, x)) & (np.abs(x - self.cx) > 0.045)

    def heart_mask(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        hx, hy = self.heart_c
        inside = ((x - hx) / self.heart_rx) ** 2 + ((y - hy) / self.heart_ry) ** 2 < 1
        return inside & (y < self.dome("left", x) + 0.01)


def _sides(laterality: str | None) -> tuple[str, ...]:
    if laterality == "bilateral":
        return ("right", "left")
    return (laterality,) if laterality in ("right", "left") else ("right",)


def _gauss(x: np.ndarray, y: np.ndarray, cx: float, cy: float, sx: float, sy: float) -> np.ndarray:
    return np.exp(-(((x - cx) / sx) ** 2 + ((y - cy) / sy) ** 2) / 2)


def _blend(img: np.ndarray, alpha: np.ndarray, target: float) -> None:
    """Move ``img`` towards ``target`` by ``alpha`` (0..1), in place."""
    img += np.clip(alpha, 0, 1) * (target - img)


class _Box:
    """A rectangle of the image in relative units, as row and column slices."""

    def __init__(self, size: int, x0: float, x1: float, y0: float, y1: float) -> None:
        self.r = slice(max(0, int(y0 * size)), max(0, min(size, int(np.ceil(y1 * size)) + 1)))
        self.c = slice(max(0, int(x0 * size)), max(0, min(size, int(np.ceil(x1 * size)) + 1)))

    def xy(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return x[:, self.c], y[self.r, :]

    def __call__(self, arr: np.ndarray) -> np.ndarray:
        return arr[self.r, self.c]


def _segment(x: np.ndarray, y: np.ndarray, p: tuple[float, float], q: tuple[float, float]) -> np.ndarray:
    """Distance from every pixel to the segment p-q."""
    px, py = p
    dx, dy = q[0] - px, q[1] - py
    t = np.clip(((x - px) * dx + (y - py) * dy) / (dx * dx + dy * dy), 0, 1)
    return np.hypot(x - px - t * dx, y - py - t * dy)


@lru_cache(maxsize=32)
def _static_layers(a: Anatomy, size: int) -> dict[str, np.ndarray]:
    """Per-patient layers that do not change between visits: body, markings and bones."""
    x, y = _grid(size)
    geo = _Frontal(a, {})
    markings = np.zeros((size, size), np.float32)
    for sign in (-1, 1):
        hx, hy = a.center_x + sign * 0.085, 0.47
        r = np.hypot(x - hx, y - hy)
        theta = np.arctan2(y - hy, (x - hx) * sign)
        streak = (0.5 + 0.5 * np.cos(13 * theta + a.marking_phase + 9 * r)) ** 8
        markings += (streak * np.exp(-r / 0.22) * (r > 0.02)).astype(np.float32)
    ribs = np.zeros((size, size), np.float32)
    fracture = np.zeros((size, size), np.float32)
    for side, sign in (("right", -1), ("left", 1)):
        lx, _, rx, _ = geo.lung[side]
        xs = a.center_x + sign * 0.04
        on_side = ((x - xs) * sign > 0) & (np.abs(x - lx) < rx + 0.03)
        for i in range(9):
            yi = 0.15 + 0.066 * i + a.rib_phase + 1.1 * (x - xs) ** 2 - 0.25 * np.abs(x - xs) * (i / 9)
            band = (np.exp(-(((y - yi) / 0.009) ** 2)) * on_side).astype(np.float32)
            ribs += band
            if side == a.fracture_side and i == a.fracture_rib:
                xf = lx + sign * 0.55 * rx
                gap = np.abs(x - xf) < 0.012
                beyond = (x - xf) * sign > 0.012
                shifted = np.exp(-(((y - yi - 0.022) / 0.009) ** 2)) * on_side
                fracture = (-band * gap + (shifted - band) * beyond).astype(np.float32)
    bones = np.zeros((size, size), np.float32)
    for sign in (-1, 1):
        d = _segment(x, y, (a.center_x + sign * 0.06, 0.17), (a.center_x + sign * 0.31, 0.115))
        bones += np.exp(-((d / 0.011) ** 2)).astype(np.float32)
    spine = (np.abs(x - a.center_x) < 0.028) * (0.6 + 0.4 * np.cos(2 * np.pi * 15 * y) ** 2)
    bones += (0.5 * spine).astype(np.float32)
    body = ((np.abs(x - a.center_x) / (a.thorax_half_width + 0.08)) ** 4 + (np.abs(y - 0.62) / 0.64) ** 4 < 1)
    body = body.astype(np.float32)
    return {
        "markings": markings,
        "bones": body * (0.08 * ribs + 0.16 * bones),
        "fracture": body * 0.08 * fracture,
        "body": body,
    }


def _frontal(states: Mapping[str, EntityState], a: Anatomy, size: int) -> np.ndarray:
    x, y = _grid(size)
    geo = _Frontal(a, states)
    layers = _static_layers(a, size)
    on = {e: s for e, s in states.items() if s.present}
    body = layers["body"] > 0
    img = np.where(body, _SOFT, _BG).astype(np.float32)
    img[body & (np.abs(x - a.center_x) < 0.045 + 0.06 * np.clip(y - 0.1, 0, 0.5)) & (y > 0.06)] = _MEDIASTINUM
    lungs = {side: geo.lung_mask(side, x, y) for side in ("right", "left")}
    lung_any = lungs["right"] | lungs["left"]

    markings = layers["markings"]
    if "vascular congestion" in on:
        upper = np.clip((0.52 - y) / 0.2, 0, 1)
        markings = markings * (1 + 0.5 * on["vascular congestion"].severity * upper)
    aerated = lung_any.copy()
    if "pneumothorax" in on:
        s = on["pneumothorax"]
        f = 1 - (0.08 + 0.07 * s.severity)
        for side in _sides(s.laterality):
            lx, ly, rx, ry = geo.lung[side]
            med = -1 if side == "left" else 1
            ccx, ccy = lx + med * rx * (1 - f) * 0.9, ly + ry * (1 - f) * 0.7
            e = ((x - ccx) / (rx * f)) ** 2 + ((y - ccy) / (ry * f)) ** 2
            aerated &= ~(lungs[side] & (e > 1))
            img[lungs[side] & (e > 1)] = 0.07
            img[lungs[side] & (np.abs(e - 1) < 0.05)] = 0.38
    img = np.where(aerated, _LUNG + 0.11 * markings, img)
    img[geo.heart_mask(x, y)] = _HEART
    img[body & (y > np.where(x < a.center_x, geo.dome("right", x), geo.dome("left", x)))] = _ABDOMEN

    if "sub-diaphragmatic air" in on:
        s = on["sub-diaphragmatic air"]
        for side in _sides(s.laterality):
            lx, _, rx, _ = geo.lung[side]
            box = _Box(size, lx - rx, lx + rx, geo.dome_base[side] - 0.08, geo.dome_base[side] + 0.05)
            bx, by = box.xy(x, y)
            u = np.clip(geo.lateral_u(side, bx), -1, 1)
            top = geo.dome(side, bx) + 0.006
            crescent = (by > top) & (by < top + (0.008 + 0.008 * s.severity) * (1 - u**2)) & (np.abs(u) < 0.85)
            box(img)[crescent & box(body)] = 0.03
    if "pulmonary edema" in on:
        k = on["pulmonary edema"].severity
        for sign in (-1, 1):
            g = _gauss(x, y, a.center_x + sign * 0.1, 0.48, 0.07 + 0.025 * k, 0.09 + 0.03 * k)
            _blend(img, (0.22 + 0.12 * k) * g * lung_any, 0.5)
        if k >= 2:
            for side in ("right", "left"):
                lx, _, rx, _ = geo.lung[side]
                box = _Box(size, lx - rx, lx + rx, geo.dome_base[side] - 0.2, geo.dome_base[side])
                bx, by = box.xy(x, y)
                u = geo.lateral_u(side, bx)
                for j in range(4):
                    kerley = (np.abs(by - (geo.dome_base[side] - 0.1 - 0.022 * j)) < 0.0035) & (u > 0.62) & (u < 0.95)
                    _blend(box(img), 0.55 * kerley * box(lungs[side]), 0.55)
    if "vascular congestion" in on:
        k = on["vascular congestion"].severity
        box = _Box(size, a.center_x - 0.25, a.center_x + 0.25, 0.3, 0.65)
        bx, by = box.xy(x, y)
        for sign in (-1, 1):
            _blend(box(img), (0.2 + 0.1 * k) * _gauss(bx, by, a.center_x + sign * 0.085, 0.46, 0.03, 0.045), 0.55)
    if "lung opacity" in on:
        s = on["lung opacity"]
        for side in _sides(s.laterality):
            lx, _, rx, _ = geo.lung[side]
            box = _Box(size, lx - rx, lx + rx, 0.12, 0.62)
            bx, by = box.xy(x, y)
            g = _gauss(bx, by, lx, 0.36, 0.05 + 0.02 * s.severity, 0.06 + 0.02 * s.severity)
            _blend(box(img), (0.2 + 0.1 * s.severity) * g * box(lungs[side]), 0.5)
    if "consolidation" in on:
        s = on["consolidation"]
        sigma = 0.026 + 0.014 * s.severity
        for side in _sides(s.laterality):
            lx, _, rx, _ = geo.lung[side]
            base = geo.dome_base[side]
            box = _Box(size, lx - rx, lx + rx, base - 0.2 - 3 * sigma, base)
            bx, by = box.xy(x, y)
            g = _gauss(bx, by, lx + 0.15 * rx, base - 0.14, sigma, sigma)
            g += _gauss(bx, by, lx - 0.25 * rx, base - 0.2, 0.8 * sigma, 0.8 * sigma)
            _blend(box(img), np.clip(1.6 * g, 0, 1) * (0.55 + 0.12 * s.severity) * box(lungs[side]), 0.6)
    if "atelectasis" in on:
        s = on["atelectasis"]
        for side in _sides(s.laterality):
            lx, _, rx, _ = geo.lung[side]
            box = _Box(size, lx - 0.55 * rx, lx + 0.55 * rx, geo.dome_base[side] - 0.25, geo.dome_base[side])
            bx, by = box.xy(x, y)
            for j in range(s.severity):
                yj = geo.dome_base[side] - 0.1 - 0.035 * j + 0.08 * (bx - lx)
                band = np.exp(-(((by - yj) / (0.004 + 0.0015 * s.severity)) ** 2))
                _blend(box(img), 0.7 * band * box(lungs[side]), 0.62)
    if "pleural effusion" in on:
        s = on["pleural effusion"]
        for side in _sides(s.laterality):
            lx, _, rx, _ = geo.lung[side]
            box = _Box(size, lx - 1.05 * rx, lx + 1.05 * rx, geo.dome_base[side] - 0.25, geo.dome_base[side] + 0.02)
            bx, by = box.xy(x, y)
            u = np.clip((geo.lateral_u(side, bx) + 1) / 2, 0, 1)
            level = geo.dome_base[side] - 0.02 - 0.05 * s.severity - (0.03 + 0.01 * s.severity) * u**2
            inside = (geo.ellipse(side, bx, by) < 1.05) & (by < geo.dome(side, bx) + 0.01)
            inside &= np.abs(bx - a.center_x) > 0.04
            _blend(box(img), 0.95 * np.clip((by - level) / 0.02, 0, 1) * inside, _FLUID)

    bones = layers["bones"]
    intact = states.get("bony structures intact")
    if intact is not None and not intact.present:
        bones = bones + layers["fracture"]
    img += bones
    return img


@lru_cache(maxsize=32)
def _lateral_base(a: Anatomy, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-patient lateral view without findings: image, body mask, diaphragm line, lung mask."""
    x, y = _grid(size)
    body = ((x - 0.5) / 0.42) ** 4 + ((y - 0.6) / 0.62) ** 4 < 1
    img = np.where(body, _SOFT, _BG).astype(np.float32)
    dia = a.diaphragm_y - 0.05 * (1 - ((x - 0.5) / 0.32) ** 2)
    lung = (((x - 0.52) / 0.3) ** 2 + ((y - 0.45) / 0.33) ** 2 < 1) & (y < dia)
    r = np.hypot(x - 0.5, y - 0.47)
    vessels = (0.5 + 0.5 * np.cos(11 * np.arctan2(y - 0.47, x - 0.5) + a.marking_phase + 8 * r)) ** 8
    img = np.where(lung, _LUNG + 0.08 * vessels * np.exp(-r / 0.2), img)
    img[body & (y > dia)] = _ABDOMEN
    img[body & (np.abs(x - 0.8) < 0.035) & (np.cos(2 * np.pi * 14 * y) > -0.6)] = 0.7
    return img, body, dia.astype(np.float32), lung


def _lateral(states: Mapping[str, EntityState], a: Anatomy, size: int) -> np.ndarray:
    x, y = _grid(size)
    on = {e: s for e, s in states.items() if s.present}
    base, body, dia, lung = _lateral_base(a, size)
    img = base.copy()
    grade = on["cardiomegaly"].severity if "cardiomegaly" in on else 0
    hr = 0.12 + 0.025 * grade
    img[(((x - 0.36) / hr) ** 2 + ((y - 0.6) / 0.13) ** 2 < 1) & (y < dia + 0.01)] = _HEART
    if "pulmonary edema" in on:
        k = on["pulmonary edema"].severity
        _blend(img, (0.2 + 0.1 * k) * _gauss(x, y, 0.52, 0.48, 0.1, 0.12) * lung, 0.5)
    for entity, cy in (("consolidation", 0.62), ("lung opacity", 0.4)):
        if entity in on:
            k = on[entity].severity
            _blend(img, (0.3 + 0.12 * k) * _gauss(x, y, 0.6, cy, 0.04 + 0.015 * k, 0.04 + 0.015 * k) * lung, 0.58)
    if "pleural effusion" in on:
        k = on["pleural effusion"].severity
        level = a.diaphragm_y - 0.03 - 0.045 * k - 0.12 * np.clip((x - 0.5) / 0.3, 0, 1) ** 2
        _blend(img, np.clip((y - level) / 0.02, 0, 1) * lung * (x > 0.45), _FLUID)
    if "sub-diaphragmatic air" in on:
        k = on["sub-diaphragmatic air"].severity
        img[body & (y > dia + 0.006) & (y < dia + 0.014 + 0.006 * k) & (x < 0.55)] = 0.03
    return img


_DEVICE_PATHS: dict[str, tuple[tuple[float, float], ...]] = {
    "endotracheal tube": ((0.0, 0.0), (0.0, 0.30)),
    "nasogastric tube": ((-0.01, 0.0), (-0.01, 0.55), (0.02, 0.80), (0.12, 0.86)),
    "central venous catheter": ((-0.24, 0.14), (-0.10, 0.20), (-0.035, 0.26), (-0.03, 0.38)),
    "pacemaker": ((0.22, 0.17), (0.10, 0.30), (0.06, 0.52), (0.12, 0.64)),
}


def _draw_devices(image: Image.Image, devices: Sequence[str], a: Anatomy) -> None:
    size = image.size[0]
    draw = ImageDraw.Draw(image)
    width = max(2, size // 150)
    for device in devices:
        path = _DEVICE_PATHS.get(device)
        if path is None:
            continue
        pts = [((a.center_x + px) * size, py * size) for px, py in path]
        draw.line(pts, fill=235, width=width)
        if device == "pacemaker":
            x0, y0 = pts[0]
            draw.rectangle([x0 - 0.03 * size, y0 - 0.02 * size, x0 + 0.03 * size, y0 + 0.02 * size], fill=245)


def render_cxr(
    states: Mapping[str, EntityState],
    view: str,
    size: int,
    rng: np.random.Generator,
    *,
    anatomy: Anatomy | None = None,
    devices: Sequence[str] = (),
) -> Image.Image:
    """Render one grayscale chest radiograph showing ``states``.

    Args:
        states: Entity name → state at this visit (missing entities are absent).
        view: ``PA`` or ``AP`` (frontal) or ``LATERAL``/``LL``.
        size: Width and height in pixels.
        rng: Draws the exposure, noise and a small positioning shift.
        anatomy: The patient's body shape; a nominal one when None.
        devices: Support devices to draw (`trajectory.DEVICES` names).

    Returns:
        An 8-bit grayscale (``L``) image.
    """
    a = anatomy or _NOMINAL
    if view.upper() not in FRONTAL_VIEWS + LATERAL_VIEWS:
        raise ValueError(f"view must be one of {', '.join(FRONTAL_VIEWS + LATERAL_VIEWS)} (got {view!r})")
    frontal = view.upper() in FRONTAL_VIEWS
    img = _frontal(states, a, size) if frontal else _lateral(states, a, size)
    gain = rng.normal(0.93 if view.upper() == "AP" else 1.0, 0.02)
    noise = rng.standard_normal((size, size), dtype=np.float32) * (0.018 if view.upper() == "AP" else 0.012)
    img = img * gain + rng.normal(0, 0.01) + noise
    dy, dx = (int(v) for v in rng.integers(-2, 3, size=2))
    img = np.pad(img, 2, mode="edge")[2 - dy : 2 - dy + size, 2 - dx : 2 - dx + size]
    image = Image.fromarray(np.clip(img * 255, 0, 255).astype(np.uint8), mode="L")
    if frontal:
        _draw_devices(image, devices, a)
    return image.filter(ImageFilter.GaussianBlur(radius=0.6 * size / 320))


def region_boxes(anatomy: Anatomy, size: int) -> dict[str, tuple[float, float, float, float]]:
    """Pixel bounding boxes ``(x1, y1, x2, y2)`` of named regions on a frontal image."""
    geo = _Frontal(anatomy, {})
    boxes: dict[str, tuple[float, float, float, float]] = {}
    for side in ("right", "left"):
        lx, ly, rx, ry = geo.lung[side]
        base = geo.dome_base[side]
        lat = lx - rx if side == "right" else lx + rx
        x1, x2 = sorted((lx - rx, lx + rx))
        boxes[f"{side} lung"] = (x1, ly - ry, x2, base)
        boxes[f"{side} apical zone"] = (x1, ly - ry, x2, ly - ry + 0.16)
        boxes[f"{side} mid lung zone"] = (x1, 0.36, x2, 0.52)
        boxes[f"{side} lower lung zone"] = (x1, 0.52, x2, base)
        xa, xb = sorted((lat, lx))
        boxes[f"{side} costophrenic angle"] = (xa, base - 0.12, xb, base + 0.01)
        boxes[f"{side} hemidiaphragm"] = (x1, base - 0.08, x2, base + 0.03)
    r, l_ = boxes["right lung"], boxes["left lung"]
    boxes["lungs"] = (r[0], min(r[1], l_[1]), l_[2], max(r[3], l_[3]))
    hx, hy = geo.heart_c
    boxes["heart"] = (hx - geo.heart_rx, hy - geo.heart_ry, hx + geo.heart_rx, geo.dome_base["left"])
    boxes["hilar structures"] = (anatomy.center_x - 0.14, 0.38, anatomy.center_x + 0.14, 0.56)
    boxes["mediastinum"] = (anatomy.center_x - 0.08, 0.1, anatomy.center_x + 0.08, 0.5)
    half = anatomy.thorax_half_width
    boxes["bony thorax"] = (anatomy.center_x - half, 0.1, anatomy.center_x + half, 0.8)
    return {k: tuple(round(float(v) * size, 1) for v in box) for k, box in boxes.items()}  # type: ignore[misc]
