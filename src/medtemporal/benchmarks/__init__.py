"""Benchmark families: one package per paper, each registering a `BenchmarkSpec`.

Importing this package registers the built-in families, one line each. A family's package holds every
rule of its paper (construction, released file formats and extraction rules, prompts, metrics,
paper-layout tables, its phantom release file and demo section); core packages never import from here.
A family's model calls go through `medtemporal.backends.session`. See ``docs/adding-a-benchmark.md``
for the checklist a new family follows.
"""

from medtemporal.benchmarks import eltlm, mi_cxr, rad3d, skillqa, temmed  # the five papers of seeds/
from medtemporal.benchmarks import mmxu  # MMXU (ACL 2025 Findings)
from medtemporal.benchmarks import ms_cxr_t  # MS-CXR-T (BioViL-T, CVPR 2023)
from medtemporal.benchmarks import medical_diff_vqa  # Medical-Diff-VQA (KDD 2023)
from medtemporal.benchmarks import longitudinal_rrg  # longitudinal report generation on MIMIC-CXR (ours)

__all__ = ["eltlm", "longitudinal_rrg", "medical_diff_vqa", "mi_cxr", "mmxu", "ms_cxr_t", "rad3d", "skillqa", "temmed"]
