"""ICR, the ICR variant and GTS: options that state change types, true or flipped by rule.

Every option asserts change types (see `mi_cxr_windows`) and is true exactly
when they equal the annotated ones, so correctness never depends on wording.

* ``icr_multi_abn`` (ICR) — four statements, the one in option A about
  T1 → T2, B about T2 → T3, and so on (figure 12), each about an abnormality
  of the window, distinct abnormalities where the window has enough, and
  preferably ones present at some visit (so a statement's wording never
  gives away that its abnormality is absent throughout). At most one is true:
  a directional change (emergence, resolution, worsening, improvement)
  actually annotated; the others assert a flipped change (`FALSE_CLAIMS`:
  never "worsened" for a new finding nor "improved" for a resolved one, which
  a reader could call true). False claims are drawn in proportion to how often
  each change is the true claim of a selected ICR item, so the claim alone
  does not hint at the answer.
  With none true the answer is E. Windows need at least two complete
  abnormalities.
* ``icr_variant`` (ICR-V, appendix D) — the interval is named; options are
  figure 16's four categories (new appearance, resolution, marked
  improvement, marked worsening) for one abnormality. The annotated change is
  one of them, or, when the abnormality is unchanged or absent over the
  interval, none is and the answer is E. Its worsening and improvement
  statements say the abnormality was present before and after, so they never
  overlap a new appearance or a resolution.
* ``single_entity_interval_summary`` (GTS) — four trajectory summaries of one
  abnormality. Distractors are other *consistent* trajectories (a presence
  sequence plus a change type for each present → present interval), so text
  alone cannot rule them out, one or two intervals away from the truth, drawn
  in proportion to how often each trajectory is the correct option of a
  selected GTS item (+1), so they look like correct options. Near-miss distractors make the truth the centre of
  the options; to undo that, the truth's rank by total distance to the other
  options is drawn uniformly and the distractor set chosen to match it.
* ``multi_entity_interval_summary`` (GTS) — four summaries, each of a
  different abnormality of the window (at least four complete, definite
  tracks): the focus abnormality's true trajectory (or a distractor of it, for
  E) and distractors of three others.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from itertools import product
from typing import Iterable, Iterator, Mapping, Sequence

from medtemporal.benchmarks.mi_cxr.balance import NULL_LETTER, Candidate
from medtemporal.benchmarks.mi_cxr.text import (
    GTS_MULTI_QUESTION,
    GTS_NULL,
    GTS_SINGLE_QUESTION,
    ICR_NULL,
    ICR_QUESTION,
    ICRV_NULL,
    ICRV_QUESTION,
    INTERVALS,
    LETTERS,
    Draft,
    describe,
    statement,
    trajectory,
    variant_statement,
)
from medtemporal.benchmarks.mi_cxr.windows import (
    ABSENT,
    DIRECTIONAL,
    EMERGENCE,
    IMPROVEMENT,
    PERSISTENT,
    RESOLUTION,
    UNCHANGED,
    WORSENING,
    Track,
    Window,
)

MIN_ICR_ABNORMALITIES = 2
GTS_MULTI_OPTIONS = 4

FALSE_CLAIMS: dict[str, tuple[str, ...]] = {
    EMERGENCE: (RESOLUTION, IMPROVEMENT),
    RESOLUTION: (EMERGENCE, WORSENING),
    WORSENING: (IMPROVEMENT, EMERGENCE, RESOLUTION),
    IMPROVEMENT: (WORSENING, EMERGENCE, RESOLUTION),
    UNCHANGED: DIRECTIONAL,
    ABSENT: DIRECTIONAL,
    PERSISTENT: (EMERGENCE, RESOLUTION),
}
"""Annotated change type → the directional claims that flip it (all definitely false)."""

RANK_TRIES = 40
"""Random distractor sets tried per GTS item to place the truth at its drawn centrality rank."""


@dataclass(frozen=True)
class Priors:
    """What the correct options of the selected items look like, so distractors look the same."""

    trajectories: Mapping[tuple[str, ...], int] = field(default_factory=dict)
    """Change sequences of the true GTS options → count."""
    claims: Mapping[str, int] = field(default_factory=dict)
    """Change types of the true ICR statements → count."""


def priors(chosen: Iterable[Candidate], windows: Sequence[Window]) -> Priors:
    """Count the true trajectories and true ICR claims of the selected, non-null candidates."""
    trajectories: Counter[tuple[str, ...]] = Counter()
    claims: Counter[str] = Counter()
    for c in chosen:
        if c.null:
            continue
        track = windows[c.window].track(c.entity)
        if c.qtype in ("single_entity_interval_summary", "multi_entity_interval_summary"):
            trajectories[track.changes] += 1
        elif c.qtype == "icr_multi_abn" and c.interval is not None:
            claims[track.changes[c.interval]] += 1
    return Priors(dict(trajectories), dict(claims))


@cache
def consistent_trajectories() -> tuple[tuple[str, ...], ...]:
    """All 232 change-type sequences over four intervals that some presence sequence allows."""
    out: list[tuple[str, ...]] = []
    for present in product((False, True), repeat=5):
        steps = []
        for a, b in zip(present, present[1:]):
            if not a:
                steps.append((EMERGENCE,) if b else (ABSENT,))
            elif not b:
                steps.append((RESOLUTION,))
            else:
                steps.append((WORSENING, IMPROVEMENT, UNCHANGED))
        out.extend(product(*steps))
    return tuple(out)


def _distance(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    return sum(x != y for x, y in zip(a, b))


@cache
def _nearby(truth: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Consistent trajectories one or two intervals away from ``truth``."""
    return tuple(s for s in consistent_trajectories() if s != truth and _distance(s, truth) <= 2)


