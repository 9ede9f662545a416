import asyncio
import base64
import io
import json
import time

import numpy as np
import pytest
from helpers.fake_openai import FakeOpenAI
from PIL import Image

from medtemporal.backends import load
from medtemporal.backends.base import (
    GenerateConfig,
    ImagePart,
    Message,
    Request,
    RequestError,
    RetryableError,
    TextPart,
)
from medtemporal.backends.images import encode_data_url
from medtemporal.backends.openai_http import retry_after
from medtemporal.errors import InvalidInputError

KEY = "sk-test-0123456789abcdef"


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI.start() as srv:
        yield srv


@pytest.fixture
def fake(server, monkeypatch):
    server.reset()
    server.configure(keep_bodies=False, hang_s=30)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return server


def _images(tmp_path, sizes):
    paths = []
    for i, (w, h) in enumerate(sizes):
        path = tmp_path / f"img{i}.png"
        Image.fromarray(np.full((h, w), 40 * i, dtype=np.uint8)).save(path)
        paths.append(path)
    return paths


def _generate(backend, request):
    async def main():
        try:
            return await backend.generate(request)
        finally:
            await backend.aclose()

    return asyncio.run(main())


def _text(question: str) -> Request:
    return Request((Message("user", (TextPart(question),)),))


def test_images_go_in_order_with_captions_shrunk_and_settings_recorded(fake, tmp_path):
    fake.configure(keep_bodies=True)
    paths = _images(tmp_path, [(30, 20), (400, 200), (10, 10)])
    parts = (TextPart("T1:"), ImagePart(paths[0]), TextPart("T2:"), ImagePart(paths[1]), TextPart("Last visit image:"),
             ImagePart(paths[2]), TextPart("Which changed?"))
    config = GenerateConfig(temperature=0.0, max_tokens=17, seed=5, top_p=0.9, system_prompt="You are a radiologist.")
    backend = load(fake.uri("org/vlm:7b"), max_pixels=5000)
    response = _generate(backend, Request((Message("user", parts),), config))
    assert response.text.startswith("The answer is ") and response.model == "fake-vlm"
    assert (response.input_tokens, response.output_tokens) == (11, 3)
    (body,) = fake.stats()["bodies"]
    assert body["model"] == "org/vlm:7b"
    assert (body["temperature"], body["max_tokens"], body["seed"], body["top_p"]) == (0.0, 17, 5, 0.9)
    assert body["messages"][0] == {"role": "system", "content": "You are a radiologist."}
    content = body["messages"][1]["content"]
    assert [c["type"] for c in content] == ["text", "image_url"] * 3 + ["text"]
    assert [c["text"] for c in content if c["type"] == "text"] == ["T1:", "T2:", "Last visit image:", "Which changed?"]
    sent = [Image.open(io.BytesIO(base64.b64decode(c["image_url"]["url"].split(",", 1)[1])))
            for c in content if c["type"] == "image_url"]
    assert [im.size for im in sent[::2]] == [(30, 20), (10, 10)]
    assert sent[1].width * sent[1].height <= 5000 and sent[1].width == 2 * sent[1].height
    assert [int(np.asarray(im.convert("L")).mean()) for im in sent] == [0, 40, 80]  # the item's order
    assert fake.stats()["auth"] == [f"Bearer {KEY}"]
    assert KEY not in str(backend.identity())


def test_text_only_requests_send_plain_string_content(fake):
    fake.configure(keep_bodies=True)
    _generate(load(fake.uri()), _text("Hello?"))
    assert fake.stats()["bodies"][0]["messages"] == [{"role": "user", "content": "Hello?"}]


