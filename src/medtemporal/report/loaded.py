"""The runs of one report, each read once through the run folder's owner (`medtemporal.runs.RunFolder`).

`load_runs` reads every run's ``scores.json`` (it writes nothing: a command scores stale runs first,
`medtemporal.scoring.runs.score_stale`); a `ReportRun` then reads its
``config.json``, its outcomes (`medtemporal.scoring.outcomes.load_outcomes`) and its benchmark the first time a
section asks, and keeps them: the common sections, the viewer, the paired differences and the family's
report (`medtemporal.report.family`) share one read. Runs of one benchmark share one loaded benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Sequence

from medtemporal.benchmark import Benchmark
from medtemporal.errors import InvalidInputError
from medtemporal.runs import RunConfig, RunFolder, RunScores, run_folders
from medtemporal.scoring.outcomes import RunOutcomes, load_outcomes


@dataclass(frozen=True)
class ReportRun:
    """One run in a report: its folder, row label and scores; its config, outcomes and benchmark read on first use."""

    path: Path
    label: str
    scores: RunScores
    benchmarks: dict[Path, Benchmark] = field(default_factory=dict, repr=False, compare=False)
    """The benchmarks the report's runs answered, by folder, shared by all of them (each read once)."""

    @cached_property
    def folder(self) -> RunFolder:
        return RunFolder(self.path)

    @cached_property
    def config(self) -> RunConfig | None:
        """The run's ``config.json`` (None when the folder has none)."""
        return self.folder.read_config()

    @cached_property
    def outcomes(self) -> RunOutcomes:
        """Each selected item's last answer per repeat, extracted as scoring does (read once)."""
        return load_outcomes(self.folder, benchmarks=self.benchmarks)

    @cached_property
    def benchmark(self) -> Benchmark:
        """The benchmark the run answered (read once per report; refused when rebuilt since the run); reading it
        reads no prediction."""
        return self.folder.benchmark(self.config, loaded=self.benchmarks)

    @property
    def repeats(self) -> int:
        """How many times the run answered each item."""
        return self.config.repeats if self.config else 1


def subset_options(config: RunConfig | None) -> str:
    """The options by which a run chose part of its benchmark (``--limit 60 --tasks TEL``); "" for all of it."""
    if config is None:
        return ""
    return " ".join([*([f"--limit {config.limit}"] if config.limit else []),
                     *([f"--limit-per-task {config.limit_per_task}"] if config.limit_per_task else []),
                     *([f"--tasks {','.join(config.tasks)}"] if config.tasks else [])])


def subset_label(run: ReportRun) -> str:
    """`` (subset: 60 of 351 items, --limit 60)`` for a run on part of its benchmark (`subset_options`), with the
    whole benchmark's items; "" for a run on all of it."""
    c = getattr(run, "config", None)
    how = subset_options(c)
    if not how:
        return ""
    manifest = run.folder.benchmark_manifest(c)
    full = sum((manifest.counts.get("task") or {}).values()) if manifest is not None else None
    items = int(run.scores.counts.get("items", 0))
    return f" (subset: {items:,} of {full:,} items, {how})" if full else f" (subset: {how})"


def protocol_label(scores: RunScores) -> str:
    """The run's protocol with its options: ``rag-text k=3 retriever=image``."""
    options = scores.run.protocol_options
    return " ".join([str(scores.run.protocol), *(f"{k}={v}" for k, v in sorted(options.items()))])


def report_runs(paths: Sequence[Path], scores: Sequence[RunScores]) -> list[ReportRun]:
    """Runs with row labels: the run's display name (``run --name``; older runs: the model URI), plus the
    protocol (with its options, ``rag-text k=3``) or the folder where that alone repeats; one benchmark cache
    shared by all."""
    labels = [str(s.run.name or s.run.model or p.name) for p, s in zip(paths, scores, strict=True)]
    if len(set(labels)) < len(labels):
        labels = [f"{label} ({protocol_label(s)})" for label, s in zip(labels, scores, strict=True)]
    if len(set(labels)) < len(labels):
        labels = [f"{label} [{p.name}]" for label, p in zip(labels, paths, strict=True)]
    shared: dict[Path, Benchmark] = {}
    return [ReportRun(Path(p), label, s, shared) for p, label, s in zip(paths, labels, scores, strict=True)]


def load_runs(run_dirs: Sequence[str | Path]) -> list[ReportRun]:
    """Read each run's ``scores.json``; a folder that is not a run stands for the runs under it (an eval set's
    folder, `medtemporal.runs.run_folders`).

    Raises:
        InvalidInputError: no run given, or a run has no scores or scores older than its predictions (score it
            first: ``medtemporal score RUN``, or `medtemporal.scoring.runs.score_stale`).
    """
    if not run_dirs:
        raise InvalidInputError("No run folders given; pass at least one folder written by `medtemporal run`.")
    paths = run_folders(run_dirs)
    if not paths:
        raise InvalidInputError("No run folders given; pass at least one folder written by `medtemporal run`.")
    folders = [RunFolder(p) for p in paths]
    stale = [str(folder.path) for folder in folders if folder.needs_scoring()]
    if stale:
        raise InvalidInputError(f"{', '.join(stale)} {'has' if len(stale) == 1 else 'have'} no scores newer than "
                                f"{'its' if len(stale) == 1 else 'their'} predictions; score first: "
                                f"medtemporal score {' '.join(stale)} (`medtemporal report` does it for you).")
    return report_runs(paths, [folder.scores() for folder in folders])
