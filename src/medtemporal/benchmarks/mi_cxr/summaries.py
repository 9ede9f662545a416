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
  each change is the true claim of a selected ICR item, and their
  abnormalities in proportion to how often each is the subject of the true
  statement (`icr_entity_weights`), so neither the claim nor the abnormality
  named hints at the answer.
  With none true the answer is E. Windows need at least two complete
  abnormalities.
* ``icr_variant`` (ICR-V, appendix D) — the interval is named; options are
  figure 16's four categories (new appearance, resolution, marked
  improvement, marked worsening) for one abnormality. The annotated change is
  one of them, or, when the abnormality is unchanged or absent over the
  interval, none is and the answer is E. Its worsening and improvement
  statements say the abnormality was present before and after, so they never
  overlap a new appearance or a resolution. Since every item shows the same
  four categories, the balancer keeps the true one's category level
  (`Candidate.claim`), or "always new appearance" would beat chance.
* ``single_entity_interval_summary`` (GTS) — four trajectory summaries of one
  abnormality. Distractors are other *consistent* trajectories (a presence
  sequence plus a change type for each present → present interval: the
  paper's change-type flips with interval positions kept, figures 6 and 8),
  so text alone cannot rule them out, drawn by `exchange.draw` under weights
  solved from how often each trajectory is the truth for that abnormality:
  given the four texts, each is equally likely the true one, so neither
  "the option the others were flipped from" nor "the commonest-looking
  trajectory" helps a blind reader.
* ``multi_entity_interval_summary`` (GTS) — four summaries, each of a
  different abnormality of the window (at least four complete, definite
  tracks): the focus abnormality's true trajectory (or a distractor of it, for
  E) and distractors of three others; the three are drawn among tracks like
  the focus (naming a laterality exactly when it does, and changing, as the
  focus must be; windows without three such are not asked) under weights fitted so
  that each abnormality is shown falsely in proportion to how often it is the
  true option (`multi_other_weights`: the focus follows Table 10's mix, so
  others drawn uniformly made common abnormalities the answer more often),
  and each false trajectory is drawn under weights solved so that the
  courses shown falsely are distributed like the true ones, given the truths
  they must differ from (`Priors.multi_false_weights`). Neither how an option
  names its abnormality nor the course it states marks the true one.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import product
from typing import Any, Iterable, Iterator, Mapping, Sequence, TypeVar

import numpy as np

from medtemporal.benchmarks.mi_cxr.balance import NULL_LETTER, Candidate, Fields
from medtemporal.benchmarks.mi_cxr.exchange import FLOOR, Sampler, draw, elementary, solve_weights
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

T = TypeVar("T")


