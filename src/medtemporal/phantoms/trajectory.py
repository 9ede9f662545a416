"""Seeded disease trajectories of synthetic chest X-ray patients: the ground truth phantoms render.

A patient is an `Anatomy` (fixed body shape) and a sequence of `Visit` s. At each
visit every abnormality of `ENTITIES` (the MI-CXR paper's Table 10) has an
`EntityState`: present or not, a severity 1-3 when present, and a laterality
for sided findings. Each abnormality follows one `PATTERNS` trajectory chosen
per patient, so that every MI-CXR question type arises: single and double
emergences/resolutions within five visits, emergence-then-resolution and
resolution-then-emergence, persistent presence/absence and monotone
worsening/improvement. Gaps between visits are heavy-tailed like the paper's
Tables 12 and 14 (median about 1.5 days, a few beyond six months).

Laterality is the patient's side (``"right"`` is the image's left on a frontal
view). ``"normal cardiac silhouette"`` is present exactly when
``"cardiomegaly"`` is absent; ``"bony structures intact"`` is absent while a rib
fracture is visible.

>>> truth = simulate_patient(np.random.default_rng(0), 6)
>>> len(truth.visits), sorted(truth.visits[0].states) == sorted(ENTITIES)
(6, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from medtemporal.sources.mimic_qba import ENTITIES

SIDES: Mapping[str, tuple[tuple[str, ...], tuple[float, ...]]] = {
    "pleural effusion": (("right", "left", "bilateral"), (0.4, 0.3, 0.3)),
    "pneumothorax": (("right", "left", "bilateral"), (0.5, 0.45, 0.05)),
    "sub-diaphragmatic air": (("right", "left", "bilateral"), (0.6, 0.2, 0.2)),
    "consolidation": (("right", "left", "bilateral"), (0.45, 0.35, 0.2)),
    "elevated hemidiaphragm": (("right", "left"), (0.6, 0.4)),
    "lung opacity": (("right", "left", "bilateral"), (0.4, 0.35, 0.25)),
    "atelectasis": (("right", "left", "bilateral"), (0.35, 0.35, 0.3)),
    "pulmonary edema": (("bilateral",), (1.0,)),
    "vascular congestion": (("bilateral",), (1.0,)),
}
"""Entities with a laterality: the sides they take and how often."""

UNGRADED: frozenset[str] = frozenset({"bony structures intact", "normal cardiac silhouette"})
"""Entities without a severity."""

SEVERITY_WORDS: tuple[str, ...] = ("mild", "moderate", "severe")
"""Words for severities 1, 2 and 3."""

DEVICES: tuple[str, ...] = ("endotracheal tube", "nasogastric tube", "central venous catheter", "pacemaker")

PATTERNS: Mapping[str, tuple[bool, int]] = {
    "absent": (False, 0),
    "present": (True, 0),
    "worsening": (True, 0),
    "improving": (True, 0),
    "emergence": (False, 1),
    "resolution": (True, 1),
    "emergence_resolution": (False, 2),
    "resolution_emergence": (True, 2),
    "double_emergence": (False, 3),
    "double_resolution": (True, 3),
}
"""Trajectory name → (present at the first visit, number of presence transitions)."""

_WEIGHTS: dict[str, float] = {
    "absent": 0.46, "present": 0.09, "worsening": 0.04, "improving": 0.04, "emergence": 0.08,
    "resolution": 0.07, "emergence_resolution": 0.06, "resolution_emergence": 0.06,
    "double_emergence": 0.05, "double_resolution": 0.05,
}
_BONY_WEIGHTS: dict[str, float] = {
    "present": 0.8, "resolution": 0.08, "emergence": 0.06, "emergence_resolution": 0.03,
    "resolution_emergence": 0.03,
}

_GAP_BINS: tuple[float, ...] = (0.37, 0.31, 0.12, 0.13, 0.07)
"""Share of gaps below 1 day, 1-7, 7-30, 30-180 and 180+ days (paper Table 14)."""


@dataclass(frozen=True)
class EntityState:
    """One abnormality at one visit."""

    present: bool
    severity: int = 0
    """0 when absent or ungraded, else 1 (mild) to 3 (severe)."""
    laterality: str | None = None
    """``left``, ``right`` or ``bilateral`` for sided findings, else None."""

    @property
    def severity_word(self) -> str | None:
        """``mild``/``moderate``/``severe`` or None."""
        return SEVERITY_WORDS[self.severity - 1] if self.severity else None


@dataclass(frozen=True)
class Anatomy:
    """A patient's fixed body shape in image-relative units (0..1); hashable for render caches."""

    center_x: float
    thorax_half_width: float
    diaphragm_y: float
    right_dome_lift: float
    heart_ctr: float
    heart_y: float
    rib_phase: float
    marking_phase: float
    fracture_side: str
    fracture_rib: int


