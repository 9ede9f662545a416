"""The cyclic garbage collector around bulk work.

`paused_gc` turns collection off around work that builds many acyclic objects (timelines, windows, candidates,
items): each collection would rescan every object built so far, for nothing to free.

A command-line process goes further (`own_process`): what its start-up builds (modules, the benchmark's items,
the model client) lives until the process ends, so collection is off while it is built (`start_up`) and it is
then frozen out of the collector (`started`: `gc.freeze`), instead of being walked by every later collection and
by the interpreter's last one. Elsewhere (a notebook, a test calling the command line in-process, a command
the demo runs) these two calls change nothing: freezing would keep a caller's own cyclic garbage forever.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator

_owned = False
"""True in the ``medtemporal`` command line's own process."""
_paused = False
"""True while `start_up` keeps collection off."""


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


def own_process() -> None:
    """Say that this process ends when its command does (the command line's entry point calls it)."""
    global _owned
    _owned = True


@contextlib.contextmanager
def not_owned() -> Iterator[None]:
    """A command run inside another (the demo's steps, a test): its start-up is not the process's, so nothing is
    frozen inside the block (the earlier commands' cyclic garbage would be kept forever)."""
    global _owned
    owned, _owned = _owned, False
    try:
        yield
    finally:
        _owned = owned


def start_up() -> None:
    """Long-lived objects are about to be built: in a process the command line owns, collection goes off until
    `started` (about 20% of the CPU a run spends before its first request)."""
    global _paused
    if _owned and not _paused and gc.isenabled():
        gc.disable()
        _paused = True


def started() -> None:
    """The start-up is over: what it built is frozen out of the collector and collection resumes (nothing
    happens unless `start_up` turned it off)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
