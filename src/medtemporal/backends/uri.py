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

import ipaddress
import re
import socket
from urllib.parse import urlsplit

from medtemporal.errors import InvalidInputError

_ENDPOINT = re.compile(
    r"""^openai\+(?P<url>(?P<scheme>https?)://
        (?:[^/@\s]*@)?
        (?P<host>\[[0-9A-Fa-f:.]+\]|[^/:\[\]@\s]+)
        (?::(?P<port>\d+)(?=[/:]|$)|(?!:\d))
        (?P<path>/[^:\s]*)?)
        :(?P<model>\S.*)$""",
    re.VERBOSE,
)


_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]*@")


def redact(text: str) -> str:
    """``text`` with the user and password of every URL in it replaced by ``***``.

    >>> redact("openai+http://user:sk-123@gpu-box:8000/v1:m")
    'openai+http://***@gpu-box:8000/v1:m'
    """
    return _USERINFO.sub(lambda m: m["scheme"] + "***@", text)


def check_base_url(url: str, where: str) -> str:
    """``url`` if it is a usable ``http(s)://HOST[:PORT][/PATH]`` base URL, else one sentence naming ``where``.

    Refuses whitespace and control characters (a tab pasted into ``OPENAI_BASE_URL``), other schemes,
    a missing host and ports outside 1-65535.
    """
    shown = redact(url)
    bad = next((c for c in url if c.isspace() or not c.isprintable()), None)
    problem = None
    if bad is not None:
        problem = f"contains the character {bad!r}"
    else:
        parts = urlsplit(url)
        try:
            port = parts.port
        except ValueError:
            port = -1
        if parts.scheme not in ("http", "https"):
            problem = "does not start with http:// or https://"
        elif not parts.hostname:
            problem = "names no host"
        elif port is not None and not 1 <= port <= 65535:
            problem = "has a port that is not a number from 1 to 65535"
    if problem is not None:
        raise InvalidInputError(
            f"The endpoint {shown!r} ({where}) {problem}; write it as http://HOST:PORT/PATH, e.g. "
            "http://localhost:8000/v1."
        )
    return url


def split_scheme(uri: str) -> tuple[str, str]:
    """``(scheme, target)`` of ``uri``, split at the first ``:``.

    >>> split_scheme("hf:/models/MedGemma-4b-it")
    ('hf', '/models/MedGemma-4b-it')
    """
    scheme, sep, target = uri.partition(":")
    if not sep or not scheme or not target:
        raise InvalidInputError(
            f"Model {redact(uri)!r} is not a model URI; write SCHEME:TARGET, e.g. openai:gpt-4o, "
            "openai+http://localhost:8000/v1:MODEL, hf:/path/to/model or baseline:random."
        )
    return scheme, target


def split_endpoint(uri: str) -> tuple[str, str]:
    """``(base_url, model)`` of an ``openai+http(s)://HOST[:PORT][/PATH]:MODEL`` URI.

    >>> split_endpoint("openai+http://[::1]:8000:llava:7b")
    ('http://[::1]:8000', 'llava:7b')
    """
    match = _ENDPOINT.match(uri)
    if match is None:
        raise InvalidInputError(
            f"Model {redact(uri)!r} does not name an endpoint and a model; write "
            "openai+http://HOST:PORT/PATH:MODEL, e.g. openai+http://localhost:8000/v1:Qwen/Qwen2.5-VL-7B-Instruct."
        )
    return check_base_url(match["url"], "in --model"), match["model"]


LOCAL_NETWORKS = tuple(
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
)
"""Private networks (RFC 1918, IPv6 unique local): with loopback and link-local, what counts as local.
Python's wider ``is_private`` also takes documentation and reserved ranges, which are not a local network."""


def is_local_address(text: str) -> bool:
    """True for a loopback, link-local or private (RFC 1918, IPv6 ULA) address; an IPv6 zone is ignored and
    an IPv4-mapped IPv6 address is judged by its IPv4 address.

    >>> [is_local_address(a) for a in ("127.0.0.1", "10.1.2.3", "::ffff:8.8.8.8", "203.0.113.7")]
    [True, True, False, False]
    """
    ip = ipaddress.ip_address(text.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_link_local or any(ip in net for net in LOCAL_NETWORKS if ip.version == net.version)


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


def is_local_endpoint(url: str) -> bool:
    """True when every address ``url``'s host resolves to is loopback, private or link-local.

    >>> is_local_endpoint("http://127.0.0.1:8000/v1"), is_local_endpoint("http://[::1]:8000/v1")
    (True, True)
    >>> is_local_endpoint("http://8.8.8.8/v1")
    False
    """
    host = urlsplit(url).hostname
    if not host:
        return False
    try:
        addresses = resolve(host)
    except OSError:
        return False  # an unresolvable host cannot be shown to be local
    return bool(addresses) and all(is_local_address(a) for a in addresses)
