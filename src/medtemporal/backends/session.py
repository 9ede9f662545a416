"""The one owner of model calls: a model as every caller in medtemporal uses it.

`ModelSession.open` loads a model URI (or takes a loaded backend, or starts Ray
replicas of one), puts it through the data-use guard for the data it will
carry (`DataUse`: credentialed data goes only to local addresses, and the
connection is pinned to the addresses checked), and from then on every call —
a run's, a judge's, a captioner's or date writer's, a builder's text step —
takes the same path:

1. the request is checked against the backend's image limit;
2. the response cache is asked (keyed by the backend's identity and the whole
   request, images by content; `medtemporal.backends.cache`);
3. otherwise the backend is called with retries that honour ``Retry-After``,
   a per-attempt timeout for remote endpoints and at most ``concurrency``
   calls in flight (`medtemporal.backends.retry`), and the reply is cached.
   A model that lets `BREAKER` attempts in a row time out trips the session's
   breaker: every call still waiting, and every later one, fails at once with
   one sentence naming the model, instead of each waiting out its timeouts.

Nothing else in medtemporal opens the cache, calls the guard or runs the retry
loop, so every caller gets the same guarantees (a test scans the imports).

>>> import asyncio
>>> from medtemporal.backends.base import Request
>>> session = ModelSession.open("baseline:constant-B", use=DataUse("demo", "synthetic"), no_cache=True)
>>> asyncio.run(session.generate(Request((), choices=("A", "B")))).text
'B'
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medtemporal.backends.base import Backend, Request, RequestError, Response, RetryableError
from medtemporal.backends.cache import ResponseCache, default_cache_path, request_key
from medtemporal.backends.guard import guard_backend
from medtemporal.backends.images import hash_is_cheap
from medtemporal.backends.retry import RetryPolicy, call_with_retries
from medtemporal.backends.uri import hide_credentials, shown_uri
from medtemporal.bounds import CONCURRENCY_MAX, check_range
from medtemporal.errors import BackendError, InvalidInputError
from medtemporal.progress import progress_bar
from medtemporal.schema import Licence

__all__ = ["DataUse", "ModelSession", "Reply", "RetryPolicy", "complete", "default_cache_path"]

BREAKER = 5
"""Attempts in a row that may time out before a session stops asking its model (`ModelSession`'s breaker)."""
PREPARING = 4
"""Requests of a session hashed, looked up and encoded at once: at the start of a run the first request leaves
after its own images are encoded, not after those of every request in flight."""
REPLY_MAX_CHARS = 1_000_000
"""Longest reply kept (about 250,000 tokens, more than any model's output limit): a longer one fails its item
(``reply_too_long``) and is neither cached nor stored, so a runaway server cannot fill the disk."""


@dataclass(frozen=True)
class DataUse:
    """What data a model will be sent, for the data-use guard.

    Attributes:
        benchmark: the benchmark's name (named in a refusal).
        licence: ``credentialed`` data only goes to loopback addresses (or networks declared local); or a function judging the
            licence, called only where the verdict can change where the data goes (`guard.check_data_use`; cache it
            when it is slow, as a run's `run_licence` is).
        allow_remote: the user's explicit permission to send credentialed data elsewhere.
    """

    benchmark: str
    licence: Licence | Callable[[], Licence]
    allow_remote: bool = False


@dataclass(frozen=True)
class Reply:
    """A model's response with how it was obtained."""

    response: Response
    key: str
    """The request's cache key (recorded in predictions as ``request_hash``)."""
    cached: bool
    """True when the response came from the cache."""


class ModelSession:
    """A guarded, cached, retried model; build it with `open`.

    Attributes:
        backend: the backend answering.
        calls: attempts sent to the backend (retries included).
        cache_hits: responses served from the cache.
        served: model names the server reported.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        use: DataUse,
        retry: RetryPolicy = RetryPolicy(),
        concurrency: int | None = None,
        cache_path: str | Path | None = None,
        no_cache: bool = False,
        owned: bool = True,
    ) -> None:
        check_range(concurrency, "The concurrency", 1, CONCURRENCY_MAX)
        self.backend = backend
        self.use = use
        self.retry = retry
        self.concurrency = concurrency or backend.concurrency
        self._cache_path = None if no_cache or not backend.cacheable else Path(cache_path or default_cache_path())
        self._cache: ResponseCache | None = None
        self._owned = owned
        self._slot: asyncio.Semaphore | None = None
        self._preparing: asyncio.Semaphore | None = None
        self._pending: dict[str, asyncio.Future[Response]] = {}
        """Responses on their way, by cache key: a request asked again while its twin is in flight waits for it."""
        self._rng = random.Random()
        self._identity = backend.identity()
        self.calls = 0
        self.cache_hits = 0
        self.served: set[str] = set()
        self.timeouts_in_a_row = 0
        self.broken: str | None = None
        """Why the breaker tripped (the sentence every later call fails with); None while it holds."""
        guard_backend(backend, use.benchmark, use.licence, use.allow_remote)

    @classmethod
    def open(
        cls,
        model: str | Backend,
        *,
        use: DataUse,
        options: Mapping[str, Any] | None = None,
        ray: str | bool | None = None,
        replicas: int | None = None,
        **policy: Any,
    ) -> ModelSession:
        """The session of ``model``: a URI (loaded with ``options``), or a loaded `Backend` (used as it is and
        left open for the caller).

        Args:
            model: model URI or backend.
            use: the data the session will carry (the guard refuses a remote endpoint for credentialed data).
            options: backend options (``dtype``, ``max_pixels``, ``num_gpus`` with ``ray`` ...).
            ray: run replicas on a Ray cluster: True or ``"local"`` for a local one, else its address.
            replicas: how many replicas with ``ray``.
            **policy: ``retry``, ``concurrency``, ``cache_path``, ``no_cache`` (see `ModelSession`).

        Raises:
            InvalidInputError: a bad URI or option, or credentialed data bound for a remote endpoint.
        """
        if replicas is not None and not ray:
            raise InvalidInputError("--replicas applies to runs on Ray; add --ray (alone for a local cluster).")
        if isinstance(model, Backend):
            if options or ray:
                raise InvalidInputError("backend options and ray apply to a model URI; pass the URI, or set them "
                                        "when you build the backend object.")
            return cls(model, use=use, owned=False, **policy)
        backend = _load(model, dict(options or {}), ray, replicas)
        try:
            return cls(backend, use=use, **policy)
        except BaseException:
            _close_soon(backend)
            raise

    @property
    def uri(self) -> str:
        return self.backend.uri

    def identity(self) -> dict[str, Any]:
        """The backend's identity (what keys the cache) as records may keep it: values of options named like
        credentials hidden (`medtemporal.backends.uri.hide_credentials`)."""
        return hide_credentials(self._identity)

    async def key(self, request: Request, sample: int = 0) -> str:
        """The cache key of ``request`` (`medtemporal.backends.cache.request_key` with this backend's identity).

        ``sample`` is the repeat a request belongs to when repeats are distinct samples
        (`medtemporal.runner.repeats.sample_index`).
        """
        if all(hash_is_cheap(path) for path in request.image_paths):
            return request_key(self._identity, request, sample)
        # a new large image: read and hash it off the event loop, which keeps serving calls in flight
        return await asyncio.to_thread(request_key, self._identity, request, sample)

    async def ask(self, request: Request, *, sample: int = 0, key: str | None = None) -> Reply:
        """The reply to ``request``: from the cache, else from the backend with retries.

        ``key`` is the request's `key` when the caller already has it (``sample`` keys the cache otherwise).

        Raises:
            RequestError: the request carries more images than the backend takes, or failed for good.
            RetryableError: the attempts ran out.
        """
        limit = self.backend.max_images
        if limit is not None and request.n_images > limit:
            raise RequestError(
                f"The request has {request.n_images} images but {self.backend.uri} takes at most {limit}; "
                "use a backend that takes more (e.g. max_images) or a protocol that sends fewer.",
                reason="too_many_images",
            )
        if self._preparing is None:
            self._preparing = asyncio.Semaphore(PREPARING)
        pending: asyncio.Future[Response] | None = None
        try:
            async with self._preparing:  # a request in hand is sent before the next ones are hashed and encoded
                key = key or await self.key(request, sample)
                cache = self._open_cache()
                cached = cache.get(key) if cache is not None else None
                if cached is not None:
                    self.cache_hits += 1
                    self._seen(cached)
                    return Reply(cached, key, True)
                twin = self._pending.get(key)
                if twin is None:
                    pending = asyncio.get_running_loop().create_future()
                    if cache is not None:  # no cache, no sharing: every request is asked
                        self._pending[key] = pending
                    await self.backend.prepare(request)
            if twin is not None:
                response = await asyncio.shield(twin)
                self.cache_hits += 1
                return Reply(response, key, True)
            response = await self._call(request)
            if cache is not None:
                cache.put(key, response)
            pending.set_result(response)  # type: ignore[union-attr]
        except Exception as exc:
            if pending is not None and not pending.done():
                pending.set_exception(exc)
                pending.exception()  # retrieved: the twins waiting, if any, raise it; none waiting is no warning
            raise
        finally:
            if pending is not None:
                if not pending.done():
                    pending.cancel()  # cancelled: its twins are cancelled with it
                if key is not None and self._pending.get(key) is pending:
                    del self._pending[key]
        self._seen(response)
        return Reply(response, key, False)

    async def _call(self, request: Request) -> Response:
        """The backend's response to ``request`` with retries, under the concurrency slot and the breaker."""
        if self._slot is None:
            self._slot = asyncio.Semaphore(self.concurrency)

        async def attempt() -> Response:
            if self.broken is not None:
                raise RequestError(self.broken, reason="model_not_answering")
            self.calls += 1
            return await self.backend.generate(request)

        timeout = self.retry.timeout_s if self.backend.endpoint is not None else None
        response = await call_with_retries(attempt, self.retry, timeout_s=timeout, rng=self._rng, slot=self._slot,
                                           on_error=self._failed)
        self.timeouts_in_a_row = 0
        if len(response.text) > REPLY_MAX_CHARS:
            raise RequestError(
                f"{self.backend.uri} replied with {len(response.text):,} characters, more than the {REPLY_MAX_CHARS:,} "
                "medtemporal keeps; set --max-tokens (or the server's output limit) lower.", reason="reply_too_long")
        return response

    async def generate(self, request: Request) -> Response:
        """The response to ``request`` (a protocol's ``generate``)."""
        return (await self.ask(request)).response

    async def ask_each(
        self,
        requests: Sequence[Request],
        on_reply: Callable[[int, Reply | None, BackendError | None], None],
        *,
        desc: str,
        unit: str = "call",
        progress: bool = True,
    ) -> None:
        """Ask every request at once (bounded by the concurrency) and hand each outcome to
        ``on_reply(index, reply, error)`` as it arrives, under a progress bar labelled ``desc``
        (`medtemporal.progress.progress_bar`: shown where a person watches)."""
        bar = progress_bar(total=len(requests), desc=desc, unit=unit, leave=False, disable=not progress)

        async def one(k: int, request: Request) -> None:
            try:
                reply, error = await self.ask(request), None
            except BackendError as exc:
                reply, error = None, exc
            on_reply(k, reply, error)
            bar.update()

        try:
            await asyncio.gather(*(one(k, r) for k, r in enumerate(requests)))
        finally:
            bar.close()

    def complete(self, requests: Sequence[Request], *, desc: str) -> list[str]:
        """The text of the reply to each request, in order, then the session is closed (a builder's
        LLM-assisted text step, from synchronous code); the first failure is raised."""

        async def ask_all() -> list[str]:
            texts: list[str] = [""] * len(requests)
            errors: list[BackendError] = []

            def keep(k: int, reply: Reply | None, error: BackendError | None) -> None:
                if error is not None:
                    errors.append(error)
                elif reply is not None:
                    texts[k] = reply.response.text

            try:
                await self.ask_each(requests, keep, desc=desc)
            finally:
                await self.aclose()
            if errors:
                raise errors[0]
            return texts

        return asyncio.run(ask_all())

    def _failed(self, error: RetryableError) -> None:
        """Count an attempt that timed out (any other failure, like an answer, ends the streak); trip the breaker
        at `BREAKER` in a row."""
        if error.reason != "timeout":
            self.timeouts_in_a_row = 0
            return
        self.timeouts_in_a_row += 1
        if self.timeouts_in_a_row >= BREAKER and self.broken is None:
            self.broken = (
                f"{shown_uri(self.backend.uri)} let {self.timeouts_in_a_row} requests in a row time out (after "
                f"{self.retry.timeout_s:g} s each), so medtemporal stopped asking it; check that it is up and not "
                "overloaded (or allow more time), then run the same command again.")

    def _open_cache(self) -> ResponseCache | None:
        if self._cache is None and self._cache_path is not None:
            self._cache = ResponseCache(self._cache_path)
        return self._cache

    def _seen(self, response: Response) -> None:
        if response.model:
            self.served.add(response.model)

    async def aclose(self) -> None:
        """Close the cache, and the backend when the session loaded it."""
        if self._cache is not None:
            self._cache.close()
            self._cache = None
        if self._owned:
            await self.backend.aclose()

    def close(self) -> None:
        """`aclose` from synchronous code (no event loop running)."""
        asyncio.run(self.aclose())


def complete(model: str, requests: Sequence[Request], *, use: DataUse, desc: str, **policy: Any) -> list[str]:
    """The text of ``model``'s reply to each request, in order: `ModelSession.complete` of a new session."""
    return ModelSession.open(model, use=use, **policy).complete(requests, desc=desc)


def _load(uri: str, options: dict[str, Any], ray: str | bool | None, replicas: int | None) -> Backend:
    from medtemporal.backends import load

    if not ray:
        return load(uri, **options)
    from medtemporal.backends.ray_pool import RayPool

    address = None if ray is True or ray == "local" else str(ray)
    resources = {k: options.pop(k) for k in ("num_gpus", "num_cpus") if k in options}
    return RayPool(uri, options, address=address, replicas=replicas, **resources)


def _close_soon(backend: Backend) -> None:
    """Close a backend that will not be used: now outside an event loop, else as a task of the running one."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(backend.aclose())
    else:
        loop.create_task(backend.aclose())
