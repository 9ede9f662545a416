"""One registry for every plugin kind, filled by decorators.

Kinds are ``benchmark`` (builders), ``backend`` (model URI schemes),
``protocol``, ``metric``, ``extractor`` (answer-extraction rules), ``phantom``
(``medtemporal phantoms KIND``: a synthetic dataset or release file, `medtemporal.phantoms.kinds.PhantomKind`)
and ``model`` (``--model NAME``: a `medtemporal.models.ModelEntry`).
Third-party packages add entries through the ``medtemporal`` entry-point group
(``pkg.module:attr`` values are imported on first lookup), so a new benchmark
needs no change here. A built-in family is `declare`d by name and module and
imported on its name's first lookup, so a run imports its own family only; a
name not found otherwise imports every family and plugin before it is refused.

>>> @register("metric", "demo_accuracy", higher_is_better=True)
... def demo(preds, refs): ...
>>> lookup("metric", "demo_accuracy").info["higher_is_better"]
True
"""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, TypeVar

from medtemporal.errors import UnknownNameError

Kind = Literal["benchmark", "backend", "protocol", "metric", "extractor", "phantom", "model"]
KINDS: tuple[Kind, ...] = ("benchmark", "backend", "protocol", "metric", "extractor", "phantom", "model")

# Modules whose import fills the registry with the built-in entries (``medtemporal.benchmarks`` declares the
# families, whose packages are imported on demand).
_BUILTIN_MODULES = (
    "medtemporal.benchmarks",
    "medtemporal.backends",
    "medtemporal.protocols",
    "medtemporal.scoring",
    "medtemporal.phantoms.kinds",
    "medtemporal.models.catalog",
)

T = TypeVar("T")


@dataclass(frozen=True)
class Entry:
    """A registered object with its kind, name and declared metadata."""

    kind: Kind
    name: str
    obj: Any
    info: dict[str, Any] = field(default_factory=dict)


_ENTRIES: dict[Kind, dict[str, Entry]] = {k: {} for k in KINDS}
_DECLARED: dict[tuple[Kind, str], str] = {}
_FAILED_PLUGINS: dict[str, str] = {}
_PLUGINS: set[tuple[Kind, str]] = set()
_ORIGIN: dict[tuple[Kind, str], str] = {}
"""(kind, name) → the module that called `register`."""
_loading_plugins = False
_loaded = False
_loaded_all = False


def _same_definition(a: object, b: object) -> bool:
    """Whether ``a`` and ``b`` are one definition made twice: its module executed again (``importlib.reload``, or
    pytest's doctest collection importing a module its package had imported)."""
    key = ("__module__", "__qualname__")
    return all(getattr(a, k, None) is not None and getattr(a, k, None) == getattr(b, k, None) for k in key)


def register(kind: Kind, name: str, **info: Any) -> Callable[[T], T]:
    """Decorator that registers ``obj`` under ``kind``/``name`` with metadata ``info``."""
    if kind not in KINDS:
        raise ValueError(f"Unknown registry kind {kind!r}; use one of {', '.join(KINDS)}.")
    caller = str(sys._getframe(1).f_globals.get("__name__", ""))

    def add(obj: T) -> T:
        existing = _ENTRIES[kind].get(name)
        if existing is not None and existing.obj is not obj and not _same_definition(existing.obj, obj):
            raise ValueError(f"A {kind} named {name!r} is already registered.")
        _ENTRIES[kind][name] = Entry(kind, name, obj, dict(info))
        _ORIGIN[(kind, name)] = caller
        if _loading_plugins:
            _PLUGINS.add((kind, name))
        return obj

    return add


def declare(kind: Kind, name: str, module: str) -> None:
    """Say that importing ``module`` registers ``kind``/``name``; it is imported on that name's first lookup."""
    _DECLARED[(kind, name)] = module


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)


def _load_all() -> None:
    """Import every declared module and every ``medtemporal`` entry point, once."""
    global _loaded_all, _loading_plugins
    _load()
    if _loaded_all:
        return
    _loaded_all = True
    for module in dict.fromkeys(_DECLARED.values()):
        importlib.import_module(module)
    from importlib.metadata import entry_points

    _loading_plugins = True
    try:
        for ep in entry_points(group="medtemporal"):
            try:
                ep.load()
            except Exception as exc:  # surfaced by `medtemporal list` and on lookup
                _FAILED_PLUGINS[ep.name] = f"{type(exc).__name__}: {exc}"
    finally:
        _loading_plugins = False


def lookup(kind: Kind, name: str) -> Entry:
    """Return the entry ``kind``/``name`` or raise `UnknownNameError` with suggestions."""
    _load()
    if name not in _ENTRIES[kind] and (kind, name) in _DECLARED:
        importlib.import_module(_DECLARED[kind, name])
    if name not in _ENTRIES[kind]:
        _load_all()
    try:
        return _ENTRIES[kind][name]
    except KeyError:
        pass
    if name in _FAILED_PLUGINS:
        raise UnknownNameError(f"The {kind} plugin {name!r} failed to load: {_FAILED_PLUGINS[name]}.")
    names = sorted(_ENTRIES[kind])
    close = difflib.get_close_matches(name, names, n=3)
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    raise UnknownNameError(f"Unknown {kind} {name!r}.{hint} Available: {', '.join(names) or 'none'}.")


def names(kind: Kind) -> list[str]:
    """Sorted names registered under ``kind``."""
    _load_all()
    return sorted(_ENTRIES[kind])


def entries(kind: Kind) -> list[Entry]:
    """Entries registered under ``kind``, sorted by name."""
    _load_all()
    return [_ENTRIES[kind][n] for n in sorted(_ENTRIES[kind])]


def registered(kind: Kind) -> list[Entry]:
    """Entries registered under ``kind`` so far, sorted by name; imports no declared module and no plugin."""
    _load()
    return [_ENTRIES[kind][n] for n in sorted(_ENTRIES[kind])]


def declared(kind: Kind) -> dict[str, str]:
    """Name → module of each entry of ``kind`` declared but not registered yet (its module not imported)."""
    _load()
    return {name: module for (k, name), module in _DECLARED.items() if k == kind and name not in _ENTRIES[kind]}


def failed_plugins() -> dict[str, str]:
    """Entry points that failed to load, with the reason."""
    _load_all()
    return dict(_FAILED_PLUGINS)


def discovered(kind: Kind) -> list[str]:
    """Sorted names of ``kind`` the registry finds by itself: the built-in entries it declares and those of
    ``medtemporal`` entry points, not objects registered by a caller at run time (e.g. a test's toy family)."""
    _load_all()
    return sorted(n for n in _ENTRIES[kind] if (kind, n) in _DECLARED or (kind, n) in _PLUGINS)


@contextmanager
def isolated() -> Iterator[None]:
    """Entries a caller registers inside the block (a test's toy family, a scripted backend) are gone after it;
    entries medtemporal's own modules and plugins register meanwhile (imported on first use) stay, as their
    modules will not run again. The test suite wraps every test in it (``tests/conftest.py``).
    """
    before = {kind: set(found) for kind, found in _ENTRIES.items()}
    try:
        yield
    finally:
        for kind, found in _ENTRIES.items():
            for name in set(found) - before[kind]:
                if not (_ORIGIN.get((kind, name), "").startswith("medtemporal.") or (kind, name) in _PLUGINS
                        or (kind, name) in _DECLARED):
                    del found[name]
