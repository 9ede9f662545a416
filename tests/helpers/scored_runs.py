"""Constructed benchmarks and run folders (no images, no model) for scoring and report tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from medtemporal.benchmark import Manifest, save
from medtemporal.contract import BenchmarkSpec, ScoreGroups
from medtemporal.registry import register
from medtemporal.schema import ImageRef, Item, Prediction, write_jsonl
from medtemporal.scoring import extract

NAME = "scoring-test"
SUBTYPES = {
    "TEL": ("single_emergence", "single_resolution", "multiple_emergence_1"),
    "ICR": ("icr_multi_abn",),
    "GTS": ("single_entity_interval_summary", "multi_entity_interval_summary"),
}
OPTIONS = {"A": "T1 → T2", "B": "T2 → T3", "C": "T3 → T4", "D": "T4 → T5", "E": "No change"}

SPEC = register("benchmark", NAME)(
    BenchmarkSpec(
        name=NAME,
        version="1",
        licence="synthetic",
        description="constructed five-option items over TEL/ICR/GTS for scoring tests",
        add_arguments=lambda parser: None,
        build=lambda args: ([], Manifest(benchmark=NAME, version="1", licence="synthetic")),
        groups=ScoreGroups(subtypes={
            "TEL": {"Single (E/R)": ("single_emergence", "single_resolution"),
                    "Multiple (E/R)": ("multiple_emergence_1",)},
            "ICR": {"ICR": ("icr_multi_abn",)},
            "GTS": {"Single Abnormality": ("single_entity_interval_summary",),
                    "Multi Abnormality": ("multi_entity_interval_summary",)},
        }),
    )
)


def make_items(patients: int = 12, per_patient: int = 3, seed: int = 0) -> list[Item]:
    """Items cycling through every subtype; ``per_patient`` consecutive items share a patient."""
    rng = np.random.default_rng(seed)
    pairs = [(task, s) for task, subs in SUBTYPES.items() for s in subs]
    items = []
    for k in range(patients * per_patient):
        task, subtype = pairs[k % len(pairs)]
        items.append(Item.create(
            benchmark=NAME, task=task, subtype=subtype,
            images=[ImageRef(path=f"p{k}/t{v}.png", visit=v, label=f"T{v}") for v in range(1, 6)],
            question=f"Question {k}?", options=OPTIONS, answer_type="choice",
            answer="ABCDE"[int(rng.integers(5))], meta={"patient_id": f"p{k // per_patient}"},
        ))
    return items


def wrong_letter(item: Item) -> str:
    """An option letter that is not the answer."""
    return next(letter for letter in item.options if letter != item.answer)


def prediction(item: Item, raw: str | None, *, extraction: str | None = "current", answer: str | None = None,
               error: str | None = None, model: str = "baseline:test") -> Prediction:
    """A prediction line; by default its answer is extracted with the current rule, as the runner does."""
    if extraction == "current":
        found = extract(item, raw)
        answer, extraction = found.answer, found.rule
    return Prediction(item_id=item.id, model=model, protocol="direct", request_hash="h" + item.id,
                      raw_output=raw, answer=answer, extraction=extraction, error=error)


def write_run(root: Path, items: Sequence[Item], predictions: Iterable[Prediction], *, name: str = "run",
              model: str = "baseline:test", bench: Path | None = None) -> Path:
    """A run folder: benchmark (saved once under ``root/bench``), config.json and predictions.jsonl."""
    bench = bench or root / "bench"
    if not (bench / "items.jsonl").is_file():
        save(bench, list(items), Manifest(benchmark=NAME, version="1", licence="synthetic"))
    run = root / name
    run.mkdir(parents=True, exist_ok=True)
    config = {"benchmark": {"path": str(bench), "name": NAME}, "model": {"uri": model}, "protocol": "direct"}
    (run / "config.json").write_text(json.dumps(config))
    write_jsonl(run / "predictions.jsonl", list(predictions))
    return run
