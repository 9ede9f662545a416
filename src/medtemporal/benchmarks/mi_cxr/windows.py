"""MI-CXR windows: five contiguous visits and, per abnormality, a complete state track.

The rules are the paper's (appendix A.4, A.5.1):

* a window is five consecutive studies of one patient, stride 1, so a patient
  with T visits gives T - 4 overlapping windows, shared by every task family;
* the study indices must be strictly contiguous: where the source gives an
  explicit `Study.order`, a gap (a study dropped upstream) ends the window;
* a window–abnormality pair is kept only if the abnormality has a *certain*
  present/absent finding at every one of the five visits. Pairs that are never
  annotated, annotated at only some visits, or uncertain at any visit are left
  out and counted.

Each interval between consecutive visits then gets one change type. Presence
decides emergence (absent → present), resolution (present → absent) and
``absent`` (absent at both). When the abnormality is present at both visits
the type comes from the later study's annotated `Finding.changes` (a change
relative to the prior study, as MIMIC-Ext-CXR-QBA annotates it) and, failing
that, from comparing severity words. When neither says anything, or the two
disagree, the interval is ``persistent``: a state-based descriptor that the
paper's taxonomy refinement (appendix A.7) removes from questions whose text
describes changes, so such tracks still serve TEL but not ICR or GTS.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Iterator, Sequence

from medtemporal.schema import Finding, Study, Timeline
from medtemporal.sources.mimic_qba import ENTITIES, SEVERITY_RANK

WINDOW = 5
"""Visits per window (T1..T5)."""

EMERGENCE, RESOLUTION, WORSENING, IMPROVEMENT = "emergence", "resolution", "worsening", "improvement"
UNCHANGED, ABSENT, PERSISTENT = "unchanged", "absent", "persistent"
DIRECTIONAL: tuple[str, ...] = (EMERGENCE, RESOLUTION, WORSENING, IMPROVEMENT)
"""Change types with explicit direction; the only ones ICR statements assert."""
DEFINITE: tuple[str, ...] = (*DIRECTIONAL, UNCHANGED, ABSENT)
"""Change types that GTS summaries may state; ``persistent`` is not one."""

_CHANGE_WORDS: dict[str, str] = {
    "new": EMERGENCE, "newly": EMERGENCE, "emergence": EMERGENCE, "appeared": EMERGENCE,
    "resolved": RESOLUTION, "resolution": RESOLUTION, "resolving": RESOLUTION,
    "worse": WORSENING, "worsened": WORSENING, "worsening": WORSENING, "increased": WORSENING,
    "increase": WORSENING, "increasing": WORSENING, "progression": WORSENING, "progressed": WORSENING,
    "enlarged": WORSENING, "enlarging": WORSENING,
    "improved": IMPROVEMENT, "improvement": IMPROVEMENT, "improving": IMPROVEMENT, "decreased": IMPROVEMENT,
    "decrease": IMPROVEMENT, "decreasing": IMPROVEMENT, "reduced": IMPROVEMENT, "smaller": IMPROVEMENT,
    "unchanged": UNCHANGED, "stable": UNCHANGED, "no change": UNCHANGED, "similar": UNCHANGED,
    "persistent": UNCHANGED, "persistence": UNCHANGED, "persists": UNCHANGED, "constant": UNCHANGED,
}
"""Annotated change words (lower case) → change type."""


@dataclass(frozen=True)
class Track:
    """One abnormality over one window: presence at each visit, change type of each interval.

    ``pattern``, ``definite`` and ``directional`` follow from these and are set once, at construction (the
    builder asks them of millions of candidates).
    """

    entity: str
    present: tuple[bool, ...]
    changes: tuple[str, ...]
    laterality: str | None = None
    """The most frequent laterality among the present visits (ties: first seen), if any."""
    pattern: str = field(init=False, repr=False, compare=False)
    """``all_pos``, ``all_neg`` or ``mixed`` (the certainty-pattern class of A.5.2)."""
    definite: bool = field(init=False, repr=False, compare=False)
    """True when every interval has a change type a summary may state."""
    directional: bool = field(init=False, repr=False, compare=False)
    """True when some interval has a change type with a direction (`DIRECTIONAL`)."""

    def __post_init__(self) -> None:
        pattern = "all_pos" if all(self.present) else "mixed" if any(self.present) else "all_neg"
        object.__setattr__(self, "pattern", pattern)
        object.__setattr__(self, "definite", all(c in DEFINITE for c in self.changes))
        object.__setattr__(self, "directional", any(c in DIRECTIONAL for c in self.changes))

    @property
    def states(self) -> list[str]:
        """``pos``/``neg`` per visit, as the paper writes certainty patterns."""
        return ["pos" if p else "neg" for p in self.present]


@dataclass(frozen=True)
class Window:
    """Five contiguous visits of one patient and the abnormality tracks complete in them."""

    patient_id: str
    start: int
    """0-based position of T1 in the patient's timeline."""
    studies: tuple[Study, ...]
    tracks: tuple[Track, ...]
    """Complete tracks, in the order of the entities asked for (`ENTITIES` by default)."""

    def track(self, entity: str) -> Track:
        """The track of ``entity`` (KeyError if it is not complete in this window)."""
        for t in self.tracks:
            if t.entity == entity:
                return t
        raise KeyError(entity)


