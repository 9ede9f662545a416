"""Model URIs: ``scheme:target``, and the endpoint rule of ``openai+http(s)://`` URIs.

The scheme is everything before the first ``:`` (``openai``, ``openai+http``,
``hf``, ``vllm``, ``baseline``) and names a registered backend. For
``openai+http://`` and ``openai+https://`` the target holds a base URL and
a model name, and model names may themselves contain ``:`` and ``/``
(``Qwen/Qwen2.5-VL-7B-Instruct``, Ollama's ``llama3.2-vision:11b``). The rule:

    the base URL is ``http(s)://HOST[:PORT][/PATH]`` where PORT is digits (a
    ``:`` and a digit right after the host always start the port) and PATH
    holds no ``:``; the model is everything after the next ``:``.

So ``openai+http://localhost:11434/v1:llama3.2-vision:11b`` is base URL
``http://localhost:11434/v1`` and model ``llama3.2-vision:11b``. IPv6 hosts
are bracketed (``http://[::1]:8000/v1``). Credentials in a URL
(``http://user:KEY@host/v1``) are passed on to the server but never shown:
`redact` hides them in every message and record.

>>> split_endpoint("openai+http://localhost:8000/v1:Qwen/Qwen2.5-VL-7B-Instruct")
('http://localhost:8000/v1', 'Qwen/Qwen2.5-VL-7B-Instruct')
"""

from __future__ import annotations

import base64
import ipaddress
import os
import re
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from medtemporal.errors import InvalidInputError

_HOST_PORT_PATH = re.compile(
    r"""^(?P<host>\[[0-9A-Fa-f:.]+(?:%[^\]]*)?\]|[^/:\[\]@\s?#]+)
        (?::(?P<port>\d+)(?=[/:]|$)|(?!:\d))
        (?P<path>/[^:\s?#]*)?
        :(?P<model>\S.*)$""",
    re.VERBOSE,
)
"""``HOST[:PORT][/PATH]:MODEL``: what an ``openai+http(s)://`` URI holds after the scheme and any user info."""

_URL = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<rest>[^\s'\"<>]*)")
_NAME = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?$")
MIN_SECRET = 6
"""Shorter secrets are not searched for in free text (model replies): they cannot be told from ordinary words."""


def _authority_end(rest: str) -> int:
    """Where the authority of a URL's text after ``//`` ends: at the first ``/``, ``?`` or ``#`` (RFC 3986, as
    `urllib.parse.urlsplit` reads it)."""
    return min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))


def redact(text: str) -> str:
    """``text`` with the user information of every URL in it replaced by ``***``.

    User information is read as the standard library reads it: the authority runs from ``//`` to the first
    ``/``, ``?`` or ``#``, and everything up to its *last* ``@`` is user and password (so a password may hold
    ``@``).

    >>> redact("openai+http://user:sk-123@gpu-box:8000/v1:m")
    'openai+http://***@gpu-box:8000/v1:m'
    >>> redact("http://u:abc@sk-S@127.0.0.1:18001/v1")
    'http://***@127.0.0.1:18001/v1'
    """

    def hide(m: re.Match[str]) -> str:
        rest = m["rest"]
        at = rest.rfind("@", 0, _authority_end(rest))
        return m[0] if at < 0 else m["scheme"] + "***@" + rest[at + 1:]

    return _URL.sub(hide, text)


CREDENTIAL_WORDS = ("secret", "token", "password", "passwd", "passphrase", "pwd", "auth", "credential", "bearer",
                    "cookie", "signature", "apikey")
"""Words that make a name a credential wherever they stand in one of its words (``x-api-token``, ``clientsecret``,
``Authorization``, ``oauth``, ``secretkey``)."""
KEY_WORDS = ("key", "keys")
"""A key is a credential when another word qualifies it, joined or not (``api_key``, ``accesskey``,
``subscription_key``, ``x-functions-key``); ``key`` alone, a mapping's key, is not."""
NOT_CREDENTIALS = frozenset({"tokens", "tokenizer", "tokenizers", "tokenize", "tokenization", "detokenize",
                             "author", "authors", "authority", "sort_key", "cache_key", "primary_key", "monkey"})
