"""Baselines through the model interface: ``baseline:random``, ``baseline:constant-X``, ``baseline:majority``,
``baseline:oracle``.

They answer from the request's answer space (`Request.choices`) and, for
the majority baseline, its grouping key (`Request.key`, the item subtype),
so they run through exactly the same runner, cache-free, as real models.
For an ordering request (`Request.ordering`) the random baseline answers a
uniformly random permutation of the identifiers. The oracle answers each
item's true answer (fitted by the runner with `Backend.fit_answers`), to check
that scoring gives full marks. Answers are written in the request's
``answer_format`` (an order as a JSON list).
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import json
import random
from collections import Counter, defaultdict
from typing import Any, Sequence

from medtemporal.backends.base import Backend, Request, RequestError, Response, TextPart
from medtemporal.backends.images import file_sha256
from medtemporal.errors import UnknownNameError
from medtemporal.registry import register
from medtemporal.schema import Item

NAMES = ("random", "constant-<ANSWER>", "majority", "oracle")


def written(request: Request, answer: str | list[str] | tuple[str, ...]) -> str:
    """``answer`` in the request's answer format (an order as a JSON list: ``["D", "B", "A", "C"]``)."""
    text = json.dumps(list(answer), ensure_ascii=False) if isinstance(answer, (list, tuple)) else answer
    return request.answer_format.format(text)


def _closed(request: Request, uri: str) -> tuple[str, ...]:
    if not request.choices:
        raise RequestError(
            f"{uri} answers only closed questions (options or yes/no); this request has no answer space.",
            reason="no_answer_space",
        )
    return request.choices


class RandomBaseline(Backend):
    """A uniformly random valid answer, seeded and fixed by the request's content.

    The same request (text, image contents, answer space, key, seed) gets
    the same answer in every run, whatever the order or concurrency.
    """

    cacheable = False
    takes_volumes = True  # looks at no pixel, so a 3-D volume is as good as any image
    reads_images = False
    answers_open = False  # picks from the answer space: an open question has none

    def __init__(self, uri: str, seed: int = 0) -> None:
        super().__init__(uri=uri, concurrency=64)
        self.seed = seed

    def _content_seed(self, request: Request) -> int:
        h = hashlib.sha256(f"{self.seed}\x00{request.config.seed}\x00{request.key}\x00{request.choices}".encode())
        for message in request.messages:
            for part in message.parts:
                data = part.text if isinstance(part, TextPart) else "\x01" + file_sha256(part.path)
                h.update(data.encode())
        return int.from_bytes(h.digest()[:8], "big")

    async def generate(self, request: Request) -> Response:
        choices = _closed(request, self.uri)
        rng = random.Random(self._content_seed(request))
        answer = rng.sample(choices, len(choices)) if request.ordering else rng.choice(choices)
        return Response(written(request, answer), model=self.uri)

    def identity(self) -> dict[str, Any]:
        return {"uri": self.uri, "seed": self.seed}


class ConstantBaseline(Backend):
    """Always the same answer (``constant-A``, ``constant-Yes``), whatever the question."""

    cacheable = False
    takes_volumes = True  # looks at no pixel, so a 3-D volume is as good as any image
    reads_images = False

    def __init__(self, uri: str, answer: str) -> None:
        super().__init__(uri=uri, concurrency=64)
        self.answer = answer

    async def generate(self, request: Request) -> Response:
        return Response(written(request, self.answer), model=self.uri)

    def identity(self) -> dict[str, Any]:
        return {"uri": self.uri, "answer": self.answer}


def prior_pairs(items: Sequence[Item]) -> list[tuple[str, str]]:
    """The (subtype, answer) pairs a prior baseline learns from: the answer's **label** (its option text) where
    every choice item of the subtype offers the same option texts (a label set, however lettered: MS-CXR-T's
    improving / stable / worsening), else the answer as given (a letter, Yes/No).

    >>> from medtemporal.schema import Item
    >>> items = [Item.create(benchmark="b", task="t", subtype="s", images=[], question="?", answer_type="choice",
    ...          options=dict(zip("AB", texts)), answer="A") for texts in (("up", "down"), ("down", "up"))]
    >>> prior_pairs(items)
    [('s', 'up'), ('s', 'down')]
    """
    sets: dict[str, set[frozenset[Any]]] = defaultdict(set)
    for it in items:
        sets[it.subtype].add(frozenset(it.options.values()) if it.answer_type == "choice" else frozenset())
    labelled = {k for k, v in sets.items() if len(v) == 1 and v != {frozenset()}}
    return [(it.subtype, it.options[it.answer] if it.subtype in labelled and isinstance(it.options.get(it.answer), str)
             else it.answer) for it in items if isinstance(it.answer, str)]