@dataclass(frozen=True)
class Priors:
    """What the correct options of the selected items look like, so distractors look the same."""

    trajectories: Mapping[tuple[str, ...], int] = field(default_factory=dict)
    """Change sequences of the true GTS options → count."""
    claims: Mapping[str, int] = field(default_factory=dict)
    """Change types of the true ICR statements → count."""
    by_entity: Mapping[str, Mapping[tuple[str, ...], int]] = field(default_factory=dict)
    """Abnormality → change sequences of its true GTS single-abnormality options → count."""
    pairs: Mapping[str, Mapping[tuple[int, int], int]] = field(default_factory=dict)
    """TEL pair qtype → true visit pairs → count."""
    statements: Mapping[tuple[str, str, int], int] = field(default_factory=dict)
    """(abnormality, change type, interval) of the true ICR statements → count."""
    multi: Mapping[str, Mapping[tuple[str, ...], int]] = field(default_factory=dict)
    """Abnormality → change sequences of its true options in GTS multi-abnormality items → count."""
    others: Mapping[str, float] = field(default_factory=dict)
    """Abnormality → weight with which it is drawn as one of the three other abnormalities of a GTS multi
    item (`multi_other_weights`)."""
    shown_false: Mapping[str, Mapping[tuple[str, ...], float]] = field(default_factory=dict)
    """Abnormality → true change sequences of the tracks shown with a false trajectory in GTS multi items
    (expected counts under ``others``)."""
    icr_entity: Mapping[str, float] = field(default_factory=dict)
    """Abnormality → factor on its weight as the subject of a false ICR statement (`icr_entity_weights`)."""
    _weights: dict[tuple[object, int], dict] = field(default_factory=dict, compare=False, repr=False)
    _samplers: dict[tuple[int, int], Sampler] = field(default_factory=dict, compare=False, repr=False)

    def sampler(self, w: Mapping[Any, float], k: int) -> Sampler:
        """The `exchange.Sampler` of ``w`` (weights this object returned, which it keeps) for ``k`` draws."""
        hit = self._samplers.get((id(w), k))
        if hit is None or hit.w is not w:
            hit = self._samplers[(id(w), k)] = Sampler(w, k)
        return hit

    def trajectory_weights(self, entity: str, k: int) -> dict[tuple[str, ...], float]:
        """`exchange.solve_weights` for ``entity``'s true trajectories (plus one pseudo-count spread over
        all true trajectories, then over every consistent one), for ``k`` distractors."""
        key = (entity, k)
        if key not in self._weights:
            p = _smoothed(self.by_entity.get(entity, {}), self.trajectories, consistent_trajectories())
            self._weights[key] = solve_weights(p, k)
        return self._weights[key]

    def multi_false_weights(self, entity: str) -> dict[tuple[str, ...], float]:
        """Weights ``q`` for the false trajectory of one ``entity`` option in a GTS multi item.

        A false option of a track whose truth is ``t`` shows ``s != t`` with
        probability ``q[s] / (1 - q[t])``; ``q`` is the fixed point making that
        distribution, over the truths of the tracks shown falsely
        (``shown_false``), proportional to how often ``s`` is a true option of
        ``entity`` (``multi``): then a stated course says nothing about
        whether its option is the true one.
        """
        key = ("multi_false", entity, 1)
        if key not in self._weights:
            universe = consistent_trajectories()
            true = _smoothed(self.multi.get(entity, {}), self.trajectories, universe)
            false = _smoothed(self.shown_false.get(entity, {}), self.trajectories, universe)
            keys = sorted(true, key=repr)
            p = np.array([true[t] for t in keys]) / sum(true.values())
            d = np.array([false.get(t, 0.0) for t in keys]) / sum(false.values())
            q = p.copy()
            for _ in range(500):  # damped: where no q is exact (a course the truth of most tracks), the nearest
                ratio = d / np.maximum(1 - q, 1e-9)
                shown = q * np.maximum(ratio.sum() - ratio, 1e-12)
                new = np.minimum(q * np.sqrt(p / (shown / shown.sum())), 0.95)
                new /= new.sum()
                if np.abs(new - q).max() < 1e-12:
                    q = new
                    break
                q = new
            self._weights[key] = {t: max(float(v), FLOOR) for t, v in zip(keys, q)}
        return self._weights[key]

    def pair_weights(self, qtype: str, pool: Sequence[tuple[int, int]], k: int) -> dict[tuple[int, int], float]:
        """`exchange.solve_weights` for the true pairs of TEL ``qtype`` (plus one pseudo-count over ``pool``)."""
        key = (qtype, k)
        if key not in self._weights:
            self._weights[key] = solve_weights(_smoothed(self.pairs.get(qtype, {}), {}, pool), k)
        return self._weights[key]


def _smoothed(counts: Mapping[T, int], wider: Mapping[T, int], universe: Sequence[T]) -> dict[T, float]:
    """``counts`` plus one pseudo-count spread over ``wider`` (its shares) and one over ``universe`` (evenly)."""
    out: dict[T, float] = {t: float(c) for t, c in counts.items()}
    total = sum(wider.values())
    for t, c in wider.items():
        out[t] = out.get(t, 0.0) + c / total
    for t in universe:
        out[t] = out.get(t, 0.0) + 1.0 / len(universe)
    return out


