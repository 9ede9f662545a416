"""Try to walk credentialed data around the data-use guard, inside a loopback-only network namespace.

Run as ``python netns_probe.py REMOTE OUT`` in a namespace whose ``lo`` also
carries the non-local address REMOTE, so traffic that leaks to a "remote"
host really arrives somewhere: a sink listening on REMOTE counts every byte.
Each scenario runs the real runner against the loopback fake server; each
has a control with data that is not credentialed (no guard), which must leak,
proving the scenario would catch a leak. Prints one JSON object of results.
"""

from __future__ import annotations

import json
import os
import socket
import socketserver
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from helpers.fake_openai import FakeOpenAI  # noqa: E402
from helpers.tiny import make_tiny_benchmark  # noqa: E402

from medtemporal.backends.uri import is_local_endpoint  # noqa: E402
from medtemporal.errors import InvalidInputError  # noqa: E402
from medtemporal.backends.session import RetryPolicy  # noqa: E402
from medtemporal.runner import run  # noqa: E402


class Sink(socketserver.ThreadingTCPServer):
    """Counts the bytes anything sends to REMOTE."""

    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, host: str, port: int) -> None:
        self.received = 0

        sink = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                self.request.settimeout(2)
                try:
                    sink.received += len(self.request.recv(65536))
                except OSError:
                    pass

        super().__init__((host, port), Handler)


def _resolver(names: dict[str, list[str]], calls: dict[str, int]):
    """A getaddrinfo answering ``names[name][k]`` on the k-th lookup (the last one after that)."""
    original = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        name = host.decode() if isinstance(host, bytes) else host
        if name not in names:
            return original(host, port, *args, **kwargs)
        k = calls.get(name, 0)
        calls[name] = k + 1
        address = names[name][min(k, len(names[name]) - 1)]
        return original(address, port, *args, **kwargs)

    return getaddrinfo


def _run(bench: Path, uri: str, out: Path) -> dict:
    try:
        summary = run(bench, uri, out, progress=False, no_cache=True, concurrency=2, score=False,
                      retry=RetryPolicy(max_attempts=1, timeout_s=5))
    except InvalidInputError as exc:
        return {"refused": str(exc)}
    return {"done": summary.done, "failed": summary.n_errors}


def main() -> None:
    remote, root = sys.argv[1], Path(sys.argv[2])
    os.environ["OPENAI_API_KEY"] = "sk-netns"
    results: dict[str, dict] = {}
    with FakeOpenAI.start() as fake:
        sink = Sink(remote, fake.port)  # the same port on the remote address: a leak needs no other change
        threading.Thread(target=sink.serve_forever, daemon=True).start()
        benches = {lic: make_tiny_benchmark(root / lic, n=6, licence=lic) for lic in ("credentialed", "synthetic")}

        def scenario(name: str, licence: str, uri: str) -> None:
            before = sink.received
            result = _run(benches[licence], uri, Path(tempfile.mkdtemp(dir=root)))
            results[name] = {**result, "leaked_bytes": sink.received - before}

        # 1. proxy variables pointing at the remote host; NO_PROXY unset
        proxy = f"http://{remote}:{fake.port}"
        for var in ("NO_PROXY", "no_proxy"):
            os.environ.pop(var, None)
        for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            os.environ[var] = proxy
        scenario("proxy", "credentialed", fake.uri())
        scenario("proxy_control", "synthetic", fake.uri())
        for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            del os.environ[var]

        # 2. a name that resolves locally once, then to the remote host (DNS rebinding)
        calls: dict[str, int] = {}
        socket.getaddrinfo = _resolver(
            {"model.test": ["127.0.0.1", remote], "control.test": ["127.0.0.1", remote],
             "api.localhost": [remote]}, calls)
        scenario("rebinding", "credentialed", f"openai+http://model.test:{fake.port}/v1:fake-vlm")
        results["rebinding"]["lookups"] = calls.get("model.test", 0)
        assert is_local_endpoint(f"http://control.test:{fake.port}/v1")  # the control was checked local once
        scenario("rebinding_control", "synthetic", f"openai+http://control.test:{fake.port}/v1:fake-vlm")

        # 3. a *.localhost name that resolves to the remote host
        scenario("dot_localhost", "credentialed", f"openai+http://api.localhost:{fake.port}/v1:fake-vlm")
        scenario("dot_localhost_control", "synthetic", f"openai+http://api.localhost:{fake.port}/v1:fake-vlm")
        results["answered_by_fake"] = {"requests": sum(fake.stats()["counts"].values())}
    print(json.dumps(results))


if __name__ == "__main__":
    main()
