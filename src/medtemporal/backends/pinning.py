"""Connections pinned to checked addresses, and the proxy the environment would have used.

The data-use guard (`medtemporal.backends.guard`) resolves an endpoint's host
once and checks every address. `PinnedTransport` then makes the HTTP client
connect only to those addresses for the whole run, whatever the name
resolves to later (DNS rebinding), and refuses any other host (a redirect).
A client given a transport of its own ignores ``HTTP(S)_PROXY`` and
``ALL_PROXY``, so pinned requests never go through a proxy; `proxy_for` says
which proxy would have carried them, honouring ``NO_PROXY`` exactly as the
HTTP client does, so the guard can say it was bypassed.
"""

from __future__ import annotations

from collections.abc import Sequence

import httpx2
from httpx2._utils import URLPattern, get_environment_proxies

from medtemporal.backends.uri import redact


def proxy_for(url: str) -> str | None:
    """The proxy URL (credentials hidden) ``httpx2`` would send ``url`` through given the environment, or None.

    Uses the client's own reading of ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``/``NO_PROXY``
    (either case) and its pattern priority (most specific first).
    """
    target = httpx2.URL(url)
    mounts = sorted(get_environment_proxies().items(), key=lambda kv: URLPattern(kv[0]))
    for pattern, proxy in mounts:
        if URLPattern(pattern).matches(target):
            return None if proxy is None else redact(proxy)
    return None


class RedirectRefused(httpx2.ConnectError):
    """A request for a host other than the pinned one (a redirect), refused before any connection."""

    def __init__(self, host: str, allowed: str, request: httpx2.Request) -> None:
        super().__init__(f"refusing to connect to {host}: this run may only reach {allowed}", request=request)
        self.host = host


class PinnedTransport(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport that sends requests for ``host`` to ``addresses`` only, in order.

    The request keeps its ``Host`` header and TLS server name, so virtual hosts and certificates
    work as before; a request for any other host is refused before a connection is made.

    Args:
        host: the host name the requests are for.
        addresses: the checked IP addresses to connect to (tried in order when a connection fails).
        inner: the transport that connects: `httpx2.AsyncHTTPTransport` or the OpenAI SDK's aiohttp transport.
    """

    def __init__(self, host: str, addresses: Sequence[str], inner: httpx2.AsyncBaseTransport) -> None:
        if not addresses:
            raise ValueError("PinnedTransport needs at least one address")
        self.host = host.lower()
        self.addresses = tuple(addresses)
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.host.lower() != self.host:
            raise RedirectRefused(request.url.host, self.host, request)
        sni = request.extensions.get("sni_hostname") or self.host
        last: httpx2.TransportError | None = None
        for address in self.addresses:
            pinned = httpx2.Request(
                request.method,
                request.url.copy_with(host=address),
                headers=request.headers,  # keeps Host: the original name
                stream=request.stream,
                extensions={**request.extensions, "sni_hostname": sni},
            )
            try:
                return await self._inner.handle_async_request(pinned)
            except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:
                if not _unsent(exc):
                    raise
                last = exc  # nothing was sent: the next address may take it
        assert last is not None
        raise last

    async def aclose(self) -> None:
        await self._inner.aclose()


def _unsent(exc: httpx2.TransportError) -> bool:
    """True when ``exc`` means no connection was made, so nothing was sent: the SDK's aiohttp transport labels
    every aiohttp connection error ``ConnectTimeout``, a dropped one included; only its connector errors count."""
    cause = exc.__cause__
    if cause is None or type(cause).__module__.split(".")[0] != "aiohttp":
        return True
    import aiohttp

    return isinstance(cause, (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError))

