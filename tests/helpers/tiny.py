"""A tiny hand-made benchmark (three 5-visit items with small PNGs) for unit tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from medtemporal.benchmark import Manifest, save
from medtemporal.contract import BenchmarkSpec
from medtemporal.provenance import write_phantom_manifest
from medtemporal.registry import register
from medtemporal.schema import ImageRef, Item

TINY = register("benchmark", "tiny")(
    BenchmarkSpec(
        name="tiny",
        version="1",
        licence="synthetic",
        description="three hand-made five-visit items for tests",
        add_arguments=lambda parser: None,
        build=lambda args: ([], Manifest(benchmark="tiny", version="1", licence="synthetic")),
    )
)


def tiny_items(n: int = 3) -> list[Item]:
    """``n`` five-visit choice items over images ``img/<patient>_<visit>.png``."""
    items = []
    for k in range(n):
        images = [ImageRef(path=f"img/p{k}_{v}.png", visit=v, label=f"T{v}") for v in range(1, 6)]
        items.append(
            Item.create(
                benchmark="tiny",
                task="TEL",
                subtype="single_emergence",
                images=images,
                question=f"During which interval does finding {k} appear?",
                options={"A": "T1 → T2", "B": "T2 → T3", "C": "T3 → T4", "D": "T4 → T5", "E": "No appearance"},
                answer_type="choice",
                answer="ABCDE"[k % 5],
                meta={"patient_id": f"p{k // 2}"},
            )
        )
    return items


def make_tiny_benchmark(root: Path, n: int = 3, licence: str = "synthetic") -> Path:
    """Write images and a benchmark folder under ``root``; return the benchmark folder.

    Synthetic images get a phantom manifest (`medtemporal.provenance`), as a phantom generator writes.
    """
    rng = np.random.default_rng(0)
    items = tiny_items(n)
    for item in items:
        for ref in item.images:
            path = root / "data" / ref.path
            path.parent.mkdir(parents=True, exist_ok=True)
            Image.fromarray(rng.integers(0, 255, (16, 16), dtype=np.uint8)).save(path)
    if licence == "synthetic":  # made here, so a verifiable phantom: a run judges the images it sends
        write_phantom_manifest(root / "data", "tests.helpers.tiny")
    manifest = Manifest(benchmark="tiny", version="1", licence=licence, image_root=str(root / "data"))
    return save(root / "bench", items, manifest)
