import asyncio
import json
import socket

import httpx2
import pytest
from helpers.tiny import make_tiny_benchmark

from medtemporal.backends import load as load_backend
from medtemporal.backends.baselines import RandomBaseline
from medtemporal.backends.pinning import PinnedTransport, proxy_for
from medtemporal.backends.uri import is_local_address
from medtemporal.cli import main
from medtemporal.errors import BackendError, InvalidInputError
from medtemporal.backends.guard import check_data_use, guard_backend
from medtemporal.backends.session import RetryPolicy
from medtemporal.runner import run


def test_credentialed_data_is_refused_for_remote_endpoints_in_one_sentence():
    with pytest.raises(InvalidInputError) as err:
        check_data_use("mi-cxr", "credentialed", "https://8.8.8.8/v1", allow_remote_data=False)
    message = str(err.value)
    assert message.count(". ") == 0 and message.endswith(".")
    assert "'mi-cxr'" in message and "https://8.8.8.8/v1" in message and "--allow-remote-data" in message


@pytest.mark.parametrize(
    "licence, endpoint, allow",
    [
        ("credentialed", "http://127.0.0.1:8000/v1", False),
        ("credentialed", None, False),  # in-process model
        ("credentialed", "https://8.8.8.8/v1", True),
        ("synthetic", "https://8.8.8.8/v1", False),
        ("open", "https://8.8.8.8/v1", False),
    ],
)
def test_everything_else_is_allowed(licence, endpoint, allow):
    check_data_use("mi-cxr", licence, endpoint, allow_remote_data=allow)