def priors(chosen: Iterable[Candidate], windows: Sequence[Window]) -> Priors:
    """Count the true trajectories, ICR claims and TEL pairs of the selected, non-null candidates."""
    from medtemporal.benchmarks.mi_cxr.tel import PAIR_QTYPES, target

    trajectories: Counter[tuple[str, ...]] = Counter()
    claims: Counter[str] = Counter()
    by_entity: dict[str, Counter[tuple[str, ...]]] = {}
    pairs: dict[str, Counter[tuple[int, int]]] = {}
    statements: Counter[tuple[str, str, int]] = Counter()
    multi: dict[str, Counter[tuple[str, ...]]] = {}
    for c in chosen:
        if c.qtype == "multi_entity_interval_summary" and not c.null:
            multi.setdefault(c.entity, Counter())[windows[c.window].track(c.entity).changes] += 1
        if c.null:
            continue
        track = windows[c.window].track(c.entity)
        if c.qtype in ("single_entity_interval_summary", "multi_entity_interval_summary"):
            trajectories[track.changes] += 1
            if c.qtype == "single_entity_interval_summary":  # multi items' truths follow another distribution
                by_entity.setdefault(c.entity, Counter())[track.changes] += 1
        elif c.qtype == "icr_multi_abn" and c.interval is not None:
            claims[track.changes[c.interval]] += 1
            statements[(c.entity, track.changes[c.interval], c.interval)] += 1
        elif c.qtype in PAIR_QTYPES:
            pairs.setdefault(c.qtype, Counter())[target(c.qtype, track.present)] += 1  # type: ignore[index]
    multi_items = [(windows[c.window], c) for c in chosen if c.qtype == "multi_entity_interval_summary"]
    others = multi_other_weights([(c.entity, c.null, tuple(t.entity for t in _multi_pool(w, c.entity)))
                                  for w, c in multi_items])
    shown_false: dict[str, Counter[tuple[str, ...]]] = {}
    for w, c in multi_items:
        pool = _multi_pool(w, c.entity)
        chance = inclusion([others.get(t.entity, FLOOR) for t in pool], GTS_MULTI_OPTIONS - 1)
        for t, pi in zip(pool, chance):
            shown_false.setdefault(t.entity, Counter())[t.changes] += pi
        if c.null:
            shown_false.setdefault(c.entity, Counter())[w.track(c.entity).changes] += 1
    base = Priors(dict(trajectories), dict(claims), {e: dict(v) for e, v in by_entity.items()},
                  {q: dict(v) for q, v in pairs.items()}, dict(statements),
                  {e: dict(v) for e, v in multi.items()}, others, {e: dict(v) for e, v in shown_false.items()})
    icr = [(windows[c.window], c) for c in chosen if c.qtype == "icr_multi_abn"]
    pools = [(*_false_pool(w, i, base), None if c.null else c.entity)
             for w, c in icr for i in range(len(LETTERS)) if c.null or i != c.interval]
    true_icr = Counter(c.entity for _, c in icr if not c.null)
    return replace(base, icr_entity=icr_entity_weights(pools, true_icr))


def inclusion(w: Sequence[float], k: int) -> list[float]:
    """Probability that each value is among ``k`` drawn by `exchange.draw` under weights ``w``.

    >>> [round(x, 3) for x in inclusion([1.0, 1.0, 2.0], 2)]
    [0.6, 0.6, 0.8]
    """
    if len(w) <= k:
        return [1.0] * len(w)
    e = elementary(w, k)
    out = []
    for x in w:
        rest = 1.0  # e_j(w without x) = e_j(w) - x * e_{j-1}(w without x), up to j = k - 1
        for j in range(1, k):
            rest = e[j] - x * rest
        out.append(x * rest / e[k])
    return out


