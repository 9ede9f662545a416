"""ClinicalSkillQA phantoms: key frames of CPR, AED and BMV drawn so each frame shows its step.

Each procedure is six steps in their clinical order (BLS sequences). A frame draws the manikin, the rescuer in the step's
pose, the step's equipment and cue (pads, a lightning bolt, downward arrows
with a depth mark, a rising chest) and a caption naming the action, so the
true order is recoverable from what each frame shows. 6-frame instances
show all six steps, 4-frame instances four of them in order. Frames are
named by identifier in a seeded shuffle, as the organisers sent them, and
written in the layout `medtemporal.sources.skill_frames` reads, with
``phantom_manifest.json`` (the verifiable marker, `medtemporal.provenance`) and ``phantom_truth.jsonl`` (each identifier's step).

>>> PROCEDURES["AED"][4].name
'shock'
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from medtemporal.bounds import IMAGE_MAX, PATIENTS_MAX, check_range, check_seed
from medtemporal.phantoms.out import prepare_out
from medtemporal.provenance import PHANTOM_TRUTH, write_phantom_manifest
from medtemporal.sources.skill_frames import GOLD
from medtemporal.progress import progress_bar

GENERATOR = "medtemporal phantoms skillqa"
FRAME_COUNTS = (4, 6)


@dataclass(frozen=True)
class Step:
    """One step of a procedure: its name, caption and the sentence a rationale says about it."""

    name: str
    caption: str
    sentence: str


PROCEDURES: dict[str, tuple[Step, ...]] = {
    "CPR": (
        Step("responsiveness", "check response", "the rescuer taps the shoulders to check responsiveness"),
        Step("call_for_help", "call for help", "the rescuer raises an arm and calls for help"),
        Step("hand_position", "hands on sternum", "both hands are placed on the lower half of the sternum"),
        Step("compressions", "compress 5-6 cm", "chest compressions are delivered to a depth of 5-6 cm"),
        Step("head_tilt", "head tilt", "the airway is opened with a head tilt and chin lift"),
        Step("rescue_breaths", "rescue breaths", "rescue breaths are given after the compressions"),
    ),
    "AED": (
        Step("device_closed", "AED closed", "the AED arrives closed beside the patient"),
        Step("power_on", "AED on", "the AED is opened and switched on"),
        Step("pads_on", "pads on chest", "the pads are placed on the bare chest"),
        Step("analysing", "hands off: analysing", "everyone stands clear while the AED analyses the rhythm"),
        Step("shock", "shock", "the shock is delivered with everyone clear"),
        Step("compressions_again", "resume compressions", "compressions resume immediately after the shock"),
    ),
    "BMV": (
        Step("equipment", "bag-mask ready", "the bag-valve-mask is prepared beside the head"),
        Step("head_tilt", "head tilt", "the head is tilted back to open the airway"),
        Step("mask_on", "mask over face", "the mask is placed over the nose and mouth"),
        Step("mask_seal", "C-E grip seal", "a C-E grip seals the mask on the face"),
        Step("bag_squeeze", "squeeze bag", "the bag is squeezed to ventilate"),
        Step("chest_rise", "chest rises", "the chest rises with the ventilation"),
    ),
}
"""Procedure → its six steps in order."""
NAMES = {"CPR": "cardiopulmonary resuscitation", "AED": "automated external defibrillator use",
         "BMV": "bag-mask ventilation"}


@dataclass(frozen=True)
class SkillPhantoms:
    """What `write_skill_phantoms` wrote."""

    root: Path
    instances: int
    frames: int
    truth: Path


def write_skill_phantoms(out: str | Path, *, instances: int, seed: int = 0, image_size: int = 224,
                         progress: bool = True, overwrite: bool = False) -> SkillPhantoms:
    """Write ``instances`` frame sets (procedures and 4/6 frames mixed) under ``out``.

    Args:
        out: Output folder; must not exist or be empty (or hold frame sets to replace, with ``overwrite``).
        instances: Number of instances (at least 1).
        seed: Seed of procedures, frame counts, steps, identifiers and drawing jitter.
        image_size: Frame width in pixels (height is 3/4 of it; at least 48).
        progress: Show a progress bar.
        overwrite: Replace the frame sets already in ``out``.

    Raises:
        InvalidInputError: a bad count or size, or a non-empty ``out``.
    """
    out = Path(out)
    check_range(instances, "--instances", 1, PATIENTS_MAX)
    check_range(image_size, "--image-size", 48, IMAGE_MAX)
    check_seed(seed)
    prepare_out(out, overwrite, GENERATOR)
    rng = random.Random(seed)
    gold, truth = [], []
    frames = 0
    for k in progress_bar(range(instances), desc="skill phantoms", unit="instance", disable=not progress):
        procedure = sorted(PROCEDURES)[k % len(PROCEDURES)] if k < len(PROCEDURES) else rng.choice(sorted(PROCEDURES))
        n = FRAME_COUNTS[rng.random() < 0.5]
        steps = sorted(rng.sample(range(6), n))
        letters = [chr(ord("A") + i) for i in range(n)]
        shown = rng.sample(letters, n)  # shown[t] names the t-th step's frame
        instance = f"{procedure.lower()}_{k:04d}"
        folder = out / instance
        folder.mkdir()
        jitter = random.Random(f"{seed}:{instance}")
        for t, s in enumerate(steps):
            draw_frame(procedure, s, image_size, jitter).save(folder / f"{shown[t]}.jpg", quality=90)
            frames += 1
        gold.append({"id": instance, "procedure": procedure, "order": shown,
                     "rationale": rationale(procedure, [steps[t] for t in range(n)], shown),
                     "video": f"video_{k // 2:04d}"})
        truth.append({"id": instance, "procedure": procedure,
                      "steps": {shown[t]: PROCEDURES[procedure][s].name for t, s in enumerate(steps)}})
    _write_jsonl(out / GOLD, gold)
    _write_jsonl(out / PHANTOM_TRUTH, truth)
    write_phantom_manifest(out, GENERATOR, seed=seed, instances=instances, image_size=image_size)
    return SkillPhantoms(out, instances, frames, out / PHANTOM_TRUTH)


def rationale(procedure: str, steps: list[int], shown: list[str]) -> str:
    """The templated reference rationale: a summary sentence, then one sentence per frame in order."""
    parts = [f"The frames follow {NAMES[procedure]} from its first step to its last."]
    for t, (s, letter) in enumerate(zip(steps, shown)):
        lead = "First" if t == 0 else "Finally" if t == len(steps) - 1 else "Next"
        parts.append(f"{lead}, in Frame {letter}, {PROCEDURES[procedure][s].sentence}.")
    return " ".join(parts)


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


# --- drawing -------------------------------------------------------------------------------

SKIN, RESCUER, PAD, DEVICE, MASK = (233, 196, 160), (40, 90, 170), (250, 250, 250), (230, 200, 40), (120, 200, 230)


def draw_frame(procedure: str, step: int, width: int, rng: random.Random) -> Image.Image:
    """One key frame: floor, manikin, rescuer in the step's pose, equipment, cue and caption."""
    h = width * 3 // 4
    shade = rng.randint(-12, 12)
    im = Image.new("RGB", (width, h), (200 + shade, 205 + shade, 195 + shade))
    d = ImageDraw.Draw(im)
    u = width / 100  # drawing unit
    dx = rng.uniform(-2, 2) * u
    d.rectangle([0, 0.62 * h, width, h], fill=(150 + shade, 140 + shade, 120 + shade))
    # manikin lying on the floor, head to the left
    chest_rise = procedure == "BMV" and step == 5
    torso = [22 * u + dx, 46 * u - (3 * u if chest_rise else 0), 70 * u + dx, 58 * u]
    d.ellipse([10 * u + dx, 46 * u, 22 * u + dx, 58 * u], fill=SKIN, outline=(90, 70, 50))
    d.rectangle(torso, fill=(170, 170, 185), outline=(90, 90, 100))
    d.rectangle([70 * u + dx, 49 * u, 92 * u + dx, 56 * u], fill=(80, 80, 120))
    _PAINTERS[procedure](d, step, u, dx)
    if chest_rise:
        _arrow(d, 46 * u + dx, 42 * u, 46 * u + dx, 30 * u, u, (20, 140, 40))
    _caption(d, PROCEDURES[procedure][step].caption, width, h)
    return im