def _weighted_sample(pool: list[tuple[str, ...]], weights: list[float], k: int, rng: random.Random) -> list[tuple[str, ...]]:
    keys = [rng.random() ** (1.0 / w) for w in weights]  # Efraimidis–Spirakis: top-k keys
    order = sorted(range(len(pool)), key=lambda i: -keys[i])
    return [pool[i] for i in order[:k]]


def _rank(truth: tuple[str, ...], others: list[tuple[str, ...]]) -> int:
    """How many options are strictly more central (smaller total distance to the rest) than ``truth``."""
    options = [truth, *others]
    total = [sum(_distance(a, b) for b in options) for a in options]
    return sum(t < total[0] for t in total[1:])


def distractor_trajectories(
    truth: tuple[str, ...], k: int, rng: random.Random, prior: Mapping[tuple[str, ...], int] | None = None,
    *, hide_centre: bool = True,
) -> list[tuple[str, ...]]:
    """``k`` distinct consistent trajectories one or two intervals from ``truth``, weighted by ``prior``.

    With ``hide_centre`` the truth's centrality rank among the ``k + 1``
    options is drawn uniformly and the first of `RANK_TRIES` draws that
    matches it is returned (else the draw closest to it).
    """
    prior = prior or {}
    pool = list(_nearby(truth))
    if len(pool) < k:
        pool += [s for s in consistent_trajectories() if s != truth and s not in pool]
    weights = [prior.get(s, 0) + 1.0 for s in pool]
    if not hide_centre:
        return _weighted_sample(pool, weights, k, rng)
    want = rng.randrange(k + 1)
    picks = _weighted_sample(pool, weights, k, rng)
    miss = abs(_rank(truth, picks) - want)
    for _ in range(RANK_TRIES - 1):
        if miss == 0:
            break
        again = _weighted_sample(pool, weights, k, rng)
        if (m := abs(_rank(truth, again) - want)) < miss:
            picks, miss = again, m
    rng.shuffle(picks)
    return picks


# ---------------------------------------------------------------- candidates


