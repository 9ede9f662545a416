"""Modules imported on first attribute access (`importlib.util.LazyLoader`), for heavy libraries that
only some code paths use: a run registers every family, whose raw-data readers need pandas only to build."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """``name`` as a module that is executed the first time one of its attributes is read.

    >>> json = lazy_module("json")
    >>> json.dumps([1])
    '[1]'
    """
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