def multi_other_weights(items: Sequence[tuple[str, bool, tuple[str, ...]]], rounds: int = 60) -> dict[str, float]:
    """Weights for drawing the three other abnormalities of GTS multi items, so that each abnormality is
    shown falsely about as often, relative to how often it is the true option, as any other.

    ``items`` are (focus, null, the abnormalities the others may be drawn from). The focus comes from the
    balancer (Table 10's mix); drawn uniformly, the others would make a common focus abnormality the
    true option more often than a rare one. The target for each abnormality is ``c * true - null_focus``
    false showings (``c`` fixed by the totals); the weights are refitted to it for ``rounds`` rounds from the
    exact inclusion probabilities (`inclusion`) of each distinct pool.
    """
    k = GTS_MULTI_OPTIONS - 1
    pools = Counter(tuple(sorted(p)) for _, _, p in items)
    true = Counter(e for e, null, _ in items if not null)
    null_focus = Counter(e for e, null, _ in items if null)
    entities = sorted({e for p in pools for e in p})
    if not entities or not true:
        return {e: 1.0 for e in entities}
    shown = sum(min(len(p), k) * n for p, n in pools.items()) + sum(null_focus.values())
    c = shown / sum(true.values())
    target = {e: max(c * true[e] - null_focus[e], 0.05) for e in entities}
    w = {e: 1.0 for e in entities}
    for _ in range(rounds):
        expected: Counter[str] = Counter()
        for pool, n in pools.items():
            for e, pi in zip(pool, inclusion([w[e] for e in pool], k)):
                expected[e] += n * pi
        w = {e: min(max(w[e] * (target[e] / max(expected[e], 1e-9)) ** 0.5, 1e-6), 1e6) for e in entities}
    return w


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


# ---------------------------------------------------------------- candidates


def _pattern(track: Track) -> str:
    """The certainty-pattern class for balancing: an all-present track whose severity changes is
    ``mixed`` here, since statements and summaries about it are not trivial."""
    return "mixed" if track.directional else track.pattern


def icr_candidates(index: int, window: Window) -> Iterator[Fields]:
    """ICR candidates' fields: one per (abnormality, interval) with a directional change, and nulls."""
    if len(window.tracks) < MIN_ICR_ABNORMALITIES:
        return
    for t in window.tracks:
        pattern = _pattern(t)
        for i, change in enumerate(t.changes):
            if change in DIRECTIONAL:
                yield ("icr_multi_abn", index, t.entity, False, (LETTERS[i],), pattern, index, i)
        yield ("icr_multi_abn", index, t.entity, True, (NULL_LETTER,), pattern, index)


def icr_variant_candidates(index: int, window: Window) -> Iterator[Fields]:
    """ICR-V candidates' fields: one per (abnormality, interval) whose change is stated definitely.

    Abnormalities absent throughout the window are not asked about: their
    statements would lack the laterality the others carry, giving E away.
    """
    for t in window.tracks:
        if t.pattern == "all_neg":
            continue
        pattern = _pattern(t)
        for i, change in enumerate(t.changes):
            if change == PERSISTENT:
                continue
            null = change not in DIRECTIONAL
            letters = (NULL_LETTER,) if null else LETTERS
            yield ("icr_variant", index, t.entity, null, letters, pattern, (index, t.entity, i), i,
                   "" if null else change)


def gts_single_candidates(index: int, window: Window) -> Iterator[Fields]:
    """GTS single-abnormality candidates' fields: each definite track, as a true and as a null question."""
    for t in window.tracks:
        if t.definite:
            key, pattern = (index, t.entity), _pattern(t)
            yield ("single_entity_interval_summary", index, t.entity, False, LETTERS, pattern, key)
            yield ("single_entity_interval_summary", index, t.entity, True, (NULL_LETTER,), pattern, key)


def _alike(a: Track, b: Track) -> bool:
    """Whether options about the two tracks name them alike (both with a laterality or both without) and
    the balancing caps treat them alike (both changing, or both uniformly present or absent)."""
    return bool(a.laterality) == bool(b.laterality) and (_pattern(a) == "mixed") == (_pattern(b) == "mixed")


def _multi_pool(window: Window, entity: str) -> list[Track]:
    """The tracks the three other options of a GTS multi item about ``entity`` are drawn from."""
    focus = window.track(entity)
    return [t for t in window.tracks if t.definite and t.entity != entity and _alike(t, focus)]


