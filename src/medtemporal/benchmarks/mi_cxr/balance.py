"""Question-level balancing (MI-CXR appendix A.5.2), deterministic for a seed.

Candidates of one question type are gathered in a `Pool`, each with a seeded
random score (a shuffle that does not depend on how many candidates follow).
`select` then fills the type's quota:

* null-answer cap — at most ``round(n * null)`` items whose answer is the
  null option E, ``n`` the quota or, if smaller, the number of distinct keys
  (so that nulls, admitted first, cannot take every question of a small
  cohort), and, when the candidates cannot fill the quota, no more than
  a ``null`` share of the items chosen (the default, 0.2, is one option in
  five, which is what keeps the five letters uniform). ``Caps.null`` is the
  cap of a type whose answers can take all four letters A–D; where the
  candidates can take only ``k`` of them (``multiple_*_2``: C and D), the cap
  is scaled so that E keeps its ratio to one letter's share (`null_share`:
  1/(k+1) for the default, a third for ``_2``);
* abnormality mix (§3.2: "abnormality types are sampled to match their
  overall frequency distribution") — each abnormality first gets at most its
  Table 10 share of the quota, rounded up; only if the candidates cannot
  fill the quota that way does the per-abnormality cap alone apply;
* per-abnormality cap — no abnormality is the focus of more than
  ``floor(quota * abnormality)`` items of the type;
* certainty-pattern cap — at most ``floor(quota * uniform_pattern)`` items whose
  focus abnormality is uniformly present or uniformly absent over the window,
  and no more than a ``uniform_pattern`` share of the items chosen where the
  quota is not filled (the selection is made again admitting fewer);
* mutually exclusive keys — two candidates with one `Candidate.key` (the same
  window and question) never both enter;
* among non-null candidates whose correct letter is fixed by the data (the TEL
  interval options, ICR statements), letters are drawn round-robin so each
  letter is equally represented, and no letter ends more than one item ahead
  of the rarest one the data gives (`_level_letters`; nulls are then trimmed
  back to their share, overall and per abnormality, `_spread_nulls`); so are the claims of ICR-V's true options
  (`Candidate.claim`), whose four statements every item shows.

`assign_letters` then places the correct option of every selected item:
fixed letters first, then items whose options may be shuffled, each taking
the allowed letter its question type used least so far, so A–D end up
uniform within each shuffleable type and over the whole benchmark.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterable, Mapping

NULL_LETTER = "E"
OPTION_LETTERS = ("A", "B", "C", "D")
"""The non-null answer letters of every question."""


@dataclass(slots=True, unsafe_hash=True)
class Candidate:
    """A question that could be asked of one window, before its text exists.

    Treated as immutable, but not a frozen dataclass: those take about seven times longer to build, and a
    MIMIC-scale build keeps millions of candidates.
    """

    qtype: str
    window: int
    """Index of the window in the builder's sorted window list."""
    entity: str
    """The focus abnormality (the one the correct option, or the question, is about)."""
    null: bool
    """True when the correct answer is the null option E."""
    letters: tuple[str, ...]
    """The letters the correct option may take (one when the data fixes it; E when null)."""
    pattern: str
    """Certainty pattern of the focus abnormality for balancing: all_pos, all_neg or mixed."""
    key: Hashable
    """Candidates sharing a key are alternatives of one question: at most one is selected."""
    interval: int | None = None
    """The interval (0-based) the question or its true statement concerns, where there is one."""
    claim: str = ""
    """What the correct option states where every item offers the same statements in shuffled order (ICR-V's
    four change categories): balanced like a fixed letter, since the statement alone would otherwise point to
    the answer. Empty where the options differ per item."""

    @property
    def group(self) -> tuple[str, ...] | None:
        """The answer group that `select` keeps level: the fixed letter, else the claim; None for neither."""
        if self.null:
            return None
        if len(self.letters) == 1:
            return self.letters
        return (self.claim,) if self.claim else None

    @property
    def uniform(self) -> bool:
        """True when the focus abnormality is all present or all absent over the window."""
        return self.pattern != "mixed"


Fields = tuple[Any, ...]
"""A `Candidate`'s fields in order (trailing defaults may be left out): what the candidate makers yield, so
that a `Pool` builds only the candidates it keeps (at MIMIC scale, a few percent of millions)."""


