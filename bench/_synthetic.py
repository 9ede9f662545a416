"""A synthetic benchmark for the runner benches: MI-CXR-shaped five-visit windows over small PNGs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from medtemporal.benchmark import Manifest, save
from medtemporal.contract import BenchmarkSpec
from medtemporal.registry import register
from medtemporal.schema import ImageRef, Item

NAME = "bench-synthetic"
OPTIONS = {"A": "T1 → T2", "B": "T2 → T3", "C": "T3 → T4", "D": "T4 → T5", "E": "No change"}

register("benchmark", NAME)(
    BenchmarkSpec(
        name=NAME,
        version="1",
        licence="synthetic",
        description="synthetic five-visit windows for the runner benches",
        add_arguments=lambda parser: None,
        build=lambda args: ([], Manifest(benchmark=NAME, version="1", licence="synthetic")),
    )
)


def make_benchmark(root: Path, n_items: int, images: bool = True, windows_per_patient: int = 5) -> Path:
    """``n_items`` choice items: each patient has ``windows_per_patient + 4`` visits and slides a 5-visit window."""
    rng = np.random.default_rng(0)
    items = []
    patient = 0
    while len(items) < n_items:
        visits = [f"img/p{patient}/v{v}.png" for v in range(windows_per_patient + 4)]
        if images:
            for path in visits:
                (root / "data" / path).parent.mkdir(parents=True, exist_ok=True)
                Image.fromarray(rng.integers(0, 255, (32, 32), dtype=np.uint8)).save(root / "data" / path)
        for start in range(windows_per_patient):
            if len(items) == n_items:
                break
            refs = [ImageRef(path=visits[start + t], visit=t + 1, label=f"T{t + 1}") for t in range(5)]
            items.append(
                Item.create(
                    benchmark=NAME,
                    task="TEL",
                    subtype="single_emergence",
                    images=refs if images else [],
                    question=f"Patient {patient}, window {start}: when does the effusion first appear?",
                    options=OPTIONS,
                    answer_type="choice",
                    answer="ABCDE"[(patient + start) % 5],
                    meta={"patient_id": f"p{patient}"},
                )
            )
        patient += 1
    manifest = Manifest(benchmark=NAME, version="1", licence="synthetic", image_root=str(root / "data"))
    return save(root / "bench", items, manifest)
