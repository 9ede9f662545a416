import asyncio
import random
import time

import pytest

from medtemporal.backends.base import RequestError, Response, RetryableError
from medtemporal.errors import InvalidInputError
from medtemporal.backends.retry import RetryPolicy, call_with_retries


def test_backoff_doubles_with_jitter_up_to_the_cap_and_honours_retry_after():
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0, max_retry_after_s=30.0)
    rng = random.Random(0)
    for retry, cap in enumerate([1, 2, 4, 8, 8, 8]):
        delays = [policy.delay(retry, None, rng) for _ in range(200)]
        assert cap / 2 <= min(delays) and max(delays) <= cap
        assert max(delays) - min(delays) > cap / 4  # jittered
    assert all(policy.delay(0, 12.0, rng) >= 12.0 for _ in range(50))
    assert policy.delay(0, 3600.0, rng) == 30.0  # capped


def _flaky(errors):
    calls = []

    async def attempt():
        calls.append(time.perf_counter())
        if len(calls) <= len(errors):
            error = errors[len(calls) - 1]
            if error == "hang":
                await asyncio.sleep(10)
            raise error
        return Response("ok")

    return calls, attempt


FAST = RetryPolicy(base_delay_s=0.01, max_delay_s=0.02)


def test_transient_errors_are_retried_until_success():
    errors = [RetryableError("429", reason="rate_limited"), RetryableError("500", reason="server_error"), "hang"]
    calls, attempt = _flaky(errors)
    seen = []
    response = asyncio.run(call_with_retries(attempt, FAST, timeout_s=0.1, on_retry=seen.append))
    assert response.text == "ok" and len(calls) == 4
    assert [e.reason for e in seen] == ["rate_limited", "server_error", "timeout"]


def test_retry_after_is_waited_for():
    calls, attempt = _flaky([RetryableError("429", reason="rate_limited", retry_after=0.3)])
    asyncio.run(call_with_retries(attempt, FAST, timeout_s=None))
    assert calls[1] - calls[0] >= 0.3


def test_permanent_errors_are_not_retried():
    calls, attempt = _flaky([RequestError("bad", reason="http_400")])
    with pytest.raises(RequestError):
        asyncio.run(call_with_retries(attempt, FAST, timeout_s=None))
    assert len(calls) == 1


def test_giving_up_keeps_the_reason_and_says_how_often_it_tried():
    calls, attempt = _flaky([RetryableError("down", reason="connection")] * 10)
    with pytest.raises(RetryableError, match="gave up after 3 attempts") as err:
        asyncio.run(call_with_retries(attempt, RetryPolicy(max_attempts=3, base_delay_s=0.01), timeout_s=None))
    assert err.value.reason == "connection" and len(calls) == 3


def test_bad_policies_are_refused():
    with pytest.raises(InvalidInputError, match="at least 1"):
        RetryPolicy(max_attempts=0)
    with pytest.raises(InvalidInputError, match="positive"):
        RetryPolicy(timeout_s=0)


def test_the_slot_is_held_only_during_attempts_and_the_timeout_starts_once_it_is():
    async def quick():
        await asyncio.sleep(0.05)
        return Response("ok")

    async def main():
        slot = asyncio.Semaphore(1)
        async with slot:  # someone else's request holds the only slot for longer than the timeout
            waiting = asyncio.create_task(call_with_retries(quick, FAST, timeout_s=0.1, slot=slot))
            await asyncio.sleep(0.2)
        first = await waiting
        calls, attempt = _flaky([RetryableError("429", reason="rate_limited", retry_after=0.3)])
        retrying = asyncio.create_task(call_with_retries(attempt, FAST, timeout_s=None, slot=slot))
        await asyncio.sleep(0.1)  # the first attempt failed; backing off
        free_during_backoff = not slot.locked()
        return first, free_during_backoff, await retrying, len(calls)

    first, free, second, calls = asyncio.run(main())
    assert first.text == "ok" and free and second.text == "ok" and calls == 2
