"""The data-use guard: credentialed data stays on this machine or the local network.

MIMIC-CXR, CheXpert Plus and CT-RATE come under credentialed agreements;
PhysioNet's forbids sharing the data with third-party services. A benchmark
whose manifest licence is ``credentialed`` is therefore only sent to
endpoints on a loopback address, or in a network the user declares local
(``MEDTEMPORAL_LOCAL_NETWORKS``, `medtemporal.backends.uri.local_networks`: a
cloud provider's private endpoint resolves to a private address too), unless the
user says otherwise (``--allow-remote-data``).

The guard judges where the bytes actually go: the endpoint's host is
resolved once (``localhost`` and ``*.localhost`` included), every address
must be local, and the backend is then pinned to those addresses for the
whole run (`Backend.pin`), so a name that later resolves elsewhere, a
redirect, or a proxy from ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY`` cannot
carry the data away. A proxy the environment would have used is bypassed,
and the guard says so. A run's licence is judged only where the verdict can
change where the data goes (`check_data_use`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from urllib.parse import urlsplit

from medtemporal.backends.base import Backend
from medtemporal.backends.uri import LOCAL_NETWORKS_ENV, is_local_address, resolve
from medtemporal.errors import InvalidInputError


def _refuse(benchmark: str, endpoint: str, why: str) -> InvalidInputError:
    return InvalidInputError(
        f"Refusing to send benchmark {benchmark!r} (credentialed data) to {endpoint}, {why}, because "
        "data-use agreements such as PhysioNet's forbid sharing it with third-party services; "
        "serve the model locally, or pass --allow-remote-data if your agreement permits this endpoint."
    )


def check_data_use(benchmark: str, licence: str | Callable[[], str], endpoint: str | None,
                   allow_remote_data: bool) -> list[str] | None:
    """Refuse to send credentialed data to a remote endpoint unless explicitly allowed.

    ``licence`` may be a function that judges it (`medtemporal.provenance.run_licence` reads a whole phantom
    folder: seconds at MIMIC scale). It is called only where its answer can change where the data goes: for an
    endpoint that is not shown local, or one the environment's proxy would carry. A local endpoint reached
    directly is pinned without it, as credentialed data is, so a run against a loopback server never waits for it.

    Returns:
        The endpoint's addresses, resolved once and all checked local, to pin the connection to;
        None when no check applies (not credentialed, no endpoint, or allowed).

    Raises:
        InvalidInputError: in one sentence, naming the benchmark, the endpoint and the flag.
    """
    if endpoint is None or allow_remote_data or (isinstance(licence, str) and licence != "credentialed"):
        return None

    def credentialed() -> bool:
        return (licence if isinstance(licence, str) else licence()) == "credentialed"

    host = urlsplit(endpoint).hostname
    if not host:
        if not credentialed():
            return None
        raise _refuse(benchmark, endpoint, "which names no host")
    try:
        addresses = resolve(host)
    except OSError:
        if not credentialed():
            return None
        raise _refuse(benchmark, endpoint, f"whose host {host} does not resolve, so it cannot be shown to be local")
    remote = [a for a in addresses if not is_local_address(a)]
    if not addresses or remote:
        if not credentialed():
            return None
        at = f" (it resolves to {remote[0]})" if remote and remote[0] != host else ""
        if remote and is_local_address(remote[0], private=True):
            raise _refuse(benchmark, endpoint, f"a private address{at} that may belong to a hosted service, not "
                          f"declared local in {LOCAL_NETWORKS_ENV} (set it to that network, such as 10.0.0.0/8, if the "
                          "network is yours)")
        raise _refuse(benchmark, endpoint, f"which is not a loopback address{at}")
    if not isinstance(licence, str):
        from medtemporal.backends.pinning import proxy_for

        if proxy_for(endpoint) is not None and not credentialed():  # the proxy, which may be anywhere, carries it
            return None
    return addresses


def guard_backend(backend: Backend, benchmark: str, licence: str | Callable[[], str],
                  allow_remote_data: bool) -> None:
    """`check_data_use` for ``backend``'s endpoint, then pin the backend to the checked addresses.

    Says on stderr when a proxy from the environment is bypassed for that reason.
    """
    addresses = check_data_use(benchmark, licence, backend.endpoint, allow_remote_data)
    if addresses is None or backend.endpoint is None:
        return
    from medtemporal.backends.pinning import proxy_for

    proxy = proxy_for(backend.endpoint)
    backend.pin(addresses)
    if proxy is not None:
        print(
            f"medtemporal: note: not using the proxy {proxy} from the environment for {backend.endpoint}: "
            "credentialed data goes straight to the checked local address.",
            file=sys.stderr,
        )
