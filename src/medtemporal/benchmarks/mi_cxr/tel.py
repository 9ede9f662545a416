"""Temporal Event Localization (TEL): which interval, or which pair of visits, holds an event.

Events are presence transitions of one abnormality in a five-visit window:
an *emergence* is absent → present, a *resolution* present → absent (appendix
A.8.2). How each qtype reads them:

* ``single_emergence`` / ``single_resolution`` — windows with at most one
  event of the kind; the answer is that interval (``T1 → T2`` … ``T4 → T5``,
  options A–D in order) or E when there is none. Windows with two such events
  are not asked this question: "the" interval would be ambiguous.
* ``multiple_emergence_1`` / ``multiple_resolution_1`` ("first") and ``…_2``
  ("second") — the first or the second event when the window has two (in
  five visits at most two: absent, present, absent, present). ``_1`` asks
  the first event of any window with one or more, with E for windows with
  none: the released file answers ``_1`` items with C and D, which only a
  window whose first event comes late can give (appendix A.5.2 balances
  answer positions per question type), so ``_1`` is not limited to windows
  with two events and its answers cover A–D. ``_2`` asks windows with two
  events, with E for windows with fewer (figure 18: a single emergence, "No
  second appearance"); since two events are at least two intervals apart,
  ``_2`` answers are C, D or E, a prior the question type carries by its
  nature (`medtemporal audit` shows it).
* ``emergence_to_resolution`` / ``resolution_to_emergence`` — the first event
  of the first kind followed later by an event of the other kind; the answer
  is the pair of visits at which each event is first visible (figure 19: an
  effusion new at T2 and gone at T3 is ``T2, T3``; the released file's
  ``T2, T4`` for edema gone at T2 and back at T4). Distractors are other
  pairs that could be an answer (none with T1, which never is; the released
  file still offers such pairs), never another valid sequence of the same
  kind; E when there is none.
"""

from __future__ import annotations

import random
from functools import lru_cache
from itertools import combinations
from typing import Iterator, Mapping, Sequence

from medtemporal.benchmarks.mi_cxr.balance import NULL_LETTER, Fields
from medtemporal.benchmarks.mi_cxr.exchange import draw
from medtemporal.benchmarks.mi_cxr.text import INTERVALS, LETTERS, TEL, Draft, pair
from medtemporal.benchmarks.mi_cxr.windows import Track, Window

TEL_QTYPES: tuple[str, ...] = tuple(TEL)
PAIR_QTYPES = ("emergence_to_resolution", "resolution_to_emergence")
ALL_PAIRS: tuple[tuple[int, int], ...] = tuple(combinations(range(1, 6), 2))
"""Every pair of visits (1-based)."""
ANSWERABLE_PAIRS: tuple[tuple[int, int], ...] = tuple(p for p in ALL_PAIRS if p[0] > 1)
"""Pairs that can be an answer (an event is first visible at T2 at the earliest): the distractor pool,
so that no option is wrong on its face."""


def emergences(present: Sequence[bool]) -> list[int]:
    """0-based intervals where the abnormality appears (absent → present)."""
    return [i for i in range(len(present) - 1) if not present[i] and present[i + 1]]


def resolutions(present: Sequence[bool]) -> list[int]:
    """0-based intervals where the abnormality disappears (present → absent)."""
    return [i for i in range(len(present) - 1) if present[i] and not present[i + 1]]


def sequences(first: Sequence[int], then: Sequence[int]) -> list[tuple[int, int]]:
    """Visit pairs (1-based) of each ``first`` event and the next ``then`` event after it."""
    out = []
    for f in first:
        nxt = next((t for t in then if t > f), None)
        if nxt is not None:
            out.append((f + 2, nxt + 2))
    return out


_INELIGIBLE = object()