def _pattern(track: Track) -> str:
    """The certainty-pattern class for balancing: an all-present track whose severity changes is
    ``mixed`` here, since statements and summaries about it are not trivial."""
    return "mixed" if any(c in DIRECTIONAL for c in track.changes) else track.pattern


def icr_candidates(index: int, window: Window) -> Iterator[Candidate]:
    """ICR candidates: one per (abnormality, interval) with a directional change, and nulls."""
    if len(window.tracks) < MIN_ICR_ABNORMALITIES:
        return
    for t in window.tracks:
        for i, change in enumerate(t.changes):
            if change in DIRECTIONAL:
                yield Candidate("icr_multi_abn", index, t.entity, False, (LETTERS[i],), _pattern(t), index, i)
        yield Candidate("icr_multi_abn", index, t.entity, True, (NULL_LETTER,), _pattern(t), index)


def icr_variant_candidates(index: int, window: Window) -> Iterator[Candidate]:
    """ICR-V candidates: one per (abnormality, interval) whose change is stated definitely.

    Abnormalities absent throughout the window are not asked about: their
    statements would lack the laterality the others carry, giving E away.
    """
    for t in window.tracks:
        if t.pattern == "all_neg":
            continue
        for i, change in enumerate(t.changes):
            if change == PERSISTENT:
                continue
            null = change not in DIRECTIONAL
            letters = (NULL_LETTER,) if null else LETTERS
            yield Candidate("icr_variant", index, t.entity, null, letters, _pattern(t), (index, t.entity, i), i)


def gts_single_candidates(index: int, window: Window) -> Iterator[Candidate]:
    """GTS single-abnormality candidates: each definite track, as a true and as a null question."""
    for t in window.tracks:
        if t.definite:
            key = (index, t.entity)
            yield Candidate("single_entity_interval_summary", index, t.entity, False, LETTERS, _pattern(t), key)
            yield Candidate("single_entity_interval_summary", index, t.entity, True, (NULL_LETTER,), _pattern(t), key)


def gts_multi_candidates(index: int, window: Window) -> Iterator[Candidate]:
    """GTS multi-abnormality candidates: windows with four definite tracks, each as focus."""
    definite = [t for t in window.tracks if t.definite]
    if len(definite) < GTS_MULTI_OPTIONS:
        return
    for t in definite:
        for null in (False, True):
            letters = (NULL_LETTER,) if null else LETTERS
            yield Candidate("multi_entity_interval_summary", index, t.entity, null, letters, _pattern(t), index)


# ---------------------------------------------------------------- drafts


def _statement_tracks(focus: Track, window: Window, n: int, rng: random.Random) -> list[Track]:
    """``n`` tracks for the other statements: distinct abnormalities present at some visit first,
    then such abnormalities again (the focus included), then abnormalities absent throughout."""
    others = [t for t in window.tracks if t.entity != focus.entity]
    rng.shuffle(others)
    present = [t for t in others if t.pattern != "all_neg"]
    reuse = present + ([focus] if focus.pattern != "all_neg" else [])
    picks = present[:n]
    if reuse:
        picks += [reuse[j % len(reuse)] for j in range(n - len(picks))]
    picks += [t for t in others if t.pattern == "all_neg"][: n - len(picks)]
    picks += [others[j % len(others)] for j in range(n - len(picks))]
    rng.shuffle(picks)
    return picks