def test_body_is_the_json_the_sdk_would_send(fake, tmp_path):
    """The body spliced from cached image parts decodes to the request as `chat.completions.create` takes it."""
    paths = _images(tmp_path, [(20, 10), (10, 10)])
    config = GenerateConfig(temperature=0.2, max_tokens=9, system_prompt="Réponds en français → ok")
    request = Request((Message("user", (TextPart("T1 → T2 \"答案\""), ImagePart(paths[0]), ImagePart(paths[1]),
                                        TextPart("Which?"))), Message("assistant", (TextPart("B"),))), config)
    backend = load(fake.uri("m"), extra_body={"top_k": 20})
    body = asyncio.run(backend.body(request))
    urls = [encode_data_url(p, backend.max_pixels) for p in paths]
    assert json.loads(body) == {
        "model": "m", "temperature": 0.2, "max_tokens": 9, "top_k": 20,
        "messages": [{"role": "system", "content": "Réponds en français → ok"},
                     {"role": "user", "content": [{"type": "text", "text": 'T1 → T2 "答案"'},
                                                  {"type": "image_url", "image_url": {"url": urls[0]}},
                                                  {"type": "image_url", "image_url": {"url": urls[1]}},
                                                  {"type": "text", "text": "Which?"}]},
                     {"role": "assistant", "content": "B"}],
    }
    asyncio.run(backend.aclose())


def test_each_image_is_encoded_once_per_backend(fake, tmp_path):
    paths = _images(tmp_path, [(20, 20), (20, 20)])
    backend = load(fake.uri())

    async def main():
        requests = [Request((Message("user", (ImagePart(paths[i % 2]), TextPart(f"Q{i}"))),)) for i in range(10)]
        await asyncio.gather(*(backend.generate(r) for r in requests))
        await backend.aclose()

    asyncio.run(main())
    assert backend.images.made == 2


@pytest.mark.parametrize(
    "kind, error, reason",
    [
        ("500", RetryableError, "server_error"),
        ("drop", RetryableError, "connection"),
        ("malformed", RetryableError, "bad_response"),
        ("no_message", RetryableError, "bad_response"),
        ("400", RequestError, "http_400"),
    ],
)
def test_failures_are_classified_for_the_runner(fake, kind, error, reason):
    fake.configure(faults=[{"kind": kind, "times": 1}])
    with pytest.raises(error) as err:
        _generate(load(fake.uri()), _text("Q?"))
    assert err.value.reason == reason


def test_rate_limits_carry_retry_after(fake):
    fake.configure(faults=[{"kind": "429", "times": 1, "retry_after": 7}])
    with pytest.raises(RetryableError) as err:
        _generate(load(fake.uri()), _text("Q?"))
    assert (err.value.reason, err.value.retry_after) == ("rate_limited", 7.0)


def test_timeouts_are_retryable(fake):
    fake.configure(faults=[{"kind": "timeout", "times": 1}], hang_s=3)
    start = time.perf_counter()
    with pytest.raises(RetryableError) as err:
        _generate(load(fake.uri(), timeout_s=0.3), _text("Q?"))
    assert err.value.reason == "timeout" and time.perf_counter() - start < 2.5


@pytest.mark.parametrize("kind", ["empty", "null"])
def test_empty_and_null_content_are_failed_attempts_not_answers(fake, kind):
    fake.configure(faults=[{"kind": kind, "times": 1}])
    with pytest.raises(RetryableError) as err:
        _generate(load(fake.uri()), _text("one"))
    assert err.value.reason == "empty_reply" and f"{kind} content" in str(err.value)
    assert _generate(load(fake.uri()), _text("one")).finish_reason == "stop"  # the next attempt answers


def test_a_length_cut_reply_is_kept_with_its_finish_reason(fake):
    fake.configure(faults=[{"kind": "length", "times": 1}])
    response = _generate(load(fake.uri()), _text("one"))
    assert response.finish_reason == "length" and response.text.endswith("Because the")


def test_the_key_is_scrubbed_from_error_messages(fake):
    fake.configure(faults=[{"kind": "401_echo", "times": 1}])
    with pytest.raises(RequestError) as err:
        _generate(load(fake.uri()), _text("Q?"))
    assert err.value.reason == "http_401" and "[REDACTED]" in str(err.value) and KEY not in str(err.value)
    assert "API key" in str(err.value)


