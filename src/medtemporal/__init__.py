"""medtemporal: benchmarks of temporal medical reasoning for vision-language models.

Importing the package is cheap: the top-level names below are loaded on first use.

>>> import medtemporal as mt                                                   # doctest: +SKIP
>>> result = mt.evaluate("benchmarks/mi-cxr", "baseline:random", limit=50)     # doctest: +SKIP
>>> result.scores                                                              # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "evaluate": ("medtemporal.api", "evaluate"),
    "aevaluate": ("medtemporal.api", "aevaluate"),
    "EvalResult": ("medtemporal.api", "EvalResult"),
    "RunFailedError": ("medtemporal.errors", "RunFailedError"),
    "load_backend": ("medtemporal.backends", "load"),
    "load_benchmark": ("medtemporal.benchmark", "load"),
    "run": ("medtemporal.runner", "run"),
    "score_run": ("medtemporal.scoring", "score_run"),
}
"""Top-level name → (module, attribute), imported on first access."""

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'medtemporal' has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