class MajorityBaseline(Backend):
    """The commonest answer of the request's key (subtype), else the commonest overall.

    Learn the frequencies with `fit` from (key, answer) pairs of the benchmark (`prior_pairs`: option texts
    where a subtype's options are one label set, so "the commonest label" however the options are lettered);
    ties go to the alphabetically first. A label is answered with its letter in the request (`Request.labels`);
    an answer outside the request's answer space is never given: the commonest one inside it is used instead.
    """

    cacheable = False
    takes_volumes = True  # looks at no pixel, so a 3-D volume is as good as any image
    reads_images = False
    answers_open = False  # picks from the answer space: an open question has none

    def __init__(self, uri: str) -> None:
        super().__init__(uri=uri, concurrency=64)
        self.by_key: dict[str, Counter[str]] = defaultdict(Counter)
        self.overall: Counter[str] = Counter()

    def fit(self, pairs: list[tuple[str, str]]) -> None:
        self.by_key.clear()
        self.overall.clear()
        for key, answer in pairs:
            self.by_key[key][answer] += 1
            self.overall[answer] += 1

    @staticmethod
    def _top(counts: Counter[str], allowed: tuple[str, ...]) -> str | None:
        ranked = sorted((-n, a) for a, n in counts.items() if a in allowed)
        return ranked[0][1] if ranked else None

    async def generate(self, request: Request) -> Response:
        choices = _closed(request, self.uri)
        if not self.overall:
            raise RequestError(
                f"{self.uri} has not been fitted; call fit() with (subtype, answer) pairs.", reason="not_fitted"
            )
        return Response(request.answer_format.format(self._pick(request, choices)), model=self.uri)

    def _pick(self, request: Request, choices: tuple[str, ...]) -> str:
        """The commonest label among the request's options (its letter), else the commonest answer allowed, for
        its key, then overall."""
        letter_of = dict(zip(request.labels or (), choices))
        for counts in (self.by_key.get(request.key or "", Counter()), self.overall):
            label = self._top(counts, tuple(letter_of))
            if label is not None:
                return letter_of[label]
            answer = self._top(counts, choices)
            if answer is not None:
                return answer
        return sorted(choices)[0]

    def identity(self) -> dict[str, Any]:
        prior = {key: dict(sorted(c.items())) for key, c in sorted(self.by_key.items())}
        return {"uri": self.uri, "prior": prior}


class OracleBaseline(Backend):
    """Each item's true answer, as fitted by the runner: the score every metric gives a perfect model."""

    cacheable = False
    takes_volumes = True  # looks at no pixel, so a 3-D volume is as good as any image
    reads_images = False

    def __init__(self, uri: str) -> None:
        super().__init__(uri=uri, concurrency=64)
        self.answers: dict[str, str | list[str]] = {}

    def fit_answers(self, answers: dict[str, str | list[str]]) -> None:
        self.answers = dict(answers)

    async def generate(self, request: Request) -> Response:
        if request.item is None or request.item not in self.answers:
            raise RequestError(f"{self.uri} does not know the answer of item {request.item!r}; run it with "
                               "`medtemporal run`, which fits it with the benchmark's answers.", reason="not_fitted")
        return Response(written(request, self.answers[request.item]), model=self.uri)

    def identity(self) -> dict[str, Any]:
        return {"uri": self.uri}


class Paced(Backend):
    """A baseline that takes ``latency_s`` per answer, one answer at a time, like a model on one device.

    For benches and tests of scheduling (``bench/ray_scaling.py``); the answers are the baseline's own.
    """

    cacheable = False

    def __init__(self, inner: Backend, latency_s: float) -> None:
        super().__init__(uri=inner.uri, concurrency=inner.concurrency)
        self.inner = inner
        self.latency_s = latency_s
        self._busy: asyncio.Lock | None = None

    async def generate(self, request: Request) -> Response:
        if self._busy is None:
            self._busy = asyncio.Lock()
        async with self._busy:
            await asyncio.sleep(self.latency_s)
        return await self.inner.generate(request)

    @property
    def reads_images(self) -> bool:
        return self.inner.reads_images

    @property
    def answers_open(self) -> bool:
        return self.inner.answers_open

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def settings(self) -> dict[str, Any]:
        return {"latency_s": self.latency_s}

    def fit(self, pairs: list[tuple[str, str]]) -> None:
        self.inner.fit(pairs)

    def fit_answers(self, answers: dict[str, str | list[str]]) -> None:
        self.inner.fit_answers(answers)


@register("backend", "baseline", description="random, constant-<ANSWER>, majority and oracle baselines",
          example="baseline:random")
def load_baseline(uri: str, target: str, *, seed: int = 0, latency_s: float = 0.0) -> Backend:
    """The baseline named by ``target``: ``random``, ``constant-<ANSWER>``, ``majority`` or ``oracle``.

    ``latency_s`` > 0 makes it answer one request at a time, each after that many seconds (see `Paced`).
    """
    if latency_s:
        return Paced(load_baseline(uri, target, seed=seed), float(latency_s))
    if target == "random":
        return RandomBaseline(uri, seed)
    if target == "oracle":
        return OracleBaseline(uri)
    if target == "majority":
        return MajorityBaseline(uri)
    if target.startswith("constant-") and len(target) > len("constant-"):
        return ConstantBaseline(uri, target[len("constant-") :])
    close = difflib.get_close_matches(target, ["random", "majority", "constant-A", "oracle"], n=2)
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    raise UnknownNameError(f"Unknown baseline {target!r}.{hint} Available: {', '.join(NAMES)}.")
