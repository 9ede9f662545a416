"""Distractors drawn so that, from the option texts alone, every option is equally likely the answer.

An option set is the true value ``t`` plus ``k`` distractors. If the
distractors are a random set ``R`` (``t`` not in it) drawn with probability
proportional to ``prod(w[r] for r in R)`` (conditional Poisson sampling), then

    P(truth = t, options = S)  =  p(t) * prod(w[S - t]) / e_k(w without t)

where ``p`` is how often each value is the truth and ``e_k`` the elementary
symmetric polynomial of degree ``k``. Choosing ``w`` so that
``w[t] * e_k(w without t)`` is proportional to ``p(t)`` (`solve_weights`, a
fixed point) makes this ``prod(w[S]) / c``: the same for every member of
``S``. Given the set, each option is then the truth with probability
1 / (k + 1), whatever rule a reader applies to the texts (appendix A.5.2:
answers must carry no shortcut; `medtemporal audit` measures it). A null item
(answer E) shows ``k + 1`` values drawn the same way, none of them true.

>>> w = solve_weights({"a": 2, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1}, 3)
>>> round(w["a"] * elementary(without(w, "a"), 3)[3] / (w["b"] * elementary(without(w, "b"), 3)[3]), 3)
2.0
"""

from __future__ import annotations

import random
from typing import Generic, Hashable, Mapping, Sequence, TypeVar

T = TypeVar("T", bound=Hashable)
CLIP = 0.95
"""A value's share of the truths is clipped to this fraction of ``1 / (k + 1)``, the most that exchangeable
sets allow; beyond it (one trajectory the truth of most items) the sets are as close to exchangeable as can be."""
FLOOR = 1e-9
"""Smallest weight kept, so that sampling never divides by an underflowed zero."""


def elementary(w: Sequence[float] | Mapping[T, float], k: int) -> list[float]:
    """``[e_0, …, e_k]`` of the values ``w``."""
    e = [1.0] + [0.0] * k
    for x in (w.values() if isinstance(w, Mapping) else w):
        for j in range(k, 0, -1):
            e[j] += x * e[j - 1]
    return e


def without(w: Mapping[T, float], t: T) -> dict[T, float]:
    """``w`` less the key ``t``."""
    return {s: v for s, v in w.items() if s != t}


def solve_weights(p: Mapping[T, float], k: int, iterations: int = 300) -> dict[T, float]:
    """Weights ``w`` (summing to one) with ``w[t] * e_k(w without t)`` proportional to ``p[t]``.

    Keys with ``p`` zero or below are left out; there must be more than ``k`` others.
    """
    keys = sorted((t for t, v in p.items() if v > 0), key=repr)
    if len(keys) <= k:
        raise ValueError(f"need more than {k} values with a positive frequency, got {len(keys)}")
    total = sum(p[t] for t in keys)
    target = [p[t] / total for t in keys]
    for _ in range(50):  # no value can be the truth of more than 1 / (k + 1) of the sets it is in: clip to that
        clipped = [min(x, CLIP / (k + 1)) for x in target]
        target = [x / sum(clipped) for x in clipped]
        if max(target) <= CLIP / (k + 1) + 1e-12:
            break
    w = list(target)
    for _ in range(iterations):
        e = elementary(w, k)
        new = []
        for wt, pt in zip(w, target):
            rest = [1.0]
            for j in range(1, k + 1):  # e_j(w without t) = e_j - w_t * e_{j-1}(w without t)
                rest.append(e[j] - wt * rest[j - 1])
            new.append(pt / max(rest[k], 1e-300))
        s = sum(new)
        new = [max(x / s, FLOOR) for x in new]
        if max(abs(a - b) for a, b in zip(new, w)) < 1e-12:
            w = new
            break
        w = new
    return dict(zip(keys, w))


class Sampler(Generic[T]):
    """`draw` from fixed weights, with the key order and the table of ``e_j`` of every key suffix made once.

    A draw that excludes keys recomputes only the rows up to the last excluded key; the rows after it are
    the same floats either way, so the draws are those of `draw`.
    """

    def __init__(self, w: Mapping[T, float], k: int) -> None:
        self.w, self.k = w, k
        self.keys = [t for t in sorted(w, key=repr) if w[t] > 0]
        self.position = {t: i for i, t in enumerate(self.keys)}
        self.rows = _suffix_rows(self.keys, w, k, [[1.0] + [0.0] * k])

    def draw(self, rng: random.Random, exclude: Sequence[T] = ()) -> list[T]:
        """``k`` distinct keys (none in ``exclude``), a set drawn with probability ∝ the product of weights."""
        w, k = self.w, self.k
        excluded = set(exclude)
        hits = [self.position[t] for t in excluded if t in self.position]
        if hits:
            last = max(hits)
            head = [t for t in self.keys[: last + 1] if t not in excluded]
            keys = head + self.keys[last + 1 :]
            rows = _suffix_rows(head, w, k, self.rows[last + 1 :])
        else:
            keys, rows = self.keys, self.rows
        if len(keys) < k:
            raise ValueError(f"cannot draw {k} distractors from {len(keys)} values")
        # sequential conditional Poisson sampling in the fixed key order
        chosen: list[T] = []
        need = k
        for i, t in enumerate(keys):
            if need == 0:
                break
            if rng.random() < w[t] * rows[i + 1][need - 1] / rows[i][need]:
                chosen.append(t)
                need -= 1
        rng.shuffle(chosen)
        return chosen


def _suffix_rows(keys: Sequence[T], w: Mapping[T, float], k: int, tail: list[list[float]]) -> list[list[float]]:
    """``[e_0 … e_k]`` of ``keys[i:]`` plus the keys whose rows ``tail`` holds (``tail[0]`` the first of
    them; ``[[1, 0, …]]`` for none), for each ``i``, followed by ``tail``."""
    rows = [[0.0] * (k + 1) for _ in keys] + tail
    for i in range(len(keys) - 1, -1, -1):
        x, row, after = w[keys[i]], rows[i], rows[i + 1]
        row[0] = 1.0
        for j in range(1, k + 1):
            row[j] = after[j] + x * after[j - 1]
    return rows


def draw(w: Mapping[T, float], k: int, rng: random.Random, exclude: Sequence[T] = ()) -> list[T]:
    """``k`` distinct keys of ``w`` (none in ``exclude``), a set drawn with probability ∝ the product of weights.

    Sequential conditional Poisson sampling in a fixed key order; the result is shuffled. Drawing often
    from the same weights: `Sampler`.
    """
    return Sampler(w, k).draw(rng, exclude)
