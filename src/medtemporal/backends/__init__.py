"""Model backends, one interface, named by URI.

``load("openai:gpt-4o")``, ``load("openai+http://localhost:8000/v1:Qwen/Qwen2.5-VL-7B-Instruct")``,
``load("hf:/models/MedGemma-4b-it")``, ``load("vllm:/models/...")`` and
``load("baseline:random")`` all return a `Backend` whose ``generate`` takes a
`Request` and returns a `Response`. Each URI scheme is a factory registered
under kind ``backend``; third-party packages add schemes the same way.

>>> backend = load("baseline:constant-B")
>>> import asyncio
>>> asyncio.run(backend.generate(Request((), choices=("A", "B")))).text
'B'
"""

from __future__ import annotations

import inspect
from typing import Any

from medtemporal.backends import baselines, encoder, hf, openai_http, vllm
from medtemporal.backends.base import (
    Backend,
    GenerateConfig,
    ImagePart,
    Message,
    Request,
    RequestError,
    Response,
    RetryableError,
    TextPart,
)
from medtemporal.backends.uri import split_endpoint, split_scheme
from medtemporal.errors import InvalidInputError, MedTemporalError
from medtemporal.registry import lookup

RUN_OPTIONS = frozenset({"max_pixels", "api_key_env", "timeout_s", "images_needed"})
"""Options a run passes to every backend; a backend that has no use for one ignores it.
``images_needed`` is the most images one request of the run carries (engines that reserve
memory per image, such as vLLM, size themselves by it)."""


def preload(uri: str) -> None:
    """Start, in the background, what loading ``uri``'s backend will import (its registry entry's ``preload``, where
    it has one: the openai SDK for ``openai:`` URIs), so that a run loads its benchmark meanwhile; a bad URI is left
    for `load` to report."""
    try:
        hook = lookup("backend", split_scheme(uri)[0]).info.get("preload")
    except MedTemporalError:
        return
    if hook is not None:
        hook()


def load(uri: str, **options: Any) -> Backend:
    """The backend named by ``uri``, built with ``options`` (None values mean "default").

    Raises:
        UnknownNameError: the scheme is not registered (the message suggests close names).
        InvalidInputError: the URI is malformed or an option does not apply to this backend.
    """
    scheme, target = split_scheme(uri)
    factory = lookup("backend", scheme).obj
    accepted = {
        name for name, p in inspect.signature(factory).parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
    unknown = sorted(set(options) - accepted - RUN_OPTIONS)
    if unknown:
        raise InvalidInputError(
            f"Backend {scheme!r} has no option {', '.join(unknown)}; "
            f"its options are: {', '.join(sorted(accepted)) or 'none'}."
        )
    kwargs = {k: v for k, v in options.items() if k in accepted and v is not None}
    return factory(uri, target, **kwargs)


__all__ = [
    "Backend",
    "GenerateConfig",
    "ImagePart",
    "Message",
    "Request",
    "RequestError",
    "Response",
    "RetryableError",
    "TextPart",
    "baselines",
    "hf",
    "load",
    "openai_http",
    "preload",
    "split_endpoint",
    "split_scheme",
    "vllm",
]