@dataclass(frozen=True)
class Caps:
    """The balancing caps, as fractions of a question type's quota (and of its items where the quota is not
    filled). Appendix A.5.2 names these caps but gives no values: the defaults are ours (0.2 keeps E at one
    letter's share of five)."""

    null: float = 0.2
    abnormality: float = 0.35
    uniform_pattern: float = 0.1


@dataclass
class Pool:
    """Candidates of one question type in seeded random order.

    Uniform-pattern candidates (the vast majority on real data: Table 11 has
    915k of 1.17M windows uniform) are kept only up to ``uniform_keep``, the
    best-scored ones, since the pattern cap admits few of them anyway.
    """

    rng: random.Random
    uniform_keep: int
    _mixed: list[tuple[float, int, Fields]] = field(default_factory=list)
    _uniform: list[tuple[float, int, Fields]] = field(default_factory=list)
    seen: int = 0
    """Candidates added (kept or not); also each candidate's tie-breaking number."""

    def add(self, fields: Fields) -> None:
        """Score the candidate of ``fields`` and keep it (a uniform-pattern one only while among the best
        scored)."""
        score, n = self.rng.random(), self.seen
        self.seen = n + 1
        if fields[5] == "mixed":  # Candidate.pattern
            self._mixed.append((score, n, fields))
        elif len(self._uniform) < self.uniform_keep:
            heapq.heappush(self._uniform, (-score, n, fields))
        elif -self._uniform[0][0] > score:
            heapq.heapreplace(self._uniform, (-score, n, fields))

    def ordered(self) -> list[Candidate]:
        """Kept candidates, shuffled by score."""
        uniform = [(-s, n, f) for s, n, f in self._uniform]
        return [Candidate(*f) for _, _, f in sorted(self._mixed + uniform)]  # (score, number) are unique


def quotas(total: int, weights: Mapping[str, int]) -> dict[str, int]:
    """Split ``total`` over ``weights`` proportionally (largest remainder, ties by order).

    >>> quotas(10, {"a": 1, "b": 1, "c": 1})
    {'a': 4, 'b': 3, 'c': 3}
    """
    whole = sum(weights.values())
    if whole <= 0:
        return {k: 0 for k in weights}
    exact = {k: total * w / whole for k, w in weights.items()}
    out = {k: math.floor(v) for k, v in exact.items()}
    position = {k: i for i, k in enumerate(weights)}
    order = sorted(weights, key=lambda k: (-(exact[k] - out[k]), position[k]))
    for k in order[: total - sum(out.values())]:
        out[k] += 1
    return out


def null_share(null: float, k: int) -> float:
    """The null cap of a question type whose answers can take ``k`` of the four letters A–D.

    ``null`` is the cap where all four can answer. With ``k`` letters each
    non-null letter's share is ``(1 - share) / k``; keeping E's ratio to it
    as for four letters, ``null / ((1 - null) / 4)``, gives
    ``null / (null + (1 - null) * k / 4)``: 1/(k+1) for the default 0.2, so
    E answers as often as each letter the data can give and "always the
    commonest letter" scores 1/(k+1), the lowest the question allows.
    ``k`` of 0 or 4 and more leave ``null`` as given.

    >>> round(null_share(0.2, 2), 4), null_share(0.2, 4), round(null_share(0.1, 2), 4)
    (0.3333, 0.2, 0.1818)
    """
    if not 0 < k < len(OPTION_LETTERS) or null <= 0:
        return null
    return null / (null + (1 - null) * k / len(OPTION_LETTERS))