def test_keys_come_from_the_environment_only(fake, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-other")
    monkeypatch.delenv("OPENAI_API_KEY")
    _generate(load(fake.uri(), api_key_env="MY_KEY"), _text("Q?"))
    assert fake.stats()["auth"] == ["Bearer sk-other"]
    with pytest.raises(InvalidInputError, match="NOPE named by --api-key-env is not set"):
        load(fake.uri(), api_key_env="NOPE")
    # a local server needs no key; a remote one does
    assert load(fake.uri()).endpoint == fake.base_url
    with pytest.raises(InvalidInputError, match="export OPENAI_API_KEY"):
        load("openai+https://8.8.8.8/v1:gpt-4o")


@pytest.mark.parametrize("key, shown", [(KEY + "\r", "'\\r'"), ("sk-tab\there-0123", "'\\t'"),
                                        ("sk-ключ-0123456", "'к'")])
def test_a_key_headers_cannot_carry_is_refused_before_any_request(fake, monkeypatch, key, shown):
    # a .env saved with CRLF line ends exports the key with a trailing carriage return: every request would fail
    # ("not valid JSON", "Connection failed") and be retried, blamed on the server
    monkeypatch.setenv("OPENAI_API_KEY", key)
    calls = sum(fake.stats()["counts"].values())
    with pytest.raises(InvalidInputError) as err:
        load(fake.uri())
    message = str(err.value)
    assert message.startswith("The environment variable OPENAI_API_KEY holds the character " + shown)
    assert "\n" not in message and message.endswith(".") and "sk-" not in message
    assert ("CRLF" in message) == key.endswith("\r")
    assert sum(fake.stats()["counts"].values()) == calls  # nothing was sent
    monkeypatch.setenv("MY_KEY", key)
    with pytest.raises(InvalidInputError, match="variable MY_KEY holds"):
        load(fake.uri(), api_key_env="MY_KEY")


def test_openai_scheme_uses_openai_base_url(fake, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    fake.configure(keep_bodies=True)
    backend = load("openai:gpt-4o-mini")
    assert backend.endpoint == fake.base_url and backend.identity()["model"] == "gpt-4o-mini"
    _generate(backend, _text("Q?"))
    assert fake.stats()["bodies"][0]["model"] == "gpt-4o-mini"
    monkeypatch.delenv("OPENAI_BASE_URL")
    official = load("openai:gpt-4o")
    assert official.endpoint == "https://api.openai.com/v1" and official.max_tokens_param == "max_completion_tokens"


def test_retry_after_reads_seconds_milliseconds_and_dates():
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    later = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    assert 25 < retry_after({"retry-after": later}) <= 31
    assert retry_after({"retry-after": "soon"}) is None and retry_after({}) is None


def test_unset_temperature_and_cap_are_left_to_the_provider(fake):
    """A paper that set neither (TemMed-Bench's release) ran on the provider's defaults: nothing is sent."""
    fake.configure(keep_bodies=True)
    backend = load(fake.uri("org/vlm"))
    _generate(backend, Request((Message("user", (TextPart("Q?"),)),), GenerateConfig(temperature=None, max_tokens=None)))
    (body,) = fake.stats()["bodies"]
    assert "temperature" not in body and "max_tokens" not in body and "max_completion_tokens" not in body


def test_a_run_naming_the_openai_backend_imports_the_sdk_in_the_background():
    """`backends.preload` (what `arun` calls before loading its benchmark) starts the SDK's import in another
    thread, so the main thread goes on; a URI of another backend, or no URI at all, starts nothing."""
    import subprocess
    import sys

    code = ("import sys, threading; from medtemporal.backends import preload, openai_http; "
            "preload('baseline:random'); preload('not a uri'); print('OTHER', openai_http._SDK is None); "
            "preload('openai+http://127.0.0.1:9/v1:m'); "
            "print('THREAD', [t.name for t in threading.enumerate() if t.name == 'medtemporal-import-openai']); "
            "print('SDK', openai_http.sdk() is sys.modules['openai'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[:3] == ["OTHER True", "THREAD ['medtemporal-import-openai']", "SDK True"]
