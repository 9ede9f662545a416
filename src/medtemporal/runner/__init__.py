"""The runner: items × model × protocol → a run folder, resumable by construction.

>>> from medtemporal.runner import run                                  # doctest: +SKIP
>>> summary = run("benchmarks/mi-cxr", "baseline:random", "runs/r1")     # doctest: +SKIP
>>> print(summary)                                                      # doctest: +SKIP
runs/r1: 2000 answered, 0 already done, 0 failed, 0 pending of 2000 items in 3.1 s ...
"""

from medtemporal.runner._run import RunSummary, arun, check_run, run
from medtemporal.runner.options import RunOptions

__all__ = ["RunOptions", "RunSummary", "arun", "check_run", "run"]
