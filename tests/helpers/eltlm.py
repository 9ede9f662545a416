"""Small open-answer (ELTLM-like) benchmarks and runs for judge and report tests: no images, seconds to make."""

from __future__ import annotations

from pathlib import Path

from medtemporal.benchmark import Manifest, save
from medtemporal.benchmarks.eltlm.release import BENCHMARK, subtype_of
from medtemporal.runner import run
from medtemporal.schema import Item

ANSWER = "No significant interval change."
FINDINGS = ("pleural effusion", "pneumothorax", "cardiomegaly", "consolidation", "atelectasis", "pulmonary edema")


def make_open_benchmark(root: Path, n: int = 12, patients: int = 4) -> Path:
    """``n`` open items (half perception, half reasoning; lengths 2-5) of ``patients`` patients, no images;
    every third item (from the second) is one whose date and file orders differ."""
    items = []
    for i in range(n):
        finding = FINDINGS[i % len(FINDINGS)]
        reference = ANSWER if i % 3 == 0 else f"New {finding} on exam {2 + i % 4}; otherwise no change (case {i})."
        items.append(Item.create(
            benchmark=BENCHMARK, task="perception" if i % 2 == 0 else "reasoning", subtype=subtype_of(2 + i % 4),
            images=[], question=f"Question {i}: how did the {finding} change across the examinations?",
            answer_type="open", answer=reference, reference=reference,
            meta={"patient_id": f"p1000000{i % patients}", "date_order_differs": i % 3 == 1},
        ))
    manifest = Manifest(benchmark=BENCHMARK, version="test", licence="synthetic", config={"order": "date"})
    return save(root / "bench", items, manifest)


def make_open_run(bench: Path, out: Path, protocol: str = "direct", answer: str = ANSWER) -> Path:
    """A finished, unscored run of a constant answer on ``bench``."""
    run(bench, f"baseline:constant-{answer}", out, protocol=protocol, progress=False, score=False, no_cache=True)
    return out


def make_open_benchmark_on_phantom(root: Path, n: int = 4) -> tuple[Path, Path]:
    """``n`` open items (a family with a judge rubric) whose images are a verified phantom (`make_tiny_benchmark`'s);
    the benchmark folder and the phantom's image root."""
    from helpers.tiny import make_tiny_benchmark

    from medtemporal.schema import ImageRef

    make_tiny_benchmark(root / "tiny", n=n)
    data = root / "tiny" / "data"
    items = [Item.create(benchmark=BENCHMARK, task="perception", subtype=subtype_of(2),
                         images=[ImageRef(path=f"img/p{k}_{v}.png", visit=v, label=f"T{v}") for v in (1, 2)],
                         question=f"Question {k}: how did the effusion change?", answer_type="open", answer=ANSWER,
                         reference=ANSWER, meta={"patient_id": f"p{k // 2}"}) for k in range(n)]
    manifest = Manifest(benchmark=BENCHMARK, version="test", licence="synthetic", image_root=str(data))
    return save(root / "bench", items, manifest), data
