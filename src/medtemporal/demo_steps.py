"""The steps every family's section of ``medtemporal demo`` takes, with its folders named the same way.

A section writes phantoms under ``OUT/phantoms/<data>``, builds ``OUT/benchmarks/<family>``, runs into
``OUT/runs/<family>-<name>`` and reports into ``OUT/report/<family>``. A family's ``demo`` says only what is
its own: the phantom arguments, the build options and the runs.

>>> steps = DemoSteps(Path("demo-out"), "toy")
>>> steps.build("--questions", "q.jsonl", seed=0)
>>> steps.run("baseline:random").as_posix()
'demo-out/runs/toy-random'
>>> steps.steps[1]
['run', 'demo-out/benchmarks/toy', '--model', 'baseline:random', '--out', 'demo-out/runs/toy-random', '--no-progress']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from medtemporal.contract import DemoSection


@dataclass
class DemoSteps:
    """The commands of one family's demo section, collected in order."""

    out: Path
    benchmark: str
    steps: list[list[str]] = field(default_factory=list)
    runs: list[Path] = field(default_factory=list)

    @property
    def bench(self) -> Path:
        """The benchmark folder the section builds."""
        return self.out / "benchmarks" / self.benchmark

    def data(self, name: str) -> Path:
        """The phantom folder ``name`` (shared by the families built from one dataset)."""
        return self.out / "phantoms" / name

    def build(self, *options: str, seed: int) -> None:
        """``medtemporal build <family> OPTIONS --seed S --out BENCH --overwrite``."""
        self.steps.append(["build", self.benchmark, *options, "--seed", str(seed), "--out", str(self.bench),
                           "--overwrite"])

    def run(self, model: str, *options: str, name: str | None = None) -> Path:
        """``medtemporal run BENCH --model URI OPTIONS --out RUN --no-progress``, into ``runs/<family>-<name>``
        (``name`` defaults to the URI's part after its scheme: ``baseline:random`` → ``random``); returns RUN."""
        run = self.out / "runs" / f"{self.benchmark}-{name or model.split(':', 1)[1]}"
        self.steps.append(["run", str(self.bench), "--model", model, *options, "--out", str(run), "--no-progress"])
        self.runs.append(run)
        return run

    def then(self, *argv: str) -> None:
        """Any other command (e.g. ``score RUN --judge URI``)."""
        self.steps.append(list(argv))

    def section(self, title: str, phantoms: list[str], env: Mapping[str, str] | None = None) -> DemoSection:
        """The section: ``phantoms`` (the arguments of ``medtemporal phantoms``), the steps, and the report of
        every run into ``report/<family>``."""
        return DemoSection(title, phantoms, self.steps, self.runs, self.out / "report" / self.benchmark, env or {})


def cxr_phantoms(steps: DemoSteps, patients: int, seed: int) -> list[str]:
    """The CXR phantoms (MIMIC-CXR-JPG + MIMIC-Ext-CXR-QBA layout) the CXR families share: the arguments of
    ``medtemporal phantoms``."""
    return ["cxr", "--patients", str(patients), "--seed", str(seed), "--out", str(steps.data("cxr"))]


def cxr_build(steps: DemoSteps, *options: str, seed: int) -> None:
    """The build of the family from the shared CXR phantoms (``--mimic-cxr-jpg`` and ``--qba``)."""
    data = steps.data("cxr")
    steps.build("--mimic-cxr-jpg", str(data / "mimic-cxr-jpg"), "--qba", str(data / "mimic-ext-cxr-qba"), *options,
                seed=seed)
