"""Bounds of numeric options, checked before anything is allocated or started: one sentence naming the option,
the value and the range, instead of a traceback from numpy or a command that never ends.

>>> check_seed(7)
>>> check_seed(-1)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
medtemporal.errors.InvalidInputError: --seed must be a whole number from 0 to 4294967295, not -1.
>>> human_bytes(3.55 * 2**50)
'3.55 PiB'
"""

from __future__ import annotations

import os

from medtemporal.errors import InvalidInputError

SEED_MAX = 2**32 - 1
"""The largest seed every random generator medtemporal uses accepts (numpy's legacy ones take 32 bits)."""
PATIENTS_MAX = 1_000_000
"""Most phantom patients or instances: fifteen times MIMIC-CXR's 65,379 patients."""
IMAGE_MAX = 4096
"""Widest phantom image in pixels (MIMIC-CXR-JPG's are about 3,000)."""
REPEATS_MAX = 1000
"""Most answers per item (the papers ask at most 10; every (item, repeat) is a task held in memory)."""
CONCURRENCY_MAX = 1024
"""Most requests in flight to one model: each holds a connection (a file descriptor; many systems allow a process
1,024) and its encoded images; servers such as vLLM batch a few hundred at most."""
RESAMPLES_MAX = 100_000
"""Most bootstrap resamples: fifty times the default; interval ends move by less than 0.1 point beyond it, and each
group's replicates are held in memory."""


def check_range(value: int | float | None, flag: str, low: int | float, high: int | float | None = None,
                *, whole: bool = True) -> None:
    """Refuse ``value`` (None passes) outside ``[low, high]``, or not a whole number when ``whole``."""
    if value is None:
        return
    is_whole = isinstance(value, int) and not isinstance(value, bool)
    if (whole and not is_whole) or not (value >= low and (high is None or value <= high)):
        kind = "a whole number" if whole else "a number"
        span = f"from {low} to {high}" if high is not None else f"of {low} or more"
        raise InvalidInputError(f"{flag} must be {kind} {span}, not {value}.")


def check_seed(seed: int | None, flag: str = "--seed") -> None:
    """Refuse a seed no generator takes (negative, or above `SEED_MAX`)."""
    check_range(seed, flag, 0, SEED_MAX)


def available_memory() -> int:
    """Bytes of memory available to a new allocation: ``MemAvailable`` of ``/proc/meminfo``, else the physical
    memory."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return 2**63


def check_memory(nbytes: float, what: str, fix: str) -> None:
    """Refuse work that needs more than the memory available, before it allocates any.

    Args:
        nbytes: what the work needs at once.
        what: the subject of the sentence ("--shape 5000,5000,2000").
        fix: how to need less ("pass a smaller --shape").
    """
    free = available_memory()
    if nbytes > free:
        raise InvalidInputError(f"{what} needs {human_bytes(nbytes)} of memory at once, more than the "
                                f"{human_bytes(free)} available here; {fix}.")


def human_bytes(n: float) -> str:
    """``n`` bytes with a binary unit (``186 GiB``, ``3.55 PiB``)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} PiB"