def interval_change(before: Finding, after: Finding) -> str:
    """The change type between two certain findings of one abnormality at consecutive visits.

    >>> f = lambda p, sev=None, ch=(): Finding(entity="x", present=p, severity=sev, changes=ch)
    >>> interval_change(f(False), f(True)), interval_change(f(True, "small"), f(True, "large"))
    ('emergence', 'worsening')
    >>> interval_change(f(True), f(True, ch=("stable",))), interval_change(f(True), f(True))
    ('unchanged', 'persistent')
    """
    if not before.present:
        return EMERGENCE if after.present else ABSENT
    if not after.present:
        return RESOLUTION
    annotated = {t for t in map(change_word, after.changes) if t in (WORSENING, IMPROVEMENT, UNCHANGED)}
    by_severity = _severity_change(before.severity, after.severity)
    if len(annotated) > 1 or (annotated and by_severity and by_severity not in annotated):
        return PERSISTENT
    if annotated:
        return next(iter(annotated))
    return by_severity or PERSISTENT


@lru_cache(maxsize=4096)
def change_word(word: str) -> str | None:
    """The change type an annotated change word names, or None (remembered: QBA uses few words)."""
    key = re.sub(r"[\s_-]+", " ", word.strip().lower())
    return _CHANGE_WORDS.get(key)


def _severity_change(before: str | None, after: str | None) -> str | None:
    a, b = SEVERITY_RANK.get((before or "").lower()), SEVERITY_RANK.get((after or "").lower())
    if a is None or b is None:
        return None
    return WORSENING if b > a else IMPROVEMENT if b < a else UNCHANGED


def _laterality(findings: Sequence[Finding]) -> str | None:
    counts: dict[str, int] = {}
    for f in findings:
        if f.present and f.laterality:
            counts[f.laterality] = counts.get(f.laterality, 0) + 1
    if not counts:
        return None
    best = max(counts.values())
    return next(side for side, n in counts.items() if n == best)  # first seen: dicts keep insertion order


def make_track(entity: str, findings: Sequence[Finding]) -> Track:
    """The track of ``entity`` from its five certain findings, in visit order."""
    return Track(
        entity=entity,
        present=tuple(f.present for f in findings),
        changes=tuple(interval_change(a, b) for a, b in zip(findings, findings[1:])),
        laterality=_laterality(findings),
    )


def _contiguous(studies: Sequence[Study]) -> bool:
    orders = [s.order for s in studies]
    if any(o is None for o in orders):
        return True
    return all(b == a + 1 for a, b in zip(orders, orders[1:]))  # type: ignore[operator]


def _by_entity(study: Study, kinds: dict[tuple[Any, ...], int]) -> dict[str, tuple[Finding, int]]:
    """Each entity's first finding in ``study``, with its kind: a number (kept in ``kinds``) shared by every
    finding with the same entity, presence, certainty, laterality, severity and change words, which are all
    that a `Track` reads."""
    out: dict[str, tuple[Finding, int]] = {}
    for f in study.findings:
        if f.entity not in out:
            key = (f.entity, f.present, f.certain, f.laterality, f.severity, f.changes)
            out[f.entity] = (f, kinds.setdefault(key, len(kinds)))
    return out


def windows(
    timelines: Iterable[Timeline],
    exclusions: Counter[str],
    entities: Sequence[str] = ENTITIES,
    size: int = WINDOW,
) -> Iterator[Window]:
    """Yield every window of every timeline, counting what is left out in ``exclusions``.

    Exclusion keys: ``timeline_too_short`` (patients), ``window_not_contiguous``,
    ``window_missing_frontal``, ``window_no_complete_abnormality`` (windows), and
    per window–abnormality pair ``pair_not_annotated``, ``pair_missing_state``,
    ``pair_uncertain_state``, ``pair_other_entity`` (an entity outside ``entities``).
    """
    wanted = set(entities)
    # A few thousand distinct tracks recur in hundreds of thousands of windows (at MIMIC scale): one (immutable)
    # `Track` per sequence of finding kinds.
    kinds: dict[tuple[Any, ...], int] = {}
    memo: dict[tuple[int, ...], Track] = {}
    for timeline in timelines:
        studies = timeline.studies
        if len(studies) < size:
            exclusions["timeline_too_short"] += 1
            continue
        by_entity = [_by_entity(s, kinds) for s in studies]  # each study is in up to `size` windows: look up once
        others = [set(f) - wanted for f in by_entity]
        for start in range(len(studies) - size + 1):
            chunk = studies[start : start + size]
            if not _contiguous(chunk):
                exclusions["window_not_contiguous"] += 1
                continue
            if any(not s.frontal for s in chunk):
                exclusions["window_missing_frontal"] += 1
                continue
            tracks = []
            lookups = by_entity[start : start + size]
            for entity in entities:
                found = [f.get(entity) for f in lookups]
                if all(f is None for f in found):
                    exclusions["pair_not_annotated"] += 1
                elif any(f is None for f in found):
                    exclusions["pair_missing_state"] += 1
                elif any(not f[0].certain for f in found):  # type: ignore[index]
                    exclusions["pair_uncertain_state"] += 1
                else:
                    key = tuple(k for _, k in found)  # type: ignore[misc]
                    track = memo.get(key)
                    if track is None:
                        track = memo[key] = make_track(entity, [f for f, _ in found])  # type: ignore[misc]
                    tracks.append(track)
            if any(others[start : start + size]):
                exclusions["pair_other_entity"] += len(set().union(*others[start : start + size]))
            if not tracks:
                exclusions["window_no_complete_abnormality"] += 1
                continue
            yield Window(timeline.patient_id, start, tuple(chunk), tuple(tracks))
