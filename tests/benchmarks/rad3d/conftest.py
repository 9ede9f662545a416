"""A small phantom CT-RATE root and its 3D-RAD build, written once per session (treat as read-only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.rad3d import SHAPE, build_args

from medtemporal.benchmark import save
from medtemporal.benchmarks.rad3d.command import build
from medtemporal.phantoms.ct_rate import write_ct_rate

@pytest.fixture(scope="session")
def ct_phantom(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ct-rate") / "root"
    write_ct_rate(root, patients=10, seed=3, shape=SHAPE)
    return root


@pytest.fixture(scope="session")
def truth(ct_phantom) -> dict[str, dict]:
    lines = (ct_phantom / "phantom_truth.jsonl").read_text().splitlines()
    return {r["VolumeName"]: r for r in map(json.loads, lines)}


@pytest.fixture(scope="session")
def rad3d_bench(ct_phantom, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "3d-rad"
    items, manifest = build(build_args(ct_phantom, out))
    save(out, items, manifest)
    return out
