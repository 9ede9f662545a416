"""The model registry: ``--model NAME`` → a model URI, its load options and generation settings.

A registered name (``medtemporal models`` lists them) resolves through its `ModelEntry` before the backend
loads; ``NAME@BACKEND`` picks how it runs (``hf``, ``vllm``, ``server`` for an OpenAI-compatible server at
``http://localhost:8000/v1``, or the server's own base URL); a URI (``hf:/path``, ``openai:gpt-4o`` ...)
is used as it is, as before. The run records the entry's name in its config (``model_entry``).

>>> r = resolve("lingshu-7b@http://gpu-box:8000/v1")
>>> r.uri, r.entry.size
('openai+http://gpu-box:8000/v1:lingshu-medical-mllm/Lingshu-7B', '7B')
>>> resolve("hf:/models/mine").entry is None
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from medtemporal import registry
from medtemporal.errors import InvalidInputError, UnknownNameError
from medtemporal.models.entry import ANSWER_FORMATS, BACKENDS, ModelEntry

__all__ = ["ANSWER_FORMATS", "BACKENDS", "ModelEntry", "Resolved", "entries", "is_name", "lookup", "resolve"]


@dataclass(frozen=True)
class Resolved:
    """What ``--model`` names: the URI to load, the entry's options for that backend, and the entry (None for
    a URI or path the user wrote)."""

    uri: str
    options: Mapping[str, Any] = field(default_factory=dict)
    entry: ModelEntry | None = None


def lookup(name: str) -> ModelEntry:
    """The registered model ``name``; `UnknownNameError` with close names otherwise."""
    return registry.lookup("model", name).obj


def entries() -> list[ModelEntry]:
    """Every registered model, sorted by name."""
    return [e.obj for e in registry.entries("model")]


def is_name(model: str) -> bool:
    """Whether ``model`` is written as a registry name (``NAME`` or ``NAME@WHERE``), not a URI or path."""
    name = model.partition("@")[0]
    return bool(name) and ":" not in name and "/" not in name and "\\" not in name and not name.startswith(("~", "."))


def resolve(model: str) -> Resolved:
    """What ``model`` names (see the module doc); a URI or path is returned as it is, with no entry.

    Raises:
        UnknownNameError: a name that is not registered (the message lists close names).
        InvalidInputError: ``NAME@WHERE`` with a backend the entry cannot run through.
    """
    if not is_name(model):
        return Resolved(model)
    name, _, where = model.partition("@")
    try:
        entry = lookup(name)
    except UnknownNameError as exc:
        raise UnknownNameError(f"{str(exc).rstrip('.')}; or pass a model URI such as hf:/path/to/model or "
                               "openai+http://localhost:8000/v1:MODEL (`medtemporal models` lists the names).") from None
    if entry.unsupported:
        raise InvalidInputError(f"{entry.name} cannot run in medtemporal yet: {entry.unsupported}.")
    backend, endpoint = (where or None), None
    if backend is not None and "://" in backend:
        backend, endpoint = "server", where
    if backend is not None and backend not in entry.backends():
        raise InvalidInputError(f"{entry.name} runs through {', '.join(entry.backends())}, not {backend!r}; write "
                                f"{entry.name}@{entry.backends()[0]} (or {entry.name} alone).")
    return Resolved(entry.uri(backend, endpoint), entry.options(backend), entry)
