"""Cyclic garbage collection paused around bulk work that builds many acyclic objects (timelines, windows,
candidates, items): each collection would rescan every object built so far, for nothing to free."""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Collection off inside the block, back on after it if it was on (reference counting still frees).

    >>> with paused_gc():
    ...     gc.isenabled()
    False
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