"""Words (or ``_``-joined word pairs) that hold a credential's word and are none: ``max_tokens``, ``tokenizer``."""


def _words(name: str) -> list[str]:
    """``apiKey`` / ``X-Api-Token`` / ``api_key`` → their lower-case words."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()
    return [w for w in re.split(r"[^a-z0-9]+", spaced) if w]


def _credential_word(word: str) -> bool:
    """A word that names a credential by itself (``secret``, ``accesstoken``, ``subscriptionkey``)."""
    if word in NOT_CREDENTIALS:
        return False
    return any(c in word for c in CREDENTIAL_WORDS) or (word.endswith(KEY_WORDS) and word not in KEY_WORDS)


def is_credential_name(name: str) -> bool:
    """Whether an option or header called ``name`` holds a credential, read word by word (``max_tokens`` does not).

    >>> [is_credential_name(n) for n in ("api_key", "apiKey", "X-Api-Token", "Authorization", "max_tokens", "key",
    ...                                  "api_key_env", "accesskey", "secretkey", "subscription_key", "tokenizer")]
    [True, True, True, True, False, False, False, True, True, True, False]
    """
    parts = _words(name)
    if parts[-1:] == ["env"]:  # the name of a variable that holds one (api_key_env), not the credential
        return False
    return any(_credential_word(w) for w in parts) or any(
        b in KEY_WORDS and f"{a}_{b}" not in NOT_CREDENTIALS for a, b in zip(parts, parts[1:]))


HIDDEN = "[REDACTED]"


def hide_credentials(value: Any) -> Any:
    """``value`` (options, settings, an identity: dicts and lists at any depth) with the value of every key named
    like a credential (`is_credential_name`) replaced by ``[REDACTED]``, and URL credentials in strings hidden
    (`redact`): what a record or report may keep of what the user passed.

    >>> hide_credentials({"extra_body": {"api_key": "sk-1", "top_k": 5}, "headers": [{"Authorization": "Bearer x"}]})
    {'extra_body': {'api_key': '[REDACTED]', 'top_k': 5}, 'headers': [{'Authorization': '[REDACTED]'}]}
    """
    if isinstance(value, dict):
        return {k: HIDDEN if isinstance(k, str) and is_credential_name(k) and value[k] not in (None, "")
                else hide_credentials(value[k]) for k in value}
    if isinstance(value, (list, tuple)):
        return type(value)(hide_credentials(v) for v in value)
    return redact(value) if isinstance(value, str) else value


def conceal(text: str) -> str:
    """`redact`, and also everything between ``://`` and the last ``@`` of a URL that the standard library would
    not read as user information (a password holding an unencoded ``/``, ``?`` or ``#``): for sentences about
    URLs that did not parse.

    >>> conceal("http://u:ab/cd@127.0.0.1/v1")
    'http://***@127.0.0.1/v1'
    """

    def hide(m: re.Match[str]) -> str:
        at = m["rest"].rfind("@")
        return m[0] if at < 0 else m["scheme"] + "***@" + m["rest"][at + 1:]

    return _URL.sub(hide, text)


@dataclass(frozen=True)
class BaseURL:
    """An ``http(s)://[USER[:PASSWORD]@]HOST[:PORT][/PATH]`` base URL, parsed once (`parse_base_url`).

    The data-use guard judges `host`, the client connects to `url` (which holds no credentials) and sends
    the credentials as HTTP Basic auth (`basic_auth`), so no two parsers can disagree about where the bytes go.
    """

    url: str
    """``scheme://host[:port][/path]``: what the client is given; no credentials."""
    host: str
    """The host as the client reads it: lower case, an IPv6 address without brackets."""
    username: str | None = None
    """Percent-decoded, as HTTP clients send it."""
    password: str | None = None
    raw_userinfo: str | None = None
    """The user information as written (before percent-decoding)."""

    @property
    def shown(self) -> str:
        """The URL as shown and recorded: ``scheme://***@host...`` when it carries credentials."""
        if self.raw_userinfo is None:
            return self.url
        scheme, _, rest = self.url.partition("://")
        return f"{scheme}://***@{rest}"

    @property
    def basic_auth(self) -> str | None:
        """The ``Authorization`` header value for the credentials (HTTP Basic), or None without any."""
        if self.raw_userinfo is None:
            return None
        pair = f"{self.username or ''}:{self.password or ''}"
        return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")

    def secrets(self) -> tuple[str, ...]:
        """Every form of the credentials that could show up in text: user information as written, user name and
        password raw and decoded, and the Basic token."""
        if self.raw_userinfo is None:
            return ()
        user, _, password = self.raw_userinfo.partition(":")
        forms = {self.raw_userinfo, user, password, self.username or "", self.password or "",
                 (self.basic_auth or "").removeprefix("Basic ")}
        return tuple(sorted((f for f in forms if f), key=len, reverse=True))


def _bad_host(host: str) -> tuple[str, str] | None:
    """Why ``host`` (from the URL, brackets kept) is not a host every client reads alike and what to write
    instead, or None."""
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1].split("%", 1)[0])
        except ValueError:
            return f"names the host {host!r}, which is not an IPv6 address", "write e.g. http://[::1]:8000/v1"
        return None
    if not host.isascii():
        return (f"names the host {host!r}, which is not plain ASCII (clients and resolvers map such names "
                "differently)", "write the name as it is registered, an international name in its xn-- form")
    labels = host.rstrip(".").split(".")
    if re.fullmatch(r"\d+|0[xX][0-9A-Fa-f]*", labels[-1]):  # an address, not a name (RFC 3696 §2)
        try:
            if str(ipaddress.IPv4Address(host)) == host:
                return None
        except ValueError:
            pass
        return (f"names the host {host!r}, which is not an IPv4 address in plain dotted decimal (resolvers and HTTP "
                "clients read forms like 0177.0.0.1 differently)",
                "write it as four numbers 0-255 without leading zeros, e.g. 127.0.0.1")
    if not _NAME.match(host):
        return (f"names the host {host!r}, which is not a host name",
                "write it with letters, digits, '-' and '.' only, or as an IP address")
    return None


