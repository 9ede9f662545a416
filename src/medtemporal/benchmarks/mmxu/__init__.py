"""MMXU (the ``mmxu`` benchmark): how a region changed between a patient's prior and current chest X-ray.

Paper: Mu et al., "MMXU: A Multi-Modal and Multi-X-ray Understanding Dataset for Disease Progression"
(ACL 2025 Findings); release ``LinjieMu/MMXU`` at 4b77721 (FACTS §5.3). 3,000 four-option questions over
MIMIC-CXR-JPG pairs, ``content_type`` no change / worsen / improved, 1,000 each; accuracy overall and
per content type. Where each rule lives:

* `release` — the released ``MMXU-test.jsonl``: read into items (prior image, then current, captioned),
  written back byte for byte (``medtemporal export --format mmxu``).
* `command` — ``medtemporal build mmxu --official FILE``: images under ``--mimic-cxr-jpg``, licence, the
  audit with readers fitted across content types and each item's held-out pick by its best blind reader.
* `metrics` — ours, beside the paper's accuracy: ``mmxu_blind_hard_accuracy`` and ``mmxu_blind_adjusted``.
* `phantom` and `wording` — ``medtemporal phantoms mmxu --cxr DIR``: a release file over a phantom cohort,
  exact truth, options that give nothing away without the images.
* `report` — accuracy by content type beside the blind reader, ours, the audit, the headline figure.
* ``prompts/`` — ``mmxu_direct``, ours (none is released).

Answers are extracted by the shared strict ``letter`` rule (``letter@3``: "A or B" and an echoed option list
are invalid); generation at temperature 0 (ours: the paper's settings were not found).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from medtemporal.benchmarks.mmxu.published import NONE, TABLES
from medtemporal.family import (
    AuditRules, Benchmark, BenchmarkSpec, DemoSection, DemoSteps, Published, RunDefaults, cxr_phantoms, holds_phantoms, register,
)
from medtemporal.benchmarks.mmxu.glossary import GLOSSARY
from medtemporal.benchmarks.mmxu import metrics, phantom  # noqa: F401  (register the metrics and the phantom kind)
from medtemporal.benchmarks.mmxu.command import AUDIT_FIT, VERSION, add_arguments, build
from medtemporal.benchmarks.mmxu.phantom import RELEASE_FILE
from medtemporal.benchmarks.mmxu.release import BENCHMARK, write_release

METRICS = ("accuracy", "mmxu_blind_hard_accuracy", "mmxu_blind_adjusted")
DEMO_MODELS = ("baseline:random", "baseline:oracle")
DEMO_QUESTIONS = 240


def export_release(bench: Benchmark, out: Path) -> int:
    """Write ``bench`` in the released ``MMXU-test.jsonl`` layout; return the number of lines."""
    return write_release(bench.items, out)


@dataclass(frozen=True)
class _Demo(DemoSection):
    """The MMXU section: its phantoms are a release file over the CXR cohort the other CXR families share, so
    the cohort comes first; each is written only when its folder does not hold it yet."""

    cohort: tuple[str, ...] = ()
    """Arguments of ``medtemporal phantoms`` for the CXR cohort, ending in ``--out DIR``."""

    def commands(self) -> list[list[str]]:
        made = holds_phantoms(self.cohort[-1])
        return [*([] if made else [["phantoms", *self.cohort]]), *super().commands()]


def demo(out: Path, patients: int, seed: int) -> DemoSection:
    """CXR phantoms, an MMXU release over them, its build (with the audit), two baselines, report."""
    steps = DemoSteps(out, BENCHMARK)
    cohort, release = cxr_phantoms(steps, patients, seed), steps.data(BENCHMARK)
    cxr = steps.data("cxr")
    phantoms = [BENCHMARK, "--cxr", str(cxr), "--seed", str(seed), "--questions", str(DEMO_QUESTIONS),
                "--out", str(release)]
    steps.build("--official", str(release / RELEASE_FILE), "--mimic-cxr-jpg", str(cxr / "mimic-cxr-jpg"), seed=seed)
    for model in DEMO_MODELS:
        steps.run(model)
    section = steps.section("MMXU", phantoms)
    return _Demo(section.title, section.phantoms, section.steps, section.runs, section.report_dir,
                 cohort=tuple(cohort))


SPEC = register("benchmark", BENCHMARK)(BenchmarkSpec(
    glossary=GLOSSARY,
    name=BENCHMARK,
    version=VERSION,
    licence="credentialed",
    description="MMXU: a region's change between a prior and a current MIMIC-CXR image; four-option questions",
    add_arguments=add_arguments,
    build=build,
    prompts={"*": "mmxu_direct"},
    extractors={"*": "letter"},
    metrics={"*": METRICS},
    report="medtemporal.benchmarks.mmxu.report:write_mmxu_report",
    demo=demo,
    # the build audits itself, across content types, and keeps each item's blind pick (`command`)
    audit=AuditRules(at_build=False, fit=AUDIT_FIT),
    defaults=RunDefaults(generation={"temperature": 0.0, "max_tokens": None}),  # ours: the paper's settings were not found (FACTS §5.3)
    published=Published(tables=TABLES, none=NONE, exports={"mmxu": export_release}),
))