def target(qtype: str, present: Sequence[bool]) -> object:
    """The answer of ``qtype`` for a presence sequence, by rule.

    Returns a 0-based interval (interval qtypes), a 1-based visit pair (pair
    qtypes), None for the null answer, or a private sentinel when the window
    is not asked this question.

    >>> target("single_emergence", [False, False, True, True, True])
    1
    >>> target("multiple_emergence_2", [False, True, True, True, True]) is None
    True
    >>> target("resolution_to_emergence", [True, False, False, True, True])
    (2, 4)
    """
    return _target(qtype, tuple(present))


@lru_cache(maxsize=None)
def _target(qtype: str, present: tuple[bool, ...]) -> object:
    """`target`, once per qtype and presence sequence (a window track has one of 32)."""
    if qtype in PAIR_QTYPES:
        e, r = emergences(present), resolutions(present)
        found = sequences(e, r) if qtype == "emergence_to_resolution" else sequences(r, e)
        return found[0] if found else None
    events = emergences(present) if "emergence" in qtype else resolutions(present)
    if qtype.startswith("single_"):
        return _INELIGIBLE if len(events) > 1 else (events[0] if events else None)
    if qtype.endswith("_1"):
        return events[0] if events else None
    return events[1] if len(events) >= 2 else None


def tel_candidates(qtype: str, index: int, window: Window) -> Iterator[Fields]:
    """The fields of every TEL candidate of ``qtype`` in window number ``index`` (one per abnormality)."""
    for track in window.tracks:
        letters = _letters(qtype, track.present)
        if letters is not None:
            yield (qtype, index, track.entity, letters == _NULL, letters, track.pattern, (index, track.entity))


_NULL: tuple[str, ...] = (NULL_LETTER,)


@lru_cache(maxsize=None)
def _letters(qtype: str, present: tuple[bool, ...]) -> tuple[str, ...] | None:
    """The letters the correct option of ``qtype`` may take for ``present`` (`_NULL` for the null answer),
    None when the window is not asked this question."""
    answer = _target(qtype, present)
    if answer is _INELIGIBLE:
        return None
    if answer is None:
        return _NULL
    return LETTERS if qtype in PAIR_QTYPES else (LETTERS[answer],)  # type: ignore[index]


def tel_draft(
    qtype: str, track: Track, letter: str, rng: random.Random, weights: Mapping[tuple[int, int], float] | None = None
) -> Draft:
    """The question, options and answer of a TEL item whose correct option goes at ``letter``.

    Pair distractors are drawn by `exchange.draw` under ``weights`` (solved from how
    often each pair is the answer, `Priors.pair_weights`), uniformly when None.
    """
    question, null = (t.format(e=track.entity) for t in TEL[qtype])
    answer = target(qtype, track.present)
    if answer is _INELIGIBLE or (answer is None) != (letter == NULL_LETTER):
        raise ValueError(f"{qtype} cannot be asked of {track.entity} {track.states} with answer {letter}")
    if qtype not in PAIR_QTYPES and answer is not None and letter != LETTERS[answer]:  # type: ignore[index]
        raise ValueError(f"{qtype}: the answer of {track.states} is {LETTERS[answer]}, not {letter}")  # type: ignore[index]
    e, r = emergences(track.present), resolutions(track.present)
    meta = {
        "emergences": [INTERVALS[i] for i in e],
        "resolutions": [INTERVALS[i] for i in r],
    }
    if qtype in PAIR_QTYPES:
        valid = set(sequences(e, r) if qtype == "emergence_to_resolution" else sequences(r, e))
        shown = len(LETTERS) - (answer is not None)
        picks = draw(weights or {p: 1.0 for p in ANSWERABLE_PAIRS}, shown, rng, exclude=sorted(valid))
        options = {}
        for x in LETTERS:
            options[x] = pair(*(answer if x == letter else picks.pop()))  # type: ignore[misc]
        meta["intervals"] = [pair(*answer)] if answer else []  # type: ignore[misc]
    else:
        options = dict(zip(LETTERS, INTERVALS))
        meta["intervals"] = [INTERVALS[answer]] if answer is not None else []  # type: ignore[index]
    options[NULL_LETTER] = null
    return Draft(question, options, letter, meta)
