"""Benchmark builders: one module per family, each registering a `BenchmarkSpec`.

Importing this package registers the built-in benchmarks (``mi-cxr``, ``temmed``).
"""

from medtemporal.builders import mi_cxr, temmed

__all__ = ["mi_cxr", "temmed"]