def _rescuer(d: ImageDraw.ImageDraw, x: float, u: float, *, arm: str = "down") -> None:
    """A kneeling rescuer behind the manikin at ``x``: head, body, and arms ("down", "up", "chest", "head")."""
    d.ellipse([x - 5 * u, 8 * u, x + 5 * u, 18 * u], fill=SKIN, outline=(90, 70, 50))
    d.rectangle([x - 6 * u, 18 * u, x + 6 * u, 40 * u], fill=RESCUER)
    ends = {"down": (x, 46 * u), "up": (x + 4 * u, 0), "chest": (46 * u, 47 * u), "head": (16 * u, 46 * u),
            "clear": (x + 14 * u, 16 * u)}
    ex, ey = ends[arm]
    d.line([x, 22 * u, ex, ey], fill=RESCUER, width=max(2, int(2 * u)))


def _arrow(d: ImageDraw.ImageDraw, x0: float, y0: float, x1: float, y1: float, u: float, colour: tuple) -> None:
    d.line([x0, y0, x1, y1], fill=colour, width=max(2, int(1.5 * u)))
    sign = 1 if y1 > y0 else -1
    d.polygon([(x1 - 3 * u, y1 - sign * 4 * u), (x1 + 3 * u, y1 - sign * 4 * u), (x1, y1)], fill=colour)


