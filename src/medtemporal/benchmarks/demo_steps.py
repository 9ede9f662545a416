"""Demo steps shared by families built from the same phantom dataset."""

from __future__ import annotations

from pathlib import Path


def cxr_demo_build(out: Path, benchmark: str, patients: int, seed: int) -> tuple[list[str], list[str], Path]:
    """The CXR phantoms (MIMIC-CXR-JPG + MIMIC-Ext-CXR-QBA layout, shared by the CXR families) and the build of
    ``benchmark`` from them: ``(phantoms arguments, build command, benchmark folder)``."""
    data, bench = out / "phantoms" / "cxr", out / "benchmarks" / benchmark
    phantoms = ["cxr", "--patients", str(patients), "--seed", str(seed), "--out", str(data)]
    build = ["build", benchmark, "--mimic-cxr-jpg", str(data / "mimic-cxr-jpg"), "--qba", str(data / "mimic-ext-cxr-qba"),
             "--seed", str(seed), "--out", str(bench), "--overwrite"]
    return phantoms, build, bench