def parse_base_url(url: str, where: str) -> BaseURL:
    """``url`` parsed with the standard library's rules into a `BaseURL`, or one sentence naming ``where``.

    Refuses whitespace and control characters (a tab pasted into ``OPENAI_BASE_URL``), other schemes,
    a missing host, a host that clients read in different ways (``0177.0.0.1``, non-ASCII names),
    ports outside 1-65535, and a query or fragment (``#``, ``?``): a base URL has none, and text after
    them is not where the request goes. The sentence never shows the user information.

    >>> parse_base_url("http://u:p%40ss@127.0.0.1:8000/v1/", "here").shown
    'http://***@127.0.0.1:8000/v1'
    """
    shown = conceal(url)
    bad = next((c for c in url if c.isspace() or not c.isprintable()), None)
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed IPv6 bracket
        raise InvalidInputError(
            f"The endpoint {shown!r} ({where}) has a malformed IPv6 host; write it as http://[ADDRESS]:PORT/PATH, "
            "e.g. http://[::1]:8000/v1."
        ) from None
    netloc = parts.netloc
    userinfo, at, hostport = netloc.rpartition("@")
    if hostport.startswith("["):
        host_text = hostport[: hostport.find("]") + 1]
    else:
        host_text = hostport.split(":", 1)[0]
    problem, fix = None, "write it as http://HOST:PORT/PATH, e.g. http://localhost:8000/v1"
    encode = "in a user name or password write / ? # and @ as %2F %3F %23 and %40"
    if bad is not None:
        problem = f"contains the character {bad!r}"
    elif parts.scheme not in ("http", "https"):
        problem = "does not start with http:// or https://"
    elif "?" in url or "#" in url:
        problem, fix = "has a query or fragment ('?' or '#'), which a base URL cannot have", f"drop it ({encode})"
    elif "@" in url[len(parts.scheme) + 3 + len(netloc):]:
        problem, fix = "has an '@' after its host, so part of it would be read as a path", encode
    elif not parts.hostname:
        problem = "names no host"
    else:
        problem, fix = _bad_host(host_text) or (None, fix)
    if problem is None:
        try:
            port = parts.port
        except ValueError:
            port = -1
        if port is not None and not 1 <= port <= 65535:
            problem = "has a port that is not a number from 1 to 65535"
    if problem is not None:
        raise InvalidInputError(f"The endpoint {shown!r} ({where}) {problem}; {fix}.")
    path = parts.path.rstrip("/")
    clean = f"{parts.scheme}://{hostport}{path}"
    if not at:
        return BaseURL(url=clean, host=parts.hostname or "")
    return BaseURL(url=clean, host=parts.hostname or "", username=unquote(parts.username or ""),
                   password=None if parts.password is None else unquote(parts.password), raw_userinfo=userinfo)


