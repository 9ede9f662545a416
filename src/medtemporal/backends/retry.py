"""Retries with exponential backoff and jitter that honour ``Retry-After``, and per-request timeouts.

Only `RetryableError` (rate limits, 5xx, timeouts, dropped connections,
garbled replies) is retried, at most as often as the error itself allows
(`RetryableError.attempts`: a refused connection gets few); a `RequestError` fails at once. When the
attempts run out, the last error is raised with the count of attempts, and
the runner records it against the item.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from medtemporal.backends.base import Response, RetryableError
from medtemporal.errors import InvalidInputError


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try one request.

    Attributes:
        max_attempts: tries per request, the first included.
        base_delay_s: backoff before the first retry; doubles with each retry.
        max_delay_s: longest backoff (before jitter).
        max_retry_after_s: longest wait a server's ``Retry-After`` may impose.
        timeout_s: per-request time limit for remote endpoints (None: no limit).
    """

    max_attempts: int = 6
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    max_retry_after_s: float = 300.0
    timeout_s: float | None = 120.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise InvalidInputError(
                f"The number of attempts (--attempts) must be at least 1, not {self.max_attempts}; "
                "use 1 for no retries."
            )
        if self.timeout_s is not None and not (math.isfinite(self.timeout_s) and self.timeout_s > 0):
            raise InvalidInputError(
                f"The request timeout (--timeout) must be positive, not {self.timeout_s}; use e.g. --timeout 120."
            )

        for name in ("base_delay_s", "max_delay_s", "max_retry_after_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise InvalidInputError(f"The retry setting {name} must be a finite number of 0 or more, not {value}.")

    def delay(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry`` (0-based).

        "Equal jitter": half the exponential backoff plus a uniform random
        half; never less than the server's ``Retry-After`` (capped at
        ``max_retry_after_s``).
        """
        backoff = min(self.max_delay_s, self.base_delay_s * 2**retry)
        wait = backoff / 2 + rng.uniform(0, backoff / 2)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_retry_after_s))
        return wait


async def _within(attempt: Callable[[], Awaitable[Response]], timeout_s: float | None) -> Response:
    """``await attempt()``, cancelled with `TimeoutError` after ``timeout_s`` (None: no limit).

    ``asyncio.timeout`` (Python 3.11 on) runs the attempt in the calling task; ``asyncio.wait_for``
    wraps it in a task of its own, which costs a little CPU on every request.
    """
    if timeout_s is None:
        return await attempt()
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(timeout_s):
            return await attempt()
    return await asyncio.wait_for(attempt(), timeout_s)


async def call_with_retries(
    attempt: Callable[[], Awaitable[Response]],
    policy: RetryPolicy,
    *,
    timeout_s: float | None,
    rng: random.Random | None = None,
    on_retry: Callable[[RetryableError], None] | None = None,
    on_error: Callable[[RetryableError], None] | None = None,
    slot: contextlib.AbstractAsyncContextManager[Any] | None = None,
) -> Response:
    """Run ``attempt`` until it succeeds, retrying `RetryableError` per ``policy``.

    Args:
        attempt: makes one call (a fresh awaitable each time).
        policy: attempts and backoff.
        timeout_s: limit for each attempt; overrunning counts as a retryable ``timeout``.
        rng: jitter source (default: a fresh unseeded one; jitter never affects results).
        on_retry: told of each error that is about to be retried.
        on_error: told of every failed attempt's error, the last one included (e.g. to count timeouts in a row).
        slot: held during each attempt but not during backoff (e.g. the run's concurrency
            semaphore); the timeout starts once it is held, so waiting for it never times out.

    Raises:
        RetryableError: the last error, once ``policy.max_attempts`` are used up.
    """
    rng = rng or random.Random()
    attempts = 0
    while True:
        try:
            async with slot or contextlib.nullcontext():
                response = await _within(attempt, timeout_s)
        except (TimeoutError, asyncio.TimeoutError):  # one class from Python 3.11 on
            error = RetryableError(f"No answer within {timeout_s:g} s.", reason="timeout")
        except RetryableError as exc:
            error = exc
        else:
            if slot is not None:
                await asyncio.sleep(0)  # the task given the freed slot sends its request before the caller goes on
            return response
        attempts += 1
        if on_error is not None:
            on_error(error)
        if attempts >= min(policy.max_attempts, error.attempts or policy.max_attempts):
            tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
            raise RetryableError(
                f"{error} (gave up after {tries})", reason=error.reason, retry_after=error.retry_after
            ) from None
        if on_retry is not None:
            on_retry(error)
        await asyncio.sleep(policy.delay(attempts - 1, error.retry_after, rng))
