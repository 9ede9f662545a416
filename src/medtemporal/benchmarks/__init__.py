"""Benchmark families: one package per paper, each registering a `BenchmarkSpec`.

Importing this package declares the built-in families, one line each (`medtemporal.registry.declare`): a
family's package is imported on its name's first lookup, so a run imports its own family only. A family's
package holds every rule of its paper (construction, released file formats and extraction rules, prompts,
metrics, paper-layout tables, its phantom release file and demo section); core packages never import from
here. A family's model calls go through `medtemporal.backends.session`. See ``docs/adding-a-benchmark.md``
for the checklist a new family follows.
"""

from medtemporal.registry import declare

FAMILIES = {
    # the five papers of the seeds
    "mi-cxr": "medtemporal.benchmarks.mi_cxr",
    "temmed": "medtemporal.benchmarks.temmed",
    "skillqa": "medtemporal.benchmarks.skillqa",
    "eltlm": "medtemporal.benchmarks.eltlm",
    "3d-rad": "medtemporal.benchmarks.rad3d",
    "mmxu": "medtemporal.benchmarks.mmxu",  # MMXU (ACL 2025 Findings)
    "ms-cxr-t": "medtemporal.benchmarks.ms_cxr_t",  # MS-CXR-T (BioViL-T, CVPR 2023)
    "medical-diff-vqa": "medtemporal.benchmarks.medical_diff_vqa",  # Medical-Diff-VQA (KDD 2023)
    "longitudinal-rrg": "medtemporal.benchmarks.longitudinal_rrg",  # report generation with the prior study
}
"""Family name → the package whose import registers it."""

for _name, _module in FAMILIES.items():
    declare("benchmark", _name, _module)
