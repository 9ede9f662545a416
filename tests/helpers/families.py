"""One small phantom benchmark of every registered family, built through the CLI as a user would (seconds each).

The families are the registry's (`medtemporal.registry.discovered`), so a family is in every
cross-family test the moment it is registered. Each is built from its own demo section (`BenchmarkSpec.demo`: the phantoms and
build commands, at `PATIENTS` patients, the runs left out; then `PER_TASK` items of each task) under one root, so the CXR families share one
cohort as they do in ``medtemporal demo``. The session fixture `family_benches` does it once per session
(treat the folders as read-only). 3D-RAD volumes are prepared into a volume cache under the root
(``MEDTEMPORAL_VOLUME_CACHE`` is set for the session by the fixture).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import medtemporal.benchmarks  # noqa: F401  (registers the built-in families)
from medtemporal.benchmark import load, save
from medtemporal.cli import main
from medtemporal.contract import spec
from medtemporal.registry import discovered

FAMILIES = tuple(discovered("benchmark"))
"""Every family the registry finds (built-in and plugins, not the toy families tests register); one without a
demo section fails `build_family` instead of dropping out."""
SLOW_SCORING = ("longitudinal-rrg", "medical-diff-vqa")
"""Families whose scoring starts pycocoevalcap's Java tools (10–25 s a scored run on two cores)."""
PATIENTS = 12
"""Phantom patients per dataset: enough for every family's items, few enough to build all in seconds."""
PER_TASK = 12
"""Items kept of each task (`Benchmark.select`'s spread over subtypes): every kind of item, few enough that the
cross-family tests, which run and export every item, stay quick."""


def scored_families() -> list:
    """`FAMILIES` as parameters of a test that scores each family's run: the `SLOW_SCORING` ones in the slow
    suite (`make test-slow`), the others in every run."""
    return [pytest.param(f, marks=pytest.mark.slow) if f in SLOW_SCORING else f for f in FAMILIES]


def build_family(name: str, root: Path, patients: int = PATIENTS, seed: int = 0) -> Path:
    """The family's phantoms (unless ``root`` holds them already) and its build, by its demo's commands; returns
    the benchmark folder."""
    section = spec(name).demo(root, patients, seed)
    assert section is not None, f"{name} has no demo section: a family needs one to be tested with the others"
    for argv in section.commands():
        if argv[0] in ("phantoms", "build"):
            assert main(argv) == 0, (name, argv)
    build = next(argv for argv in section.steps if argv[0] == "build")
    path = Path(build[build.index("--out") + 1])
    bench = load(path)
    kept = bench.select(per_task=PER_TASK)
    if len(kept) < len(bench.items):
        save(path, kept, bench.manifest)
    return path


def build_families(root: Path, families: tuple[str, ...] = FAMILIES) -> dict[str, Path]:
    """Phantoms and one benchmark folder per family under ``root``; family name → benchmark folder."""
    return {family: build_family(family, root) for family in families}


_BUILT: dict[Path, dict[str, Path]] = {}
"""The session's builds by its base temporary folder: each module that imports `family_benches` gets a fixture of
its own from pytest, and every one of them returns this one build."""


@pytest.fixture(scope="session")
def family_benches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every family's phantom benchmark, built once per session (`_BUILT`)."""
    base = tmp_path_factory.getbasetemp()
    if base not in _BUILT:
        root = tmp_path_factory.mktemp("families")
        os.environ.setdefault("MEDTEMPORAL_VOLUME_CACHE", str(root / "volume-cache"))
        _BUILT[base] = build_families(root)
    return _BUILT[base]