def _paint_cpr(d: ImageDraw.ImageDraw, step: int, u: float, dx: float) -> None:
    x = 46 * u + dx
    if step == 0:
        _rescuer(d, x, u, arm="head")
        d.text((x + 8 * u, 6 * u), "?", fill=(0, 0, 0))
    elif step == 1:
        _rescuer(d, x, u, arm="up")
        d.rectangle([x + 8 * u, 2 * u, x + 12 * u, 9 * u], fill=(30, 30, 30))  # phone
    elif step in (2, 3):
        _rescuer(d, x, u, arm="chest")
        d.ellipse([42 * u + dx, 44 * u, 50 * u + dx, 50 * u], fill=SKIN)
        if step == 3:
            _arrow(d, 58 * u + dx, 26 * u, 58 * u + dx, 44 * u, u, (200, 30, 30))
            d.line([62 * u + dx, 44 * u, 66 * u + dx, 44 * u], fill=(200, 30, 30), width=2)
    elif step == 4:
        _rescuer(d, 20 * u + dx, u, arm="head")
        _arrow(d, 8 * u + dx, 52 * u, 8 * u + dx, 40 * u, u, (20, 120, 40))
    else:
        _rescuer(d, 20 * u + dx, u, arm="head")
        for k in range(3):
            d.arc([8 * u + dx + 3 * k * u, 36 * u, 14 * u + dx + 3 * k * u, 44 * u], 200, 340, fill=(60, 120, 220), width=2)


def _paint_aed(d: ImageDraw.ImageDraw, step: int, u: float, dx: float) -> None:
    x = 46 * u + dx
    box = [74 * u + dx, 34 * u, 92 * u + dx, 46 * u]
    if step == 0:
        _rescuer(d, x, u)
        d.rectangle(box, fill=DEVICE, outline=(60, 60, 0))
        return
    d.rectangle(box, fill=DEVICE, outline=(60, 60, 0))
    d.rectangle([76 * u + dx, 36 * u, 84 * u + dx, 42 * u], fill=(20, 40, 20))
    d.ellipse([87 * u + dx, 37 * u, 90 * u + dx, 40 * u], fill=(40, 220, 40))
    if step >= 2:
        for px in (32 * u + dx, 56 * u + dx):
            d.rectangle([px, 46 * u, px + 7 * u, 52 * u], fill=PAD, outline=(60, 60, 60))
            d.line([px + 3 * u, 49 * u, 80 * u + dx, 44 * u], fill=(60, 60, 60), width=1)
    if step in (1, 2):
        _rescuer(d, x, u, arm="chest" if step == 2 else "down")
    elif step in (3, 4):
        _rescuer(d, x - 4 * u, u, arm="clear")
        if step == 3:
            d.line([76 * u + dx, 39 * u, 79 * u + dx, 37 * u, 81 * u + dx, 41 * u, 84 * u + dx, 38 * u],
                   fill=(40, 220, 40), width=1)
        else:
            d.polygon([(62 * u + dx, 10 * u), (54 * u + dx, 26 * u), (60 * u + dx, 26 * u), (52 * u + dx, 40 * u),
                       (68 * u + dx, 22 * u), (61 * u + dx, 22 * u), (68 * u + dx, 10 * u)], fill=(250, 210, 0),
                      outline=(120, 90, 0))
    elif step == 5:
        _rescuer(d, x, u, arm="chest")
        _arrow(d, 58 * u + dx, 26 * u, 58 * u + dx, 44 * u, u, (200, 30, 30))


def _paint_bmv(d: ImageDraw.ImageDraw, step: int, u: float, dx: float) -> None:
    x = 14 * u + dx
    bag = [2 * u + dx, 30 * u, 12 * u + dx, 40 * u]
    if step == 0:
        _rescuer(d, 46 * u + dx, u)
        d.ellipse([26 * u + dx, 58 * u, 40 * u + dx, 66 * u], fill=MASK, outline=(40, 90, 120))
        return
    _rescuer(d, x, u, arm="head")
    if step == 1:
        _arrow(d, 6 * u + dx, 54 * u, 6 * u + dx, 42 * u, u, (20, 120, 40))
        return
    d.ellipse([12 * u + dx, 42 * u, 22 * u + dx, 48 * u], fill=MASK, outline=(40, 90, 120))
    if step >= 3:
        d.text((12 * u + dx, 36 * u), "C-E", fill=(0, 0, 0))
    if step >= 4:
        d.ellipse(bag, fill=MASK, outline=(40, 90, 120))
        d.line([12 * u + dx, 35 * u, 16 * u + dx, 42 * u], fill=(40, 90, 120), width=2)
    if step == 4:
        _arrow(d, 7 * u + dx, 22 * u, 7 * u + dx, 30 * u, u, (60, 60, 200))


_PAINTERS = {"CPR": _paint_cpr, "AED": _paint_aed, "BMV": _paint_bmv}


def _caption(d: ImageDraw.ImageDraw, text: str, width: int, h: int) -> None:
    """The action's caption on a dark bar at the bottom of the frame."""
    size = max(8, width // 18)
    try:
        font = ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1: a fixed bitmap font
        font = ImageFont.load_default()
    d.rectangle([0, h - size - 6, width, h], fill=(30, 30, 30))
    d.text((4, h - size - 4), text, fill=(255, 255, 255), font=font)