def gts_multi_candidates(index: int, window: Window) -> Iterator[Fields]:
    """GTS multi-abnormality candidates' fields: each definite, changing track with three others like it
    (`_alike`).

    A track uniformly present or absent is not a focus: its three others would be uniform too (`_alike`), all
    true courses "absent throughout" (or all "unchanged throughout"), so every false course differs from
    that and the one option stating it is the answer (the audit read such items blind; the paper's
    uniform-pattern cap, A.5.2, is a cap and allows none).
    """
    definite = [t for t in window.tracks if t.definite]
    if len(definite) < GTS_MULTI_OPTIONS:
        return  # no track has three others like it
    for t in definite:
        if _pattern(t) != "mixed" or sum(_alike(o, t) for o in definite) < GTS_MULTI_OPTIONS:
            continue  # the other options' abnormalities are like the focus (see `_alike`)
        yield ("multi_entity_interval_summary", index, t.entity, False, LETTERS, "mixed", index)
        yield ("multi_entity_interval_summary", index, t.entity, True, (NULL_LETTER,), "mixed", index)


# ---------------------------------------------------------------- drafts


def _false_pool(window: Window, interval: int, prior: Priors) -> tuple[list[tuple[Track, str]], list[float]]:
    """Every (track, claim) a false ICR statement about ``interval`` may make, and its base weight.

    Every (abnormality, claim) the window allows (an abnormality present at some
    visit, so that it is named as a true statement's would be; a claim of
    `FALSE_CLAIMS` for its annotated change) is weighted by how often that
    abnormality and change are the true statement at this interval, plus a
    half pseudo-count spread by how often they are true at any interval and one
    by the claim alone.
    """
    tracks = [t for t in window.tracks if t.pattern != "all_neg"] or list(window.tracks)
    at_any: Counter[tuple[str, str]] = Counter()
    for (e, ch, _), n in prior.statements.items():
        at_any[(e, ch)] += n
    total_any = sum(at_any.values()) or 1
    total_claim = sum(prior.claims.values()) or 1
    pool, weights = [], []
    for t in tracks:
        for claim in FALSE_CLAIMS[t.changes[interval]]:
            w = (prior.statements.get((t.entity, claim, interval), 0) + 0.5 * at_any[(t.entity, claim)] / total_any
                 + prior.claims.get(claim, 0) / total_claim + 1e-3)
            pool.append((t, claim))
            weights.append(w)
    return pool, weights


def icr_entity_weights(pools: Sequence[tuple[list[tuple[Track, str]], list[float], str | None]],
                       true: Counter[str], rounds: int = 60) -> dict[str, float]:
    """A factor per abnormality on the false-statement weights (`_false_pool`), fitted so that each
    abnormality is the subject of false statements in proportion to how often it is the true one.

    Without it, an abnormality present in many windows but rarely changing (and so rarely the true
    statement) was the subject of many false ones, and the abnormality named alone pointed to the answer
    (`medtemporal audit` on ICR). ``pools`` are the false-statement pools of the selected items with the
    abnormality of the item's true statement (weighed a fifth there, as `_false_statement` does), ``true``
    counts the abnormalities of their true statements.
    """
    entities = sorted({t.entity for pool, _, _ in pools for t, _ in pool})
    if not entities or not true:
        return {e: 1.0 for e in entities}
    target = {e: max(true[e], 0.05) * len(pools) / sum(true.values()) for e in entities}
    f = {e: 1.0 for e in entities}
    for _ in range(rounds):
        expected: Counter[str] = Counter()
        for pool, weights, used in pools:
            scaled = [w * f[t.entity] * (0.2 if t.entity == used else 1.0) for (t, _), w in zip(pool, weights)]
            total = sum(scaled)
            for (t, _), w in zip(pool, scaled):
                expected[t.entity] += w / total
        f = {e: min(max(f[e] * (target[e] / max(expected[e], 1e-9)) ** 0.5, 1e-6), 1e6) for e in entities}
    return f


