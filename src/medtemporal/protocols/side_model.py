"""A second model a protocol calls besides the run's (a captioner, a date writer).

Named by URI and opened by the runner with `open`, which puts it through the
same data-use guard as the run's model; its calls go through retries and the
shared response cache. Without a URI, the run's own ``generate`` is used.
"""

from __future__ import annotations

from typing import Any

from medtemporal.backends.base import Backend, Request, Response
from medtemporal.errors import InvalidInputError
from medtemporal.protocols.base import Generate


class SideModel:
    """Calls to the model ``uri`` (or to the run's model when ``uri`` is None)."""

    def __init__(self, uri: str | None) -> None:
        self.uri = uri
        self._backend: Backend | None = None
        self._cache: Any = None

    def open(self, benchmark: str, licence: str, allow_remote_data: bool) -> None:
        """Load the side model once, refusing (or pinning) it as the data-use guard does the run's model."""
        if self.uri is None or self._backend is not None:
            return
        from medtemporal.backends import load
        from medtemporal.runner.cache import ResponseCache, default_cache_path
        from medtemporal.runner.guard import guard_backend

        backend = load(self.uri)
        guard_backend(backend, benchmark, licence, allow_remote_data)
        self._backend = backend
        self._cache = ResponseCache(default_cache_path()) if backend.cacheable else None

    async def generate(self, request: Request, run_generate: Generate) -> Response:
        """The response of the side model to ``request`` (cached, retried)."""
        if self.uri is None:
            return await run_generate(request)
        from medtemporal.runner.cache import request_key
        from medtemporal.runner.retry import RetryPolicy, call_with_retries

        if self._backend is None:
            raise InvalidInputError(f"The side model {self.uri} was not opened; open it with the benchmark's licence "
                                    "first (`medtemporal run` does).")
        backend = self._backend
        key = request_key(backend.identity(), request)
        cached = self._cache.get(key) if self._cache is not None else None
        if cached is not None:
            return cached
        policy = RetryPolicy()
        response = await call_with_retries(lambda: backend.generate(request), policy,
                                           timeout_s=policy.timeout_s if backend.endpoint else None)
        if self._cache is not None:
            self._cache.put(key, response)
        return response
