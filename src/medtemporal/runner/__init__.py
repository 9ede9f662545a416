"""The runner: items × model × protocol → a run folder, resumable by construction.

>>> from medtemporal.runner import run                                  # doctest: +SKIP
>>> summary = run("benchmarks/mi-cxr", "baseline:random", "runs/r1")     # doctest: +SKIP
>>> print(summary)                                                      # doctest: +SKIP
runs/r1: 2000 answered, 0 already done, 0 failed, 0 pending of 2000 items in 3.1 s ...
"""

from medtemporal.runner._run import RunSummary, arun, run
from medtemporal.runner.cache import ResponseCache, default_cache_path, request_key
from medtemporal.runner.guard import check_data_use, guard_backend
from medtemporal.runner.retry import RetryPolicy

__all__ = [
    "ResponseCache",
    "RetryPolicy",
    "RunSummary",
    "arun",
    "check_data_use",
    "default_cache_path",
    "guard_backend",
    "request_key",
    "run",
]
