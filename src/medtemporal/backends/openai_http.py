"""OpenAI-compatible chat endpoints through the official ``openai`` async client.

Covers hosted APIs and local servers (vLLM, SGLang, Ollama, LM Studio):

- ``openai:MODEL``: the base URL from ``OPENAI_BASE_URL``, else the OpenAI API;
- ``openai+http://HOST:PORT/PATH:MODEL`` (or ``openai+https://``): that server
  (see `medtemporal.backends.uri` for how the model name is split off).

Images go as base64 data URLs in content parts, in the request's order with
the captions the protocol put before them, shrunk to ``max_pixels`` and
encoded once per run. The API key is read from the environment only
(``OPENAI_API_KEY`` or the variable named by ``api_key_env``) and is scrubbed
from every error message, as are credentials in the base URL. The client's own
retries are off: the runner retries, honouring ``Retry-After``. A reply with
empty or null content is a failed attempt (retried, never cached); the reply's
``finish_reason`` is kept, so a length-cut answer is counted as truncated.
The client sends through the SDK's own aiohttp transport
(``openai.DefaultAioHttpClient``) by default, which costs about 40 % less CPU
per request than the SDK's default httpx pool at 32 requests in flight
(``bench/harness_efficiency.py`` with and without ``--option http_client=httpx``, which picks the
httpx pool; it is also the fallback where ``aiohttp`` is not installed).
`OpenAIBackend.pin` makes every connection go to addresses the data-use guard
checked, through either client. The SDK (about 0.5 s of imports: it defines ~700 pydantic classes) is imported
in a background thread from the moment a run names this backend (`preload`), while the run loads its benchmark
and encodes its first images; the first request waits for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import email.utils
import functools
import importlib.util
import inspect
import json
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar
from medtemporal.backends.base import (
    REFUSED,
    Backend,
    ImagePart,
    Request,
    RequestError,
    Response,
    RetryableError,
    TextPart,
)
from medtemporal.backends.images import DEFAULT_MAX_PIXELS, ImageCache, encode_data_url
from medtemporal.backends.uri import (
    MIN_SECRET,
    BaseURL,
    is_local_endpoint,
    parse_base_url,
    parse_endpoint,
    shown_uri,
)
from medtemporal.errors import InvalidInputError
from medtemporal.registry import register

OPENAI_API = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
REFUSED_ATTEMPTS = 2
"""Attempts at a request whose connection was refused: one retry covers a server that is just starting."""
HTTP_CLIENTS = ("httpx", "aiohttp")
"""The openai SDK's HTTP transports a backend may send through."""


_SDK: concurrent.futures.Future[Any] | None = None
_SDK_LOCK = threading.Lock()


def preload() -> concurrent.futures.Future[Any]:
    """Start importing the openai SDK (and the transport wrapper of a pinned connection) in a background thread,
    once per process: the import's future, whose result is the ``openai`` module."""
    global _SDK
    with _SDK_LOCK:
        if _SDK is not None:
            return _SDK
        _SDK = future = concurrent.futures.Future()
    threading.Thread(target=_import_sdk, args=(future,), name="medtemporal-import-openai", daemon=True).start()
    return future


def _import_sdk(future: concurrent.futures.Future[Any]) -> None:
    try:
        import openai

        import medtemporal.backends.pinning  # noqa: F401  (a pinned connection's transport: httpx2 is loaded now)
    except BaseException as exc:  # an ImportError is raised where the SDK is first needed
        future.set_exception(exc)
    else:
        future.set_result(openai)


def sdk() -> Any:
    """The ``openai`` module, waiting for `preload`'s import (started here when nothing started it)."""
    return preload().result()


def default_http_client() -> str:
    """``aiohttp`` where it is installed (it is a dependency), else ``httpx``."""
    return "aiohttp" if importlib.util.find_spec("aiohttp") is not None else "httpx"


def retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    try:
        if ms is not None:
            return max(0.0, float(ms) / 1000)
    except ValueError:
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def dumps(value: Any) -> bytes:
    """``value`` as JSON the way the openai SDK writes request bodies (``openai._utils._json.openapi_dumps``):
    UTF-8, compact, no NaN."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def image_part(path: Path, max_pixels: int | None) -> bytes:
    """The JSON content part that sends the image at ``path`` as a data URL (`encode_data_url`)."""
    return dumps({"type": "image_url", "image_url": {"url": encode_data_url(path, max_pixels)}})


def _field(data: Any, name: str) -> Any:
    """``data[name]`` when ``data`` is a JSON object, else None (a reply's missing or odd parts read as absent)."""
    return data.get(name) if isinstance(data, dict) else None


def _count(value: Any) -> int | None:
    """A token count as the reply gave it, None unless it is a whole number."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_OWN_FIELDS = frozenset({"model", "messages", "temperature", "max_tokens", "max_completion_tokens", "seed", "top_p"})


def _extra_body(extra: Any) -> dict[str, Any]:
    """``extra`` checked: a JSON object that does not override the fields the run itself sets."""
    if extra is None:
        return {}
    if not isinstance(extra, dict):
        raise InvalidInputError(
            f"extra_body must be a JSON object, not {extra!r}; write e.g. --option 'extra_body={{\"top_k\": 20}}'."
        )
    clash = sorted(set(extra) & _OWN_FIELDS)
    if clash:
        raise InvalidInputError(
            f"extra_body may not set {', '.join(clash)}; set them with the run's own flags "
            "(--model, --temperature, --max-tokens, --seed, --top-p)."
        )
    return dict(extra)


class OpenAIBackend(Backend):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    Args:
        uri: the model URI as shown and recorded (credentials hidden, `medtemporal.backends.uri.shown_uri`).
        base_url: endpoint root, e.g. ``http://localhost:8000/v1``, parsed once (`parse_base_url`): the client
            connects to it without its user information, which goes as HTTP Basic auth instead of the key.
        model: the model name the server knows.
        api_key: the key; read from the environment by `load_openai`, never stored elsewhere.
        max_pixels: bound on width × height of each image sent.
        timeout_s: per-request timeout of the HTTP client.
        concurrency: default number of requests in flight.
        max_images: most images one request may carry (None: no limit).
        max_tokens_param: ``max_tokens`` (compatible servers) or ``max_completion_tokens`` (OpenAI API).
        extra_body: server-specific request fields merged into every request body (vLLM's ``top_k``,
            ``repetition_penalty``, ``chat_template_kwargs`` ...); part of the model's identity.
        http_client: ``aiohttp`` (the SDK's aiohttp transport: less CPU per request; environment proxies honoured
            as by httpx) or ``httpx`` (the SDK's own default pool); None: ``aiohttp`` where it is installed, else
            ``httpx`` (see `default_http_client`).
    """

    def __init__(
        self,
        uri: str,
        base_url: str | BaseURL,
        model: str,
        api_key: str,
        *,
        max_pixels: int | None = DEFAULT_MAX_PIXELS,
        timeout_s: float = 120.0,
        concurrency: int = 8,
        max_images: int | None = None,
        max_tokens_param: str = "max_tokens",
        extra_body: dict[str, Any] | None = None,
        http_client: str | None = None,
    ) -> None:
        base = base_url if isinstance(base_url, BaseURL) else parse_base_url(base_url, "base_url")
        super().__init__(uri=uri, max_images=max_images, concurrency=concurrency)
        if importlib.util.find_spec("openai") is None:
            import openai  # noqa: F401  (raises the ModuleNotFoundError that names the missing package)
        preload()
        self._base = base
        self.base_url = base.url
        """Where requests go: no credentials in it."""
        self.shown_url = base.shown
        """The base URL as shown and recorded: credentials hidden."""
        self._timeout_s = timeout_s
        self.model = model
        self.max_pixels = max_pixels
        self.max_tokens_param = max_tokens_param
        self.extra_body = _extra_body(extra_body)
        self.images: ImageCache[bytes] = ImageCache(functools.partial(image_part, max_pixels=max_pixels), len,
                                                    512 * 1024**2)
        """The JSON content part of each image sent (its data URL), each encoded once."""
        self._secret = api_key
        self._secrets = tuple(x for x in (api_key, *base.secrets()) if len(x) >= MIN_SECRET)
        """What `_redact` takes out of any text kept: the key and every form of the URL's credentials."""
        self._headers = {"Authorization": base.basic_auth} if base.basic_auth else None
        if http_client is None:
            http_client = default_http_client()
        if http_client not in HTTP_CLIENTS:
            raise InvalidInputError(f"http_client must be one of {', '.join(HTTP_CLIENTS)}, not {http_client!r}.")
        self.http_client = http_client
        if http_client == "aiohttp" and importlib.util.find_spec("aiohttp") is None:  # the SDK's transport needs it
            raise InvalidInputError("http_client=aiohttp needs aiohttp: pip install aiohttp (or drop the option).")
        self._pinned: tuple[str, ...] | None = None
        self._sdk: Any = None
        self._bytes_arg = "content"
        """How `post` takes a body of bytes: ``content`` from openai 2.16, ``body`` before (set with the client)."""

    @property
    def endpoint(self) -> str:
        return self.shown_url

    def pin(self, addresses: Sequence[str]) -> None:
        """Send every request to ``addresses`` (checked IPs of the endpoint's host) and nowhere else.

        Environment proxies are bypassed from now on (the client has its own transport), through the same
        HTTP client as before (`PinnedTransport` wraps either).
        """
        if self._pinned != tuple(addresses):
            self._pinned, self._sdk = tuple(addresses), None  # the next request makes a client pinned so

    @property
    def _openai(self) -> Any:
        """The ``openai`` module (`sdk`: imported in the background since the backend was named)."""
        return sdk()

    @property
    def _client(self) -> Any:
        """The SDK client, made on first use (once: its TLS context alone takes tens of milliseconds)."""
        if self._sdk is None:
            post = inspect.signature(self._openai.AsyncOpenAI.post).parameters
            self._bytes_arg = "content" if "content" in post else "body"
            self._sdk = self._openai.AsyncOpenAI(
                api_key=self._secret, base_url=self.base_url, max_retries=0, timeout=self._timeout_s,
                default_headers=self._headers, **self._transport()
            )
        return self._sdk

    def _transport(self) -> dict[str, Any]:
        """The SDK's ``http_client`` argument: the chosen client, pinned where `pin` was called."""
        if self._pinned is None:
            return {"http_client": self._openai.DefaultAioHttpClient(timeout=self._timeout_s)} \
                if self.http_client == "aiohttp" else {}
        import httpx2
        from openai._constants import DEFAULT_CONNECTION_LIMITS

        from medtemporal.backends.pinning import PinnedTransport

        if self.http_client == "aiohttp":
            from openai._vendor.httpx_aiohttp import AiohttpTransport

            inner, client = AiohttpTransport(limits=DEFAULT_CONNECTION_LIMITS), self._openai.DefaultAioHttpClient
        else:
            inner = httpx2.AsyncHTTPTransport(limits=DEFAULT_CONNECTION_LIMITS)
            client = self._openai.DefaultAsyncHttpxClient
        transport = PinnedTransport(self._base.host, self._pinned, inner)
        return {"http_client": client(transport=transport, timeout=self._timeout_s)}

    def identity(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "api": "chat.completions",
            "base_url": self.shown_url,
            "model": self.model,
            "max_pixels": self.max_pixels,
            **({"extra_body": self.extra_body} if self.extra_body else {}),
        }

    def settings(self) -> dict[str, Any]:
        return {"concurrency": self.concurrency, "max_images": self.max_images, "extra_body": self.extra_body,
                "http_client": self.http_client}

    def _redact(self, text: str) -> str:
        """``text`` without the key or the URL's credentials in any form (at least `MIN_SECRET` long)."""
        for secret in self._secrets:
            text = text.replace(secret, "[REDACTED]")
        return text

    async def prepare(self, request: Request) -> None:
        """Encode the request's images (once each) and wait for the SDK's import (`preload`) while the request
        still waits for a slot, so that no attempt's timeout counts the import."""
        for path in request.image_paths:
            await self.images.aget(path)
        if self._sdk is None:
            await asyncio.wrap_future(preload())

    async def body(self, request: Request) -> bytes:
        """The request's ``/chat/completions`` body: JSON as the SDK writes it (`dumps`), system prompt first
        when the config sets one, a message without images as plain text, each image's content part spliced in
        from `images` (encoded once per image, however many items, repeats and retries send it)."""
        cfg = request.config
        params: dict[str, Any] = {"model": self.model}
        if cfg.temperature is not None:  # None: the provider's default, as papers that set none ran
            params["temperature"] = cfg.temperature
        if cfg.max_tokens is not None:
            params[self.max_tokens_param] = cfg.max_tokens
        if cfg.seed is not None:
            params["seed"] = cfg.seed
        if cfg.top_p is not None:
            params["top_p"] = cfg.top_p
        params.update(self.extra_body)
        messages: list[bytes] = []
        if request.system_prompt:
            messages.append(dumps({"role": "system", "content": request.system_prompt}))
        for message in request.messages:
            if message.n_images == 0:
                text = "\n".join(p.text for p in message.parts if isinstance(p, TextPart))
                messages.append(dumps({"role": message.role, "content": text}))
                continue
            parts = [await self.images.aget(part.path) if isinstance(part, ImagePart)
                     else dumps({"type": "text", "text": part.text}) for part in message.parts]
            messages.append(b'{"role":' + dumps(message.role) + b',"content":[' + b",".join(parts) + b"]}")
        return dumps(params)[:-1] + b',"messages":[' + b",".join(messages) + b"]}"

    async def generate(self, request: Request) -> Response:
        body = await self.body(request)
        try:
            # The body is JSON bytes already: the client's `post` sends them with the same auth, connection
            # pool and errors as `chat.completions.create`, without that method re-walking every content
            # part against its typed-dict unions (about 1.4 ms of CPU per five-image request) nor encoding
            # the images' base64 text again for every request that shows them. The reply comes back as the
            # decoded JSON (``cast_to=object``): building a `ChatCompletion` model of it costs about 0.2 ms
            # more, for the five fields read below.
            completion = await self._client.post("/chat/completions", cast_to=object, **{self._bytes_arg: body})
            if isinstance(completion, str):  # a JSON body the server labelled otherwise, as the typed path reads it
                completion = json.loads(completion)
        except (self._openai.OpenAIError, ValueError) as exc:
            raise self._classify(exc) from None
        choices = _field(completion, "choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        message = _field(first, "message")
        if not isinstance(message, dict):
            raise RetryableError(f"{self.shown_url} answered without a message.", reason="bad_response")
        finish = _field(first, "finish_reason")
        content = message.get("content")
        if not isinstance(content, str) or not content.strip():
            what = "null content" if content is None else "empty content"
            raise RetryableError(
                f"{self.shown_url} answered with {what} (finish_reason {finish!r}).", reason="empty_reply"
            )
        usage = _field(completion, "usage")
        model = _field(completion, "model")
        return Response(
            text=self._redact(content),  # a server may echo the key or the Authorization header
            input_tokens=_count(_field(usage, "prompt_tokens")),
            output_tokens=_count(_field(usage, "completion_tokens")),
            model=self._redact(model) if isinstance(model, str) else None,
            finish_reason=finish if isinstance(finish, str) else None,
        )

    def _classify(self, exc: Exception) -> RetryableError | RequestError:
        """The client's exception as a `RetryableError` or `RequestError`, key scrubbed."""
        o = self._openai
        detail = self._redact(str(exc))[:300]
        if isinstance(exc, o.APIConnectionError) and _refused(exc):
            return RetryableError(
                f"Connection to {self.shown_url} refused: nothing is listening there; start the server or check the "
                "host and port.", reason=REFUSED, attempts=REFUSED_ATTEMPTS,
            )
        from medtemporal.backends.pinning import RedirectRefused  # pinned runs only; httpx2 is loaded by then

        refused = _in_chain(exc, RedirectRefused)
        if refused is not None:  # the same request is redirected the same way again: not worth retrying
            return RequestError(
                f"{self.shown_url} redirected the request to {refused.host}, which this run may not reach: credentialed "
                "data goes only to the address the guard checked; point --model at the server's own address.",
                reason="redirect_refused",
            )
        if isinstance(exc, o.APITimeoutError) and not (self.http_client == "aiohttp" and _dropped(exc)):
            return RetryableError(f"{self.shown_url} did not answer in time.", reason="timeout")
        if isinstance(exc, o.APIConnectionError):  # APITimeoutError is one: here a dropped connection
            return RetryableError(f"Connection to {self.shown_url} failed ({detail}).", reason="connection")
        if isinstance(exc, o.APIStatusError):
            status = exc.status_code
            wait = retry_after(exc.response.headers)
            if status == 429:
                return RetryableError(
                    f"{self.shown_url} is rate limiting ({detail}).", reason="rate_limited", retry_after=wait
                )
            if status >= 500 or status in (408, 409):
                return RetryableError(
                    f"{self.shown_url} failed with HTTP {status} ({detail}).", reason="server_error", retry_after=wait
                )
            hint = "; check the API key (OPENAI_API_KEY or --api-key-env)" if status in (401, 403) else ""
            return RequestError(
                f"{self.shown_url} refused the request with HTTP {status} ({detail}){hint}.", reason=f"http_{status}"
            )
        if isinstance(exc, (ValueError, o.APIResponseValidationError)):
            return RetryableError(
                f"{self.shown_url} sent a reply that is not valid JSON ({detail}).", reason="bad_response"
            )
        return RequestError(f"The request to {self.shown_url} failed ({detail}).", reason="client_error")

    async def aclose(self) -> None:
        if self._sdk is not None:
            await self._sdk.close()


E = TypeVar("E", bound=BaseException)


def _in_chain(exc: BaseException, kind: type[E]) -> E | None:
    """The first exception of ``kind`` in ``exc``'s chain of causes, or None."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, kind):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _refused(exc: BaseException) -> bool:
    """True when ``exc`` was caused by a refused connection, whichever transport raised it (httpx and aiohttp
    both keep the operating system's `ConnectionRefusedError` in the chain; aiohttp's comes labelled a timeout)."""
    return _in_chain(exc, ConnectionRefusedError) is not None


def _dropped(exc: BaseException) -> bool:
    """True when ``exc`` comes from an aiohttp connection error that is not a timeout (a connection dropped or
    refused): the SDK's aiohttp transport reports every aiohttp connection error as httpx's ``ConnectTimeout``."""
    import aiohttp

    cause = exc.__cause__
    while cause is not None:
        if isinstance(cause, aiohttp.ClientConnectionError):
            return not isinstance(cause, (TimeoutError, asyncio.TimeoutError))
        cause = cause.__cause__
    return False


def _api_key(api_key_env: str | None, base: BaseURL) -> str:
    name = api_key_env or DEFAULT_KEY_ENV
    key = os.environ.get(name, "")
    bad = next((c for c in key if not (c.isascii() and c.isprintable()) or c.isspace()), None)
    if bad is not None:  # an HTTP header cannot carry it: every request would fail, blamed on the server
        why = " (a Windows line end: the .env file was saved with CRLF)" if bad in "\r\n" else ""
        raise InvalidInputError(
            f"The environment variable {name} holds the character {bad!r}{why}, which an API key sent in an HTTP "
            f"header cannot hold; export {name} again without it (e.g. run `dos2unix` on the .env file)."
        )
    if key:
        return key
    if api_key_env:
        raise InvalidInputError(
            f"The environment variable {name} named by --api-key-env is not set; export it with your key."
        )
    if is_local_endpoint(base.url, private=True):
        return "EMPTY"  # servers on this machine or its network (vLLM, Ollama) accept any key
    raise InvalidInputError(
        f"{base.shown} needs an API key; export {DEFAULT_KEY_ENV} (or name another variable with --api-key-env)."
    )


@register("backend", "openai", description="OpenAI API (or OPENAI_BASE_URL)", example="openai:gpt-4o",
          preload=preload)
@register("backend", "openai+http", description="OpenAI-compatible server",
          example="openai+http://localhost:8000/v1:MODEL", preload=preload)
@register("backend", "openai+https", description="OpenAI-compatible server over TLS",
          example="openai+https://HOST/v1:MODEL", preload=preload)
def load_openai(
    uri: str,
    target: str,
    *,
    api_key_env: str | None = None,
    max_pixels: int | None = DEFAULT_MAX_PIXELS,
    timeout_s: float = 120.0,
    concurrency: int = 8,
    max_images: int | None = None,
    extra_body: dict[str, Any] | None = None,
    http_client: str | None = None,
) -> OpenAIBackend:
    """``openai:MODEL`` at ``OPENAI_BASE_URL`` (else the OpenAI API), or ``openai+http(s)://HOST:PORT/PATH:MODEL``.

    The OpenAI API itself takes ``max_completion_tokens``; other servers take ``max_tokens``.
    """
    if uri.startswith("openai:"):
        base, model = parse_base_url(os.environ.get("OPENAI_BASE_URL") or OPENAI_API, "OPENAI_BASE_URL"), target
    else:
        base, model = parse_endpoint(uri)
    return OpenAIBackend(
        shown_uri(uri),
        base,
        model,
        _api_key(api_key_env, base),
        max_pixels=max_pixels,
        timeout_s=timeout_s,
        concurrency=concurrency,
        max_images=max_images,
        max_tokens_param="max_completion_tokens" if base.url == OPENAI_API else "max_tokens",
        extra_body=extra_body,
        http_client=http_client,
    )
