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
are bracketed (``http://[::1]:8000/v1``).

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
        (?P<host>\[[0-9A-Fa-f:.]+\]|[^/:\[\]@\s]+)
        (?::(?P<port>\d+)(?=[/:]|$)|(?!:\d))
        (?P<path>/[^:\s]*)?)
        :(?P<model>\S.*)$""",
    re.VERBOSE,
)


def split_scheme(uri: str) -> tuple[str, str]:
    """``(scheme, target)`` of ``uri``, split at the first ``:``.

    >>> split_scheme("hf:/models/MedGemma-4b-it")
    ('hf', '/models/MedGemma-4b-it')
    """
    scheme, sep, target = uri.partition(":")
    if not sep or not scheme or not target:
        raise InvalidInputError(
            f"Model {uri!r} is not a model URI; write SCHEME:TARGET, e.g. openai:gpt-4o, "
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
            f"Model {uri!r} does not name an endpoint and a model; write "
            "openai+http://HOST:PORT/PATH:MODEL, e.g. openai+http://localhost:8000/v1:Qwen/Qwen2.5-VL-7B-Instruct."
        )
    return match["url"], match["model"]


def _is_local_ip(text: str) -> bool:
    ip = ipaddress.ip_address(text.split("%", 1)[0])
    return ip.is_loopback or ip.is_private or ip.is_link_local


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
        return _is_local_ip(host)
    except ValueError:
        pass
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        infos = socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return False  # an unresolvable host cannot be shown to be local
    return bool(infos) and all(_is_local_ip(str(info[4][0])) for info in infos)