def test_a_run_of_credentialed_data_stops_before_anything_is_sent_or_written(tmp_path, monkeypatch):
    bench = make_tiny_benchmark(tmp_path, n=2, licence="credentialed")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    # 8.8.8.8 is only classified, never contacted: the guard refuses first
    with pytest.raises(InvalidInputError, match="Refusing to send benchmark 'tiny'"):
        run(bench, "openai+https://8.8.8.8/v1:gpt-4o", tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()


def test_the_flag_is_recorded_and_local_endpoints_need_none(fake, tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=2, licence="credentialed")
    run(bench, fake.uri(), tmp_path / "local", progress=False)
    run(bench, fake.uri(), tmp_path / "flag", allow_remote_data=True, progress=False)
    flags = [json.loads((tmp_path / r / "config.json").read_text())["allow_remote_data"] for r in ("local", "flag")]
    assert flags == [False, True]


def _judge(verdict):
    """A licence judged on demand, which counts how often it was asked."""
    asked = []

    def licence():
        asked.append(verdict)
        return verdict

    return licence, asked


@pytest.mark.parametrize("verdict", ["credentialed", "synthetic"])
def test_a_local_endpoint_reached_directly_is_pinned_without_judging_the_licence(verdict, monkeypatch):
    """Issue 33: the verdict reads a whole phantom folder (seconds at MIMIC scale); where the endpoint is local and
    no proxy carries the data it cannot change where the data goes, so the run does not wait for it."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    licence, asked = _judge(verdict)
    assert check_data_use("x", licence, "http://127.0.0.1:8000/v1", False) == ["127.0.0.1"]
    assert check_data_use("x", licence, None, False) is None and check_data_use("x", licence, "https://8.8.8.8/v1",
                                                                                True) is None
    assert asked == []


def test_a_remote_endpoint_or_a_proxy_waits_for_the_verdict(monkeypatch):
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "NO_PROXY",
                "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    credentialed, asked = _judge("credentialed")
    with pytest.raises(InvalidInputError, match="Refusing to send benchmark 'x'"):
        check_data_use("x", credentialed, "https://8.8.8.8/v1", False)
    with pytest.raises(InvalidInputError, match="names no host"):
        check_data_use("x", credentialed, "http:///v1", False)
    assert asked == ["credentialed"] * 2
    synthetic, asked = _judge("synthetic")
    assert check_data_use("x", synthetic, "https://8.8.8.8/v1", False) is None and asked == ["synthetic"]
    monkeypatch.setenv("HTTP_PROXY", "http://203.0.113.9:3128")  # the proxy carries what a local endpoint gets
    assert check_data_use("x", synthetic, "http://127.0.0.1:8000/v1", False) is None and len(asked) == 2
    assert check_data_use("x", credentialed, "http://127.0.0.1:8000/v1", False) == ["127.0.0.1"]


def test_a_run_against_a_local_server_starts_without_judging_its_phantom(fake, tmp_path, monkeypatch):
    import medtemporal.runner._run as runner

    judged = []
    monkeypatch.setattr(runner, "run_licence", lambda *a, **k: judged.append(a) or "credentialed")
    bench = make_tiny_benchmark(tmp_path, n=2)  # a verified phantom
    summary = run(bench, fake.uri(), tmp_path / "run", progress=False, no_cache=True)
    assert summary.done == 2 and judged == []
    with pytest.raises(InvalidInputError, match="Refusing to send benchmark 'tiny'"):  # remote: judged first
        run(bench, "openai+https://8.8.8.8/v1:gpt-4o", tmp_path / "remote", progress=False, api_key_env="HOME")
    assert len(judged) == 1 and not (tmp_path / "remote").exists()


# --- where the bytes actually go (issue 15, points 1-3) ---------------------------------------------------------


def _resolver(monkeypatch, names):
    """Make ``socket.getaddrinfo`` answer ``names[name][k]`` on the k-th lookup; return the lookup counts."""
    original, calls = socket.getaddrinfo, {}

    def getaddrinfo(host, port, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        if name not in names:
            return original(host, port, *args, **kwargs)
        k = calls[name] = calls.get(name, 0) + 1
        return original(names[name][min(k, len(names[name])) - 1], port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return calls


@pytest.mark.parametrize("address, local", [
    ("203.0.113.7", False),  # documentation range: Python calls it private, it is no local network
    ("198.18.0.1", False),
    ("::ffff:8.8.8.8", False),  # IPv4-mapped: judged by the IPv4 address
    ("::ffff:127.0.0.1", True),
    ("fd00::1", False),
    ("fe80::1%eth0", False),
    ("10.0.0.5", False),
    ("192.168.1.2", False),
    ("169.254.169.254", False),
])
def test_local_means_loopback_by_default(address, local):
    assert is_local_address(address) is local


# --- issue 42, item 6: private ranges are local only when the user says so --------------------------------------------
@pytest.mark.parametrize("endpoint", ["http://10.0.0.5:8000/v1", "http://172.16.4.4/v1", "http://192.168.1.2/v1",
                                      "http://[fd12::5]/v1", "http://169.254.10.1/v1", "http://[fe80::1]/v1"])
def test_a_private_or_link_local_endpoint_is_refused_naming_the_setting(endpoint, monkeypatch):
    monkeypatch.delenv("MEDTEMPORAL_LOCAL_NETWORKS", raising=False)
    with pytest.raises(InvalidInputError) as err:
        check_data_use("mi-cxr", "credentialed", endpoint, allow_remote_data=False)
    message = str(err.value)
    assert "MEDTEMPORAL_LOCAL_NETWORKS" in message and "--allow-remote-data" in message
    assert message.count(". ") == 0 and message.endswith(".")


def test_a_declared_network_is_local_and_others_stay_remote(monkeypatch):
    monkeypatch.setenv("MEDTEMPORAL_LOCAL_NETWORKS", " 10.0.0.0/8 , fd12::/16")
    assert check_data_use("mi-cxr", "credentialed", "http://10.0.0.5:8000/v1", False) == ["10.0.0.5"]
    assert check_data_use("mi-cxr", "credentialed", "http://[fd12::5]/v1", False) == ["fd12::5"]
    with pytest.raises(InvalidInputError, match="MEDTEMPORAL_LOCAL_NETWORKS"):
        check_data_use("mi-cxr", "credentialed", "http://192.168.1.2/v1", False)
    monkeypatch.setenv("MEDTEMPORAL_LOCAL_NETWORKS", "private")
    assert all(is_local_address(a) for a in ("192.168.1.2", "172.31.0.1", "fe80::1", "169.254.0.9"))
    assert not is_local_address("8.8.8.8") and not is_local_address("203.0.113.7")


def test_a_bad_local_networks_setting_is_one_sentence(monkeypatch):
    monkeypatch.setenv("MEDTEMPORAL_LOCAL_NETWORKS", "10.0.0.0/8,my-lan")
    with pytest.raises(InvalidInputError) as err:
        check_data_use("mi-cxr", "credentialed", "http://10.0.0.5/v1", False)
    assert "'my-lan'" in str(err.value) and "MEDTEMPORAL_LOCAL_NETWORKS" in str(err.value)


def test_a_server_on_a_private_network_still_needs_no_api_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    backend = load_backend("openai+http://10.0.0.5:8000/v1:m")  # vLLM on the lab's network takes any key
    assert backend.model == "m"


def test_dot_localhost_names_are_resolved_like_any_other(monkeypatch):
    _resolver(monkeypatch, {"evil.localhost": ["8.8.8.8"], "good.localhost": ["127.0.0.1"]})
    with pytest.raises(InvalidInputError, match="it resolves to 8.8.8.8"):
        check_data_use("mi-cxr", "credentialed", "http://evil.localhost:8000/v1", allow_remote_data=False)
    assert check_data_use("mi-cxr", "credentialed", "http://good.localhost:8000/v1", False) == ["127.0.0.1"]


def test_a_name_with_any_remote_address_or_none_is_refused(monkeypatch):
    _resolver(monkeypatch, {"mixed.test": ["127.0.0.1"]})
    original = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *a, **k: (
        original("127.0.0.1", *a, **k) + original("8.8.8.8", *a, **k) if host == "mixed.test" else original(host, *a, **k)))
    with pytest.raises(InvalidInputError, match="resolves to 8.8.8.8"):
        check_data_use("x", "credentialed", "http://mixed.test/v1", False)
    with pytest.raises(InvalidInputError, match="does not resolve"):
        check_data_use("x", "credentialed", "http://no-such-host.invalid/v1", False)


@pytest.mark.parametrize("client", ["aiohttp", "httpx"])
def test_a_name_that_later_resolves_elsewhere_stays_pinned_to_the_checked_address(fake, tmp_path, monkeypatch,
                                                                                    client):
    calls = _resolver(monkeypatch, {"model.test": ["127.0.0.1", "203.0.113.9"]})
    bench = make_tiny_benchmark(tmp_path, n=4, licence="credentialed")
    backend = load_backend(f"openai+http://model.test:{fake.port}/v1:fake-vlm", http_client=client)
    summary = run(bench, backend, tmp_path / "run", progress=False,
                  no_cache=True, concurrency=2, retry=RetryPolicy(max_attempts=1, timeout_s=5))
    assert summary.done == 4 and summary.n_errors == 0
    assert backend.http_client == client  # pinning keeps the client the user chose
    assert calls["model.test"] == 1  # resolved once, by the guard
    assert sum(fake.stats()["counts"].values()) == 4


@pytest.mark.parametrize("client", ["aiohttp", "httpx"])
def test_a_pinned_address_that_refuses_passes_the_request_to_the_next(fake, tmp_path, monkeypatch, client):
    backend = load_backend(f"openai+http://model.test:{fake.port}/v1:fake-vlm", http_client=client)
    backend.pin(["127.0.0.2", "127.0.0.1"])  # the fake server listens on 127.0.0.1 only: 127.0.0.2 refuses
    bench = make_tiny_benchmark(tmp_path, n=2, licence="synthetic")  # no guard: the pin above stays
    summary = run(bench, backend, tmp_path / "run", progress=False, no_cache=True,
                  retry=RetryPolicy(max_attempts=1, timeout_s=5))
    assert summary.done == 2 and summary.n_errors == 0
    assert sum(fake.stats()["counts"].values()) == 2


def test_proxies_are_bypassed_for_credentialed_data_and_the_user_is_told(fake, tmp_path, monkeypatch, capsys):
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://user:pw@203.0.113.9:3128")  # would be unreachable
    bench = make_tiny_benchmark(tmp_path, n=2, licence="credentialed")
    summary = run(bench, fake.uri(), tmp_path / "run", progress=False, no_cache=True,
                  retry=RetryPolicy(max_attempts=1, timeout_s=5))
    assert summary.done == 2
    err = capsys.readouterr().err
    assert "not using the proxy http://***@203.0.113.9:3128" in err and "pw" not in err


@pytest.mark.parametrize("env, url, expected", [
    ({"HTTP_PROXY": "http://p:1"}, "http://127.0.0.1:8000/v1", "http://p:1"),
    ({"http_proxy": "p:1"}, "http://127.0.0.1:8000/v1", "http://p:1"),
    ({"HTTPS_PROXY": "http://p:1"}, "http://127.0.0.1:8000/v1", None),
    ({"ALL_PROXY": "socks5://p:1"}, "https://gpu-box/v1", "socks5://p:1"),
    ({"HTTP_PROXY": "http://p:1", "NO_PROXY": "127.0.0.1"}, "http://127.0.0.1:8000/v1", None),
    ({"HTTP_PROXY": "http://p:1", "NO_PROXY": ".example.org"}, "http://gpu.example.org/v1", None),
    ({"HTTP_PROXY": "http://p:1", "NO_PROXY": ".example.org"}, "http://example.org/v1", "http://p:1"),
    ({"HTTP_PROXY": "http://p:1", "NO_PROXY": "*"}, "http://gpu/v1", None),
])
def test_proxy_for_reads_the_environment_as_the_http_client_does(monkeypatch, env, url, expected):
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.lower(), raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert proxy_for(url) == expected


def test_the_pinned_transport_refuses_any_other_host():
    transport = PinnedTransport("model.test", ["127.0.0.1"], httpx2.AsyncHTTPTransport())
    request = httpx2.Request("GET", "http://elsewhere.example/v1")
    with pytest.raises(httpx2.ConnectError, match="may only reach model.test"):
        asyncio.run(transport.handle_async_request(request))


def test_a_backend_that_cannot_pin_is_refused_for_credentialed_data():
    class Remote(RandomBaseline):
        endpoint = "http://127.0.0.1:9/v1"

    with pytest.raises(BackendError, match="cannot pin"):
        guard_backend(Remote("baseline:random"), "x", "credentialed", allow_remote_data=False)


# --- credentials in base URLs (point 5) ----------------------------------------------------------------------------

SECRET = "sk-userinfo-9f8e7d"


def test_credentials_in_a_model_uri_are_in_no_file_and_no_output(fake, tmp_path, capsys):
    bench = make_tiny_benchmark(tmp_path, n=2)
    uri = f"openai+http://me:{SECRET}@127.0.0.1:{fake.port}/v1:fake-vlm"
    assert main(["run", str(bench), "--model", uri, "--out", str(tmp_path / "run"), "--no-progress",
                 "--cache", str(tmp_path / "c.sqlite")]) == 0
    assert main(["runs", "list", str(tmp_path)]) == 0
    out = capsys.readouterr()
    files = [p for p in (tmp_path / "run").rglob("*") if p.is_file()] + sorted(tmp_path.glob("c.sqlite*"))
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in out.out + out.err
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["model"]["uri"] == f"openai+http://***@127.0.0.1:{fake.port}/v1:fake-vlm"


def test_credentials_in_openai_base_url_are_redacted_in_errors(monkeypatch, tmp_path, capsys):
    bench = make_tiny_benchmark(tmp_path, n=1, licence="credentialed")
    monkeypatch.setenv("OPENAI_BASE_URL", f"https://me:{SECRET}@8.8.8.8/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert main(["run", str(bench), "--model", "openai:gpt-4o", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "https://***@8.8.8.8/v1" in err and SECRET not in err and err.count("\n") == 1
    assert main(["run", str(bench), "--model", f"openai+http://me:{SECRET}@h:99999/v1:m", "--out",
                 str(tmp_path / "r2")]) == 2
    err = capsys.readouterr().err
    assert "port" in err and SECRET not in err and err.count("\n") == 1


def test_a_refused_redirect_says_where_it_led_and_why(tmp_path, monkeypatch, capsys):
    """Issue 32 §6: a redirect the pinned connection refuses read only "Connection error."; now it names the host
    it led to and the reason, and is not retried (it would be redirected again)."""
    import threading

    from aiohttp import web

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    hits: list[str] = []

    async def moved(request: web.Request) -> web.Response:
        hits.append(request.path)
        raise web.HTTPTemporaryRedirect("http://127.0.0.2:9/v1/chat/completions")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", moved)
    runner = web.AppRunner(app, access_log=None)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = runner.addresses[0][1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        bench = make_tiny_benchmark(tmp_path, n=2, licence="credentialed")
        code = main(["run", str(bench), "--model", f"openai+http://127.0.0.1:{port}/v1:m", "--out",
                     str(tmp_path / "run"), "--no-progress", "--no-cache"])
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
    out = capsys.readouterr()
    assert code == 1 and len(hits) == 2, (out.out, out.err)  # one request per item: not retried
    assert "redirect_refused" in out.out and "redirected the request to 127.0.0.2" in out.out, out.out
    lines = [json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert all(p["error"].startswith("redirect_refused: ") for p in lines)
