"""API keys and URL credentials never reach a file, a stream or a model name (issue 24, point 2).

Each case writes a secret into the user information of a base URL, in one of the forms people paste
(``@``, ``/``, ``:``, ``#``, ``?`` and percent-escapes inside a password, no user name, no password, no model
name after the URL), passes it as the model URI or as ``OPENAI_BASE_URL``, and runs, scores, reports and
lists the run. The server echoes the Basic ``Authorization`` header back in its replies. Whatever the
command does (run, or refuse in one sentence), no file under the folder and neither stream holds the secret
in any form: as written, percent-decoded, in pieces or inside the header's base64.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import unquote

import pytest
from helpers.fake_openai import TEST_API_KEY
from helpers.tiny import make_tiny_benchmark

from medtemporal.backends.uri import is_credential_name, parse_endpoint
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError

SECRET = "Zq7xK9wPv3"
"""The distinctive part of every password below: found anywhere means leaked."""
PASSWORDS = [
    SECRET,
    f"{SECRET}@sk-S",          # '@' in the password: the standard library reads up to the last '@'
    f"ab@{SECRET}",
    f"ab/{SECRET}",            # '/' ends the authority: not credentials by the URL rules; must be refused
    f"{SECRET}/cd",
    f"ab#{SECRET}",            # '#' starts a fragment
    f"ab?{SECRET}",            # '?' starts a query
    f"ab:{SECRET}",            # ':' in the password
    f"ab%40{SECRET}",          # percent-escaped '@'
    f"ab%2F{SECRET}",          # percent-escaped '/'
    f"{SECRET}%3A%23",
    f"ü{SECRET}",              # non-ASCII
]
USERS = ["me", "", "u@x"]
FORMS = [(user, password) for password in PASSWORDS for user in USERS[:1]] + [
    ("", SECRET), (SECRET, None), (f"u@{SECRET}", "pw"), ("me", "")]


def _userinfo(user: str, password: str | None) -> str:
    return user if password is None else f"{user}:{password}"


def _pieces(user: str, password: str | None) -> list[str]:
    """Every form of the secret to look for: as written, decoded, and the Basic token of the pair."""
    pair = f"{unquote(user)}:{unquote(password or '')}"
    token = base64.b64encode(pair.encode()).decode()
    return [SECRET, token] if SECRET in pair else [SECRET]


def _grep(root: Path, captured: str, needles: list[str]) -> list[str]:
    found = []
    for path in [p for p in root.rglob("*") if p.is_file()]:
        data = path.read_bytes()
        found += [f"{path}: {n}" for n in needles if n.encode() in data]
    found += [f"stream: {n}" for n in needles if n in captured]
    return found


@pytest.mark.timeout(300)
@pytest.mark.parametrize("where", ["uri", "env", "uri_without_model"])
@pytest.mark.parametrize("user, password", FORMS)
def test_no_form_of_userinfo_reaches_a_file_a_stream_or_a_model_name(
        fake, tmp_path, monkeypatch, capfd, where, user, password):
    fake.configure(faults=[{"kind": "echo_auth", "match": "", "times": 1000}])
    bench = make_tiny_benchmark(tmp_path / "b", n=2)
    info = _userinfo(user, password)
    base = f"http://{info}@127.0.0.1:{fake.port}/v1"
    monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
    if where == "env":
        monkeypatch.setenv("OPENAI_BASE_URL", base)
        model = "openai:fake-vlm"
    else:
        model = f"openai+{base}" + (":fake-vlm" if where == "uri" else "")
    out = tmp_path / "runs" / "r"
    code = main(["run", str(bench), "--model", model, "--out", str(out), "--no-progress",
                 "--cache", str(tmp_path / "runs" / "c.sqlite"), "--attempts", "1"])
    assert code in (0, 1, 2)
    if code != 2:
        for argv in (["score", str(out), "--resamples", "20"], ["report", str(out), "--formats", "md,csv,html"],
                     ["runs", "list", str(tmp_path / "runs")]):
            assert main(argv) == 0, argv
    captured = capfd.readouterr()
    streams = captured.out + captured.err
    assert "Traceback" not in streams
    if code == 2:
        errors = [line for line in captured.err.splitlines() if line.strip()]
        assert len(errors) == 1 and errors[0].startswith("medtemporal: error:"), captured.err
    assert _grep(tmp_path, streams, [*_pieces(user, password), TEST_API_KEY]) == []
    if code != 2:
        config = json.loads((out / "config.json").read_text())
        assert config["model"]["identity"]["model"] == "fake-vlm"  # never the key or any part of the URL
        sent = set(fake.stats()["auth"])
        pair = f"{unquote(user)}:{unquote(password or '')}"
        assert sent == {"Basic " + base64.b64encode(pair.encode()).decode()}, sent  # the server got them, only it


def test_without_a_model_name_the_key_is_never_the_model_or_the_host():
    with pytest.raises(InvalidInputError) as err:
        parse_endpoint(f"openai+http://u:{SECRET}@127.0.0.1:18001/v1")
    assert SECRET not in str(err.value) and "***@127.0.0.1:18001/v1" in str(err.value)
    base, model = parse_endpoint(f"openai+http://u:{SECRET}@127.0.0.1:18001/v1:m")
    assert (base.host, base.url, model, base.shown) == ("127.0.0.1", "http://127.0.0.1:18001/v1", "m",
                                                        "http://***@127.0.0.1:18001/v1")


def test_an_option_named_like_a_credential_is_kept_nowhere_at_any_depth(fake, tmp_path, capsys):
    """Issue 32 §6: ``--option extra_body={"api_key": ...}`` was stored in config.json and report.html."""
    deep, deeper = "sk-deep-Vw4Lq8Rt2", "tok-deeper-Hn5Ys1Pe6"
    bench = make_tiny_benchmark(tmp_path / "tiny", n=2)
    body = {"api_key": deep, "top_k": 5, "metadata": {"X-Auth-Token": deeper, "tags": [{"accessToken": deeper}]}}
    run = tmp_path / "run"
    assert main(["run", str(bench), "--model", fake.uri(), "--out", str(run), "--no-progress",
                 "--option", f"extra_body={json.dumps(body)}"]) == 0
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    assert main(["run", str(bench), "--model", fake.uri(), "--out", str(run), "--no-progress",
                 "--option", f"extra_body={json.dumps(body)}"]) == 0  # the same run resumes (identities match)
    captured = capsys.readouterr()
    for path in [p for p in tmp_path.rglob("*") if p.is_file()]:
        data = path.read_bytes()
        assert deep.encode() not in data and deeper.encode() not in data, path
    assert deep not in captured.out + captured.err and deeper not in captured.out + captured.err
    settings = json.loads((run / "config.json").read_text())["model"]["settings"]["extra_body"]
    assert settings == {"api_key": "[REDACTED]", "top_k": 5,
                        "metadata": {"X-Auth-Token": "[REDACTED]", "tags": [{"accessToken": "[REDACTED]"}]}}


CREDENTIAL_NAMES = [
    "accesskey", "secretkey", "subscription_key", "Ocp-Apim-Subscription-Key", "x-functions-key", "AccessKeyId",
    "aws_secret_access_key", "secretAccessKey", "client_secret", "clientsecret", "refresh_token", "sessiontoken",
    "idToken", "passphrase", "db_password", "PASSWD", "privatekey", "private-key", "sas_token", "x-goog-api-key",
    "apikey", "X-API-KEY", "oauth", "authorization", "proxy-authorization", "hf_token", "webhook_signature",
    "set-cookie", "encryption_key", "master_key", "license_key", "signingKey",
]
NOT_CREDENTIAL_NAMES = ["max_tokens", "max_new_tokens", "tokenizer", "tokenizer_mode", "key", "api_key_env",
                        "top_k", "temperature", "author", "sort_key", "dtype", "kv_cache_dtype", "max_images"]


@pytest.mark.parametrize("name", CREDENTIAL_NAMES)
def test_credential_names_in_any_spelling_are_credentials(name):
    assert is_credential_name(name)


@pytest.mark.parametrize("name", NOT_CREDENTIAL_NAMES)
def test_settings_that_only_look_like_credentials_are_kept(name):
    assert not is_credential_name(name)


def test_every_credential_spelling_is_kept_out_of_config_and_report(fake, tmp_path, capsys):
    """Issue 42 §8: ``accesskey``, ``secretkey``, ``subscription_key`` … reached config.json and report.html."""
    values = {name: f"Sv{k:02d}-Qm8Lw3Rt" for k, name in enumerate(CREDENTIAL_NAMES)}
    bench = make_tiny_benchmark(tmp_path / "tiny", n=2)
    run = tmp_path / "run"
    body = {**values, "top_k": 5, "nested": [dict(values)]}
    assert main(["run", str(bench), "--model", fake.uri(), "--out", str(run), "--no-progress",
                 "--option", f"extra_body={json.dumps(body)}"]) == 0
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    captured = capsys.readouterr()
    leaked = [f"{p.name}: {n}" for p in tmp_path.rglob("*") if p.is_file() for n, v in values.items()
              if v.encode() in p.read_bytes()]
    assert not leaked
    assert not any(v in captured.out + captured.err for v in values.values())
    kept = json.loads((run / "config.json").read_text())["model"]["settings"]["extra_body"]
    assert kept["top_k"] == 5 and all(kept[n] == "[REDACTED]" for n in values)