def select(
    candidates: Iterable[Candidate], quota: int, caps: Caps, mix: Mapping[str, float] | None = None
) -> list[Candidate]:
    """Pick up to ``quota`` candidates (already in random order) under the caps of the module docstring.

    Null candidates are admitted first, up to the quota-based limit, then
    non-null ones, their fixed letters round-robin. With ``mix`` (abnormality
    → target share, §3.2 and Table 10) an abnormality first gets at most its
    share of the quota, rounded up; if that leaves the quota unfilled, the
    per-abnormality cap alone applies to the rest. If the quota is still
    unfilled, nulls beyond a ``caps.null`` share of the chosen items are
    dropped again (`_trim_nulls`). The null cap is ``caps.null`` scaled to the
    letters the non-null candidates can take (`null_share`).

    The uniform-pattern cap holds on what is chosen, not only on the quota:
    where the candidates cannot fill the quota, the selection is made again
    with fewer uniform items admitted until they are at most a
    ``caps.uniform_pattern`` share of it (mixed candidates take their place;
    each round admits fewer, so it ends).
    """
    candidates = list(candidates)
    share = caps.uniform_pattern
    limit_uniform = math.floor(quota * share)
    while True:
        chosen = _select(candidates, quota, caps, mix, limit_uniform)
        n_uniform = sum(c.uniform for c in chosen)
        allowed = math.floor((len(chosen) - n_uniform) * share / (1 - share) + 1e-9) if share < 1 else n_uniform
        if n_uniform <= allowed:
            return chosen
        limit_uniform = min(limit_uniform - 1, allowed)


def _select(candidates: list[Candidate], quota: int, caps: Caps, mix: Mapping[str, float] | None,
            limit_uniform: int) -> list[Candidate]:
    """One selection of `select` with at most ``limit_uniform`` uniform-pattern items."""
    null = null_share(caps.null, len({x for c in candidates if not c.null for x in c.letters}))
    limit_null = round(min(quota, len({c.key for c in candidates})) * null)
    cap = max(1, math.floor(quota * caps.abnormality))
    chosen: list[Candidate] = []
    keys: set[Hashable] = set()
    per_abn: Counter[str] = Counter()
    n_uniform = 0
    total = sum(mix.values()) if mix else 0.0
    stages = ([{e: min(cap, math.ceil(quota * v / total)) for e, v in mix.items()}] if total else []) + [None]
    for limits in stages:

        def admit(c: Candidate) -> bool:
            nonlocal n_uniform
            limit = cap if limits is None else limits.get(c.entity, 0)
            if c.key in keys or per_abn[c.entity] >= limit or (c.uniform and n_uniform >= limit_uniform):
                return False
            keys.add(c.key)
            per_abn[c.entity] += 1
            n_uniform += c.uniform
            chosen.append(c)
            return True

        _fill(candidates, quota, limit_null, chosen, admit)
        if len(chosen) >= quota:
            break
    spread = _spread_nulls(_level_letters(chosen), candidates, null, cap, limit_uniform)
    return chosen if spread == chosen else _trim_nulls(spread, null)


def _fill(candidates: list[Candidate], quota: int, limit_null: int, chosen: list[Candidate],
          admit: Callable[[Candidate], bool]) -> None:
    """Admit nulls up to ``limit_null``, then non-null candidates with their fixed letters round-robin."""
    n_null = sum(x.null for x in chosen)
    for c in candidates:
        if n_null >= limit_null or len(chosen) >= quota:
            break
        if c.null and admit(c):
            n_null += 1
    queues: dict[tuple[str, ...], list[Candidate]] = {}
    for c in candidates:
        if not c.null:
            queues.setdefault(c.group or c.letters, []).append(c)
    taken: Counter[tuple[str, ...]] = Counter(x.group or x.letters for x in chosen if not x.null)
    heads = {k: 0 for k in queues}
    while len(chosen) < quota and heads:
        group = min(heads, key=lambda k: (taken[k], k))
        queue, i = queues[group], heads[group]
        while i < len(queue) and not admit(queue[i]):
            i += 1
        if i >= len(queue):
            del heads[group]
            continue
        heads[group] = i + 1
        taken[group] += 1


def _level_letters(chosen: list[Candidate]) -> list[Candidate]:
    """Drop the last-admitted non-null candidates of any fixed letter (or claim, `Candidate.group`) beyond one
    more than the rarest one's.

    Where the data fixes the correct letter and some letters are rarer (a
    second emergence is at C only when the first is at A; most are at D),
    filling the quota round-robin would let the common letters run on once the
    rare one is used up, and the letter alone would then predict the answer
    (`medtemporal audit`: "always D" on ``multiple_*_2``). Letters the data
    can never give (A and B for a second event) are not among the groups, so
    they cost nothing.
    """
    groups = Counter(c.group for c in chosen if c.group is not None)
    if len(groups) < 2:
        return chosen
    cap = min(groups.values()) + 1
    seen: Counter[tuple[str, ...]] = Counter()
    kept = []
    for c in chosen:
        if c.group is not None:
            seen[c.group] += 1
            if seen[c.group] > cap:
                continue
        kept.append(c)
    return kept


