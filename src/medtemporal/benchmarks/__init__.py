"""Benchmark families: one package per paper, each registering a `BenchmarkSpec`.

Importing this package registers the built-in families. A family's package
holds every rule of its paper (construction, released file formats and
extraction rules, paper-layout tables, its demo section); core packages never
import from here. A family's model calls go through `medtemporal.backends.session`. See
``docs/adding-a-benchmark.md`` for the checklist a new family follows.
"""

from medtemporal.benchmarks import eltlm, mi_cxr, rad3d, skillqa, temmed
from medtemporal.benchmarks import mmxu  # noqa: F401

__all__ = ["eltlm", "mi_cxr", "rad3d", "skillqa", "temmed"]
from medtemporal.benchmarks import ms_cxr_t  # noqa: E402,F401  (registers MS-CXR-T)
from medtemporal.benchmarks import medical_diff_vqa  # noqa: E402,F401  (registers Medical-Diff-VQA)