def split_scheme(uri: str) -> tuple[str, str]:
    """``(scheme, target)`` of ``uri``, split at the first ``:``.

    >>> split_scheme("hf:/models/MedGemma-4b-it")
    ('hf', '/models/MedGemma-4b-it')
    """
    scheme, sep, target = uri.partition(":")
    if not sep or not scheme or not target:
        raise InvalidInputError(
            f"Model {conceal(uri)!r} is not a model URI; write SCHEME:TARGET, e.g. openai:gpt-4o, "
            "openai+http://localhost:8000/v1:MODEL, hf:/path/to/model or baseline:random."
        )
    return scheme, target


def parse_endpoint(uri: str) -> tuple[BaseURL, str]:
    """The `BaseURL` and the model of an ``openai+http(s)://[USERINFO@]HOST[:PORT][/PATH]:MODEL`` URI.

    User information is taken off first, by the standard library's rule (up to the last ``@`` before the first
    ``/``, ``?`` or ``#``), so no part of it can become the host or the model name.
    """
    scheme = re.match(r"openai\+(https?)://", uri)
    rest = uri[scheme.end():] if scheme else ""
    at = rest.rfind("@", 0, _authority_end(rest))
    match = _HOST_PORT_PATH.match(rest[at + 1:]) if scheme else None
    if scheme is None or match is None:
        raise InvalidInputError(
            f"Model {conceal(uri)!r} does not name an endpoint and a model; write "
            "openai+http://HOST:PORT/PATH:MODEL, e.g. openai+http://localhost:8000/v1:Qwen/Qwen2.5-VL-7B-Instruct."
        )
    userinfo = rest[: at + 1]
    if "@" in match["model"] and not match["path"]:  # the host ended early: a user name or password holds / ? or #
        raise InvalidInputError(
            f"Model {conceal(uri)!r} has an '@' after its host, so part of it would be read as the model name; in a "
            "user name or password write / ? # and @ as %2F %3F %23 and %40 (a model name with '@' needs the base "
            "URL's path, e.g. openai+http://HOST:PORT/v1:MODEL)."
        )
    port = f":{match['port']}" if match["port"] else ""
    url = f"{scheme[1]}://{userinfo}{match['host']}{port}{match['path'] or ''}"
    return parse_base_url(url, "in --model"), match["model"]


def split_endpoint(uri: str) -> tuple[str, str]:
    """``(base_url, model)`` of an ``openai+http(s)://HOST[:PORT][/PATH]:MODEL`` URI (`parse_endpoint`), the
    base URL as shown (credentials hidden).

    >>> split_endpoint("openai+http://[::1]:8000:llava:7b")
    ('http://[::1]:8000', 'llava:7b')
    """
    base, model = parse_endpoint(uri)
    return base.shown, model


def shown_uri(uri: str) -> str:
    """``uri`` as recorded and shown: for ``openai+http(s)://`` URIs rebuilt from their parsed parts (user
    information hidden, however it is written), else with `redact` applied."""
    if re.match(r"openai\+https?://", uri):
        try:
            base, model = parse_endpoint(uri)
        except InvalidInputError:
            return conceal(uri)
        return f"openai+{base.shown}:{model}"
    return redact(uri)