def _spread_nulls(chosen: list[Candidate], candidates: list[Candidate], null: float, cap: int,
                  limit_uniform: int) -> list[Candidate]:
    """Keep each abnormality's null answers within a ``null`` share of its items, swapping the excess for
    nulls of other abnormalities (in the candidates' random order) where the caps and keys allow.

    Nulls are admitted before the abnormality mix fills the rest, so an abnormality whose events are rare
    took its share mostly as nulls (on an 800-patient phantom build, "vascular congestion" questions were
    answered E 57% of the time and "pleural effusion" ones 7%), and the abnormality the question names
    told a blind reader when to answer E.
    """
    if null >= 1:
        return chosen
    non_null = Counter(c.entity for c in chosen if not c.null)
    allowed = {e: max(1, math.ceil(n * null / (1 - null) - 1e-9)) for e, n in non_null.items()}
    seen: Counter[str] = Counter()
    kept = []
    for c in chosen:
        if c.null:
            if seen[c.entity] >= allowed.get(c.entity, 1):
                continue
            seen[c.entity] += 1
        kept.append(c)
    missing = len(chosen) - len(kept)
    if not missing:
        return chosen
    keys = {c.key for c in kept}
    per_abn = Counter(c.entity for c in kept)
    n_uniform = sum(c.uniform for c in kept)
    for c in candidates:
        if missing == 0:
            break
        if (not c.null or c.key in keys or seen[c.entity] >= allowed.get(c.entity, 1) or per_abn[c.entity] >= cap
                or (c.uniform and n_uniform >= limit_uniform)):
            continue
        kept.append(c)
        keys.add(c.key)
        seen[c.entity] += 1
        per_abn[c.entity] += 1
        n_uniform += c.uniform
        missing -= 1
    return kept


def _trim_nulls(chosen: list[Candidate], null: float) -> list[Candidate]:
    """Drop the last-admitted null answers beyond a ``null`` share of what was chosen.

    The quota-based limit alone lets nulls dominate when a small cohort cannot
    fill the quota with non-null questions. ``n`` nulls beside ``k`` non-null
    items are a share ``n / (n + k) <= null`` exactly when
    ``n <= k * null / (1 - null)``, rounded down.
    """
    if null >= 1:
        return chosen
    non_null = sum(not c.null for c in chosen)
    allowed = math.floor(non_null * null / (1 - null) + 1e-9)  # 1e-9: 172 * 0.2 / 0.8 is 42.99999...
    kept: list[Candidate] = []
    for c in chosen:
        if c.null:
            if allowed == 0:
                continue
            allowed -= 1
        kept.append(c)
    return kept


def assign_letters(selected: list[Candidate], rng: random.Random) -> list[str]:
    """The correct letter of each selected candidate, balancing A–D within each question type.

    Candidates whose letter the data fixes take it; each of the others takes the
    letter its question type has used least so far (ties: the letter used least
    over the whole benchmark, then ``rng``), so a per-type answer prior gives no
    edge where the options may be shuffled. Null items take no part in the
    random order, so how many there are never moves another item's letter.
    """
    overall: Counter[str] = Counter()
    per_type: dict[str, Counter[str]] = {}
    letters = [NULL_LETTER] * len(selected)
    order = [i for i, c in enumerate(selected) if not c.null]
    rng.shuffle(order)
    order.sort(key=lambda i: len(selected[i].letters))
    for i in order:
        c = selected[i]
        mine = per_type.setdefault(c.qtype, Counter())
        rank = {x: (mine[x], overall[x]) for x in c.letters}
        least = min(rank.values())
        ties = [x for x in c.letters if rank[x] == least]
        letters[i] = ties[0] if len(ties) == 1 else rng.choice(ties)
        mine[letters[i]] += 1
        overall[letters[i]] += 1
    return letters