def icr_draft(c: Candidate, window: Window, letter: str, rng: random.Random, prior: Priors) -> Draft:
    """Four interval statements; the one at ``letter`` true unless ``letter`` is E."""
    focus = window.track(c.entity)
    true_at = None if c.null else LETTERS.index(letter)
    if true_at is not None and (true_at != c.interval or focus.changes[true_at] not in DIRECTIONAL):
        raise ValueError(f"ICR: {c.entity} has no directional change at interval {letter}")
    focus_at = true_at if true_at is not None else rng.randrange(len(LETTERS))
    others = _statement_tracks(focus, window, len(LETTERS) - 1, rng)
    statements = []
    for i in range(len(LETTERS)):
        track = focus if i == focus_at else others[i - (i > focus_at)]
        actual = track.changes[i]
        allowed = FALSE_CLAIMS[actual]
        weights = [prior.claims.get(x, 0) + 1.0 for x in allowed]
        claim = actual if i == true_at else rng.choices(allowed, weights)[0]
        statements.append({"interval": INTERVALS[i], "abnormality": track.entity, "claim": claim, "actual": actual})
    options = {x: statement(describe(window.track(s["abnormality"])), i, s["claim"])
               for i, (x, s) in enumerate(zip(LETTERS, statements))}
    options[NULL_LETTER] = ICR_NULL
    meta = {"statements": statements, "intervals": [INTERVALS[true_at]] if true_at is not None else []}
    return Draft(ICR_QUESTION, options, letter, meta)


def icr_variant_draft(c: Candidate, window: Window, letter: str, rng: random.Random, prior: Priors) -> Draft:
    """The interval is named; options are the four directional categories for one abnormality."""
    track, i = window.track(c.entity), c.interval
    if i is None:
        raise ValueError("an ICR-variant candidate needs its interval")
    actual = track.changes[i]
    claims = [x for x in DIRECTIONAL if x != actual]
    rng.shuffle(claims)
    order = iter(claims)
    chosen = {x: (actual if x == letter else next(order)) for x in LETTERS}
    options = {x: variant_statement(describe(track), claim) for x, claim in chosen.items()}
    options[NULL_LETTER] = ICRV_NULL
    meta = {"claims": chosen, "actual": actual, "intervals": [INTERVALS[i]]}
    return Draft(ICRV_QUESTION.format(a=i + 1, b=i + 2), options, letter, meta)


def gts_single_draft(c: Candidate, window: Window, letter: str, rng: random.Random, prior: Priors) -> Draft:
    """Four trajectories of the focus abnormality; the one at ``letter`` true unless E."""
    track = window.track(c.entity)
    truth = track.changes
    shown = len(LETTERS) - (letter != NULL_LETTER)
    wrong = distractor_trajectories(truth, shown, rng, prior.trajectories, hide_centre=letter != NULL_LETTER)
    claims = {x: (truth if x == letter else wrong.pop()) for x in LETTERS}
    desc = describe(track)
    options = {x: trajectory(desc, seq) for x, seq in claims.items()}
    options[NULL_LETTER] = GTS_NULL
    meta = {"option_claims": {x: {"abnormality": c.entity, "changes": list(s)} for x, s in claims.items()}}
    return Draft(GTS_SINGLE_QUESTION.format(e=c.entity), options, letter, meta)


def gts_multi_draft(c: Candidate, window: Window, letter: str, rng: random.Random, prior: Priors) -> Draft:
    """Four trajectories of four abnormalities; the focus one at ``letter`` true unless E."""
    focus = window.track(c.entity)
    others = rng.sample([t for t in window.tracks if t.definite and t.entity != c.entity], len(LETTERS) - 1)
    focus_letter = letter if letter != NULL_LETTER else rng.choice(LETTERS)
    claims: dict[str, tuple[Track, tuple[str, ...]]] = {}
    for x in LETTERS:
        track = focus if x == focus_letter else others.pop()
        if x == letter:
            seq = track.changes
        else:
            seq = distractor_trajectories(track.changes, 1, rng, prior.trajectories, hide_centre=False)[0]
        claims[x] = (track, seq)
    options = {x: trajectory(describe(t), seq) for x, (t, seq) in claims.items()}
    options[NULL_LETTER] = GTS_NULL
    meta = {
        "abnormalities": [t.entity for t, _ in claims.values()],
        "option_claims": {x: {"abnormality": t.entity, "changes": list(s)} for x, (t, s) in claims.items()},
    }
    return Draft(GTS_MULTI_QUESTION, options, letter, meta)