def short_name(uri: str) -> str:
    """A run's default display name: the model's own name, without scheme, endpoint or folder, for the model
    backends (``openai``, ``openai+http(s)``, ``hf``, ``vllm``); baselines and other URIs stay whole.

    >>> short_name("openai+http://localhost:8000/v1:Qwen/Qwen2.5-VL-7B-Instruct")
    'Qwen2.5-VL-7B-Instruct'
    >>> short_name("hf:/models/MedGemma-4b-it/"), short_name("openai:gpt-4o"), short_name("baseline:random")
    ('MedGemma-4b-it', 'gpt-4o', 'baseline:random')
    """
    scheme, _, target = uri.partition(":")
    if re.match(r"openai\+https?$", scheme):
        try:
            target = parse_endpoint(uri)[1]
        except InvalidInputError:
            return shown_uri(uri)
    elif scheme not in ("openai", "hf", "vllm") or not target:
        return shown_uri(uri)
    name = target.rstrip("/").rsplit("/", 1)[-1]
    return name or shown_uri(uri)


PRIVATE_NETWORKS = tuple(
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7", "169.254.0.0/16",
                                      "fe80::/10")
)
"""Private networks (RFC 1918, IPv6 unique local) and link-local ones: local only when the user says so
(`LOCAL_NETWORKS_ENV`), as a cloud provider's private endpoint resolves to such an address too. Python's wider
``is_private`` also takes documentation and reserved ranges, which are no local network."""

LOCAL_NETWORKS_ENV = "MEDTEMPORAL_LOCAL_NETWORKS"
"""Networks the user declares local (comma-separated, ``10.0.0.0/8,fd12::/16``; ``private`` for every one of
`PRIVATE_NETWORKS`): where credentialed data may go besides loopback."""


def local_networks() -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """The networks `LOCAL_NETWORKS_ENV` declares local (none when unset).

    Raises:
        InvalidInputError: an entry that is not a network, in one sentence.
    """
    networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for entry in filter(None, (e.strip() for e in os.environ.get(LOCAL_NETWORKS_ENV, "").split(","))):
        if entry.lower() == "private":
            networks += PRIVATE_NETWORKS
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise InvalidInputError(
                f"{LOCAL_NETWORKS_ENV} holds {entry!r}, which is not a network; write networks such as "
                "10.0.0.0/8,fd12::/16 (or private for every RFC 1918, unique local and link-local one)."
            ) from None
    return tuple(networks)


def is_local_address(text: str, *, private: bool = False) -> bool:
    """True for a loopback address, or one in a network the user declares local (`LOCAL_NETWORKS_ENV`); with
    ``private``, also every private or link-local one (`PRIVATE_NETWORKS`). An IPv6 zone is ignored and an
    IPv4-mapped IPv6 address is judged by its IPv4 address.

    >>> [is_local_address(a) for a in ("127.0.0.1", "10.1.2.3", "::ffff:8.8.8.8", "203.0.113.7")]
    [True, False, False, False]
    >>> is_local_address("10.1.2.3", private=True)
    True
    """
    ip = ipaddress.ip_address(text.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    networks = (*PRIVATE_NETWORKS, *local_networks()) if private else local_networks()
    return ip.is_loopback or any(ip in net for net in networks if ip.version == net.version)


def resolve(host: str) -> list[str]:
    """Every address ``host`` resolves to, once, in the resolver's order (an IP literal is itself).

    ``localhost`` and ``*.localhost`` are resolved like any other name.

    Raises:
        OSError: the name does not resolve.
    """
    try:
        return [str(ipaddress.ip_address(host.split("%", 1)[0]))]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except UnicodeError as exc:
        raise OSError(f"{host!r} is not a valid host name") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def is_local_endpoint(url: str, *, private: bool = False) -> bool:
    """True when every address ``url``'s host resolves to is local (`is_local_address`, ``private`` likewise).

    >>> is_local_endpoint("http://127.0.0.1:8000/v1"), is_local_endpoint("http://[::1]:8000/v1")
    (True, True)
    >>> is_local_endpoint("http://8.8.8.8/v1"), is_local_endpoint("http://10.0.0.5/v1", private=True)
    (False, True)
    """
    host = urlsplit(url).hostname
    if not host:
        return False
    try:
        addresses = resolve(host)
    except OSError:
        return False  # an unresolvable host cannot be shown to be local
    return bool(addresses) and all(is_local_address(a, private=private) for a in addresses)