@dataclass(frozen=True)
class Visit:
    """The truth at one visit."""

    days_since_first: float
    states: Mapping[str, EntityState]
    devices: tuple[str, ...] = ()


@dataclass(frozen=True)
class PatientTruth:
    """A simulated patient: anatomy, visits in time order, and the trajectory each entity follows."""

    anatomy: Anatomy
    visits: tuple[Visit, ...]
    patterns: Mapping[str, str] = field(default_factory=dict)


def change_of(prev: EntityState | None, cur: EntityState) -> str | None:
    """The change word a radiologist would annotate from ``prev`` to ``cur``.

    ``new``, ``resolved``, ``worsened``, ``improved`` or ``unchanged``; None at a
    first visit or when absent at both visits.

    >>> change_of(EntityState(False), EntityState(True, 1, "right"))
    'new'
    >>> change_of(EntityState(True, 2), EntityState(True, 1))
    'improved'
    """
    if prev is None or (not prev.present and not cur.present):
        return None
    if not prev.present:
        return "new"
    if not cur.present:
        return "resolved"
    if cur.severity > prev.severity:
        return "worsened"
    if cur.severity < prev.severity:
        return "improved"
    return "unchanged"


def sample_gaps(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` gaps in days between consecutive visits, heavy-tailed as in the paper's Table 14."""
    bins = rng.choice(len(_GAP_BINS), size=n, p=_GAP_BINS)
    u = rng.random(n)
    gaps = np.select(
        [bins == 0, bins == 1, bins == 2, bins == 3],
        [0.04 + 0.96 * u, 1 + 6 * u**3, 7 * (30 / 7) ** u, 30 * 6.0**u],
        180 * (1500 / 180) ** u,
    )
    return gaps.astype(float)


def sample_anatomy(rng: np.random.Generator) -> Anatomy:
    """A random plausible body shape."""
    return Anatomy(
        center_x=float(rng.normal(0.5, 0.008)),
        thorax_half_width=float(rng.uniform(0.37, 0.42)),
        diaphragm_y=float(rng.uniform(0.74, 0.79)),
        right_dome_lift=float(rng.uniform(0.01, 0.03)),
        heart_ctr=float(rng.uniform(0.40, 0.46)),
        heart_y=float(rng.uniform(0.60, 0.63)),
        rib_phase=float(rng.uniform(-0.01, 0.01)),
        marking_phase=float(rng.uniform(0, 2 * np.pi)),
        fracture_side=str(rng.choice(["right", "left"])),
        fracture_rib=int(rng.integers(3, 7)),
    )


def simulate_patient(rng: np.random.Generator, n_visits: int) -> PatientTruth:
    """Simulate one patient's visits: gaps, per-entity trajectories and devices.

    Args:
        rng: The random generator; the same state gives the same patient.
        n_visits: Number of visits (at least 1).

    Returns:
        The patient's truth, visits in time order.
    """
    if n_visits < 1:
        raise ValueError("n_visits must be at least 1")
    anatomy = sample_anatomy(rng)
    days = np.concatenate([[0.0], np.cumsum(sample_gaps(rng, n_visits - 1))])
    patterns: dict[str, str] = {}
    tracks: dict[str, list[EntityState]] = {}
    for entity in ENTITIES:
        if entity == "normal cardiac silhouette":
            continue
        weights = _BONY_WEIGHTS if entity == "bony structures intact" else _WEIGHTS
        pattern = _fit(_pick(rng, weights), n_visits)
        patterns[entity] = pattern
        presence = _presence(rng, pattern, n_visits)
        graded = entity not in UNGRADED
        severity = _severities(rng, presence, pattern) if graded else [0] * n_visits
        side = _pick(rng, dict(zip(*SIDES[entity]))) if entity in SIDES else None
        tracks[entity] = [
            EntityState(on, sev if on else 0, side if on else None) for on, sev in zip(presence, severity)
        ]
    patterns["normal cardiac silhouette"] = "cardiomegaly_complement"
    tracks["normal cardiac silhouette"] = [EntityState(not s.present) for s in tracks["cardiomegaly"]]
    devices = _devices(rng, n_visits)
    visits = tuple(
        Visit(float(days[i]), {e: tracks[e][i] for e in ENTITIES}, devices[i]) for i in range(n_visits)
    )
    return PatientTruth(anatomy, visits, patterns)


def _pick(rng: np.random.Generator, weights: Mapping[str, float]) -> str:
    """One key of ``weights``, drawn with those (normalised) weights."""
    r = rng.random() * sum(weights.values())
    for name, w in weights.items():
        r -= w
        if r < 0:
            return name
    return name


def _fit(pattern: str, n: int) -> str:
    """Fall back to a pattern with fewer transitions when ``n`` visits cannot hold it."""
    start, wanted = PATTERNS[pattern]
    transitions = min(wanted, n - 1)
    if transitions == wanted:
        return pattern
    for name, (s, t) in PATTERNS.items():
        if s == start and t == transitions:
            return name
    return pattern  # pragma: no cover - every (start, transitions) pair exists


def _presence(rng: np.random.Generator, pattern: str, n: int) -> list[bool]:
    start, m = PATTERNS[pattern]
    if m == 0:
        return [start] * n
    if n >= 5 and rng.random() < 0.85:  # all transitions inside one five-visit window
        first = int(rng.integers(1, n - 3))
        candidates = np.arange(first, first + 4)
    else:
        candidates = np.arange(1, n)
    flips = set(rng.choice(candidates, size=m, replace=False).tolist())
    state, out = start, []
    for i in range(n):
        if i in flips:
            state = not state
        out.append(state)
    return out


def _severities(rng: np.random.Generator, presence: list[bool], pattern: str) -> list[int]:
    out: list[int] = []
    n = len(presence)
    if pattern in ("worsening", "improving"):
        up = pattern == "worsening"
        steps = rng.random(n) < 0.45
        steps[0] = False
        if n > 1 and not steps.any():
            steps[int(rng.integers(1, n))] = True
        level = 1 if up else 3
        for step in steps:
            if step:
                level = min(3, level + 1) if up else max(1, level - 1)
            out.append(level)
        return out
    level = 0
    for i, on in enumerate(presence):
        if not on:
            level = 0
        elif i == 0 or not presence[i - 1]:
            level = int(_pick(rng, {"1": 0.45, "2": 0.35, "3": 0.2}))
        else:
            level = min(3, max(1, level + int(_pick(rng, {"-1": 0.2, "0": 0.6, "1": 0.2}))))
        out.append(level)
    return out


def _devices(rng: np.random.Generator, n: int) -> list[tuple[str, ...]]:
    chance = {"endotracheal tube": 0.15, "nasogastric tube": 0.15, "central venous catheter": 0.25, "pacemaker": 0.08}
    runs = {}
    for device in DEVICES:
        if rng.random() < chance[device]:
            a = int(rng.integers(0, n))
            runs[device] = (0, n) if device == "pacemaker" else (a, int(rng.integers(a + 1, n + 1)))
    return [tuple(d for d in DEVICES if d in runs and runs[d][0] <= i < runs[d][1]) for i in range(n)]