def _false_statement(window: Window, interval: int, used: Counter[str], rng: random.Random, prior: Priors) -> dict:
    """A definitely false statement about ``interval``, drawn so that it looks like a true one: from
    `_false_pool` with each abnormality's `Priors.icr_entity` factor; abnormalities already used in the
    item weigh a fifth."""
    pool, weights = _false_pool(window, interval, prior)
    weights = [w * prior.icr_entity.get(t.entity, 1.0) * (0.2 ** used[t.entity]) for (t, _), w in zip(pool, weights)]
    track, claim = rng.choices(pool, weights)[0]
    return {"interval": INTERVALS[interval], "abnormality": track.entity, "claim": claim,
            "actual": track.changes[interval]}


def icr_draft(c: Candidate, window: Window, letter: str, rng: random.Random, prior: Priors) -> Draft:
    """Four interval statements; the one at ``letter`` true unless ``letter`` is E."""
    focus = window.track(c.entity)
    true_at = None if c.null else LETTERS.index(letter)
    if true_at is not None and (true_at != c.interval or focus.changes[true_at] not in DIRECTIONAL):
        raise ValueError(f"ICR: {c.entity} has no directional change at interval {letter}")
    used: Counter[str] = Counter()
    if true_at is not None:
        used[focus.entity] += 1
    statements: list[dict] = []
    for i in range(len(LETTERS)):
        if i == true_at:
            statements.append({"interval": INTERVALS[i], "abnormality": focus.entity, "claim": focus.changes[i],
                               "actual": focus.changes[i]})
        else:
            statements.append(_false_statement(window, i, used, rng, prior))
            used[statements[-1]["abnormality"]] += 1
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
    """Four trajectories of the focus abnormality; the one at ``letter`` true unless E.

    The options are drawn with `exchange.draw` under weights solved from how
    often each trajectory is true for this abnormality, so that given the
    four texts each is equally likely the true one (and a null item's four
    look like any other item's).
    """
    track = window.track(c.entity)
    truth = track.changes
    shown = len(LETTERS) - (letter != NULL_LETTER)
    wrong = prior.sampler(prior.trajectory_weights(c.entity, len(LETTERS) - 1), shown).draw(rng, exclude=[truth])
    claims = {x: (truth if x == letter else wrong.pop()) for x in LETTERS}
    desc = describe(track)
    options = {x: trajectory(desc, seq) for x, seq in claims.items()}
    options[NULL_LETTER] = GTS_NULL
    meta = {"option_claims": {x: {"abnormality": c.entity, "changes": list(s)} for x, s in claims.items()}}
    return Draft(GTS_SINGLE_QUESTION.format(e=c.entity), options, letter, meta)


def gts_multi_draft(c: Candidate, window: Window, letter: str, rng: random.Random, prior: Priors) -> Draft:
    """Four trajectories of four abnormalities; the focus one at ``letter`` true unless E."""
    focus = window.track(c.entity)
    pool = {t.entity: t for t in _multi_pool(window, c.entity)}
    weights = {e: prior.others.get(e, 1.0) for e in pool}
    others = [pool[e] for e in draw(weights, len(LETTERS) - 1, rng)]  # see `multi_other_weights`
    focus_letter = letter if letter != NULL_LETTER else rng.choice(LETTERS)
    claims: dict[str, tuple[Track, tuple[str, ...]]] = {}
    for x in LETTERS:
        track = focus if x == focus_letter else others.pop()
        if x == letter:
            seq = track.changes
        else:
            seq = prior.sampler(prior.multi_false_weights(track.entity), 1).draw(rng, exclude=[track.changes])[0]
        claims[x] = (track, seq)
    options = {x: trajectory(describe(t), seq) for x, (t, seq) in claims.items()}
    options[NULL_LETTER] = GTS_NULL
    meta = {
        "abnormalities": [t.entity for t, _ in claims.values()],
        "option_claims": {x: {"abnormality": t.entity, "changes": list(s)} for x, (t, s) in claims.items()},
    }
    return Draft(GTS_MULTI_QUESTION, options, letter, meta)
