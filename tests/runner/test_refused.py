"""A refused connection is named as such and stops a run after a short streak; a timeout stays a timeout.

Both through the real ``openai`` client (its aiohttp and httpx transports) against a loopback port where
nothing listens: a socket bound to it without ``listen`` makes the kernel refuse every connection.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import pytest
from helpers.tiny import make_tiny_benchmark

from medtemporal.backends import load
from medtemporal.backends.base import (
    REFUSED,
    Message,
    Request,
    RetryableError,
    TextPart,
)
from medtemporal.backends.openai_http import REFUSED_ATTEMPTS
from medtemporal.runner import run
from medtemporal.runner._run import REFUSED_STREAK

CLIENTS = ("aiohttp", "httpx")


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port held by a socket that never listens: connections to it are refused."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def _ask(uri: str, **options) -> None:
    backend = load(uri, **options)

    async def go() -> None:
        try:
            await backend.generate(Request((Message("user", (TextPart("Q?"),)),)))
        finally:
            await backend.aclose()

    asyncio.run(go())


@pytest.mark.parametrize("client", CLIENTS)
def test_a_refused_connection_is_named_refused_with_few_attempts(closed_port, client):
    with pytest.raises(RetryableError) as err:
        _ask(f"openai+http://127.0.0.1:{closed_port}/v1:M", http_client=client)
    assert err.value.reason == REFUSED and "refused" in str(err.value) and "timed out" not in str(err.value)
    assert err.value.attempts == REFUSED_ATTEMPTS


@pytest.mark.parametrize("client", CLIENTS)
def test_a_timeout_stays_a_timeout(server, monkeypatch, client):
    server.reset()
    server.configure(faults=[{"kind": "timeout", "times": 1}], hang_s=3)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(RetryableError) as err:
        _ask(server.uri(), http_client=client, timeout_s=0.3)
    assert err.value.reason == "timeout" and err.value.attempts is None


@pytest.mark.parametrize("client", CLIENTS)
def test_a_run_against_a_refused_port_stops_after_a_short_streak(tmp_path, closed_port, client):
    bench = make_tiny_benchmark(tmp_path, n=60)
    concurrency = 4
    summary = run(bench, f"openai+http://127.0.0.1:{closed_port}/v1:M", tmp_path / "run", progress=False,
                  no_cache=True, concurrency=concurrency, backend_options={"http_client": client})
    assert summary.stopped is not None and "connection_refused" in summary.stopped and "refused:" in summary.stopped
    assert summary.errors == {REFUSED: summary.n_errors}
    assert REFUSED_STREAK <= summary.n_errors < 2 * concurrency + REFUSED_STREAK
    # each item tried REFUSED_ATTEMPTS times at most: a handful of calls, not the 210 of six attempts per item
    assert summary.requests <= REFUSED_ATTEMPTS * (REFUSED_STREAK + 2 * concurrency)
    assert summary.done == 0 and summary.pending > 0
