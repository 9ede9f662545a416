"""A run's predictions as scored outcomes: each selected item's last answer, extracted again where its rule changed.

`load_outcomes` reads a run folder through its owner (`medtemporal.runs.RunFolder`: config, benchmark,
predictions) and turns it into one `Outcome` per item and repeat, with the counts ``scores.json`` records.
`medtemporal.scoring.score_run` scores them; the report gets them through `medtemporal.report.loaded`
(one read per run and report), comparisons through `medtemporal.scoring.compare`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from medtemporal.benchmark import Benchmark
from medtemporal.contract import BenchmarkSpec, spec
from medtemporal.errors import InvalidInputError
from medtemporal.registry import lookup
from medtemporal.runs import RunConfig, RunFolder
from medtemporal.schema import Item, Prediction
from medtemporal.scoring.aggregate import Outcome
from medtemporal.scoring.extraction import extract, rule_id, rule_name


@dataclass
class RunOutcomes:
    """A run folder read for scoring: its config, benchmark, selected items and one outcome list per repeat."""

    folder: RunFolder
    config: RunConfig
    bench: Benchmark
    items: list[Item]
    by_repeat: list[list[Outcome]]
    """Outcomes of repeat r, one per item in ``items`` order."""
    tallies: list[dict[str, Any]]
    latest: dict[tuple[str, int], Prediction]
    """The last prediction line of each (item id, repeat)."""
    lines: int
    metrics_for: Callable[[str], tuple[str, ...]]
    subtype_groups: Mapping[str, Mapping[str, Sequence[str]]]
    overall_tasks: tuple[str, ...] | None = None
    """The tasks the ``overall`` group covers (`ScoreGroups.overall_tasks`; None: all)."""
    overall_weights: Mapping[str, float] = field(default_factory=dict)
    """Group → weight of the paper's weighted Overall (`ScoreGroups.overall_weights`)."""
    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    """Values computed once per run and reused (e.g. per-item metric statistics, `medtemporal.scoring.compare`)."""

    @property
    def path(self) -> Path:
        """The run folder."""
        return self.folder.path


def load_outcomes(run_dir: str | Path | RunFolder, *, judged: bool = False, allow_rebuilt: bool = False,
                  benchmarks: MutableMapping[Path, Benchmark] | None = None,
                  requested: Sequence[str] = ()) -> RunOutcomes:
    """Read a run folder's config, benchmark and predictions into per-repeat outcomes (nothing written).

    Metrics registered with ``needs_judge`` are included only when ``judged``, those registered ``on_request``
    only when ``requested`` names them (or is ``("all",)``). ``allow_rebuilt``: read against
    a benchmark rebuilt since the run; ``benchmarks``: benchmarks already read, by folder, shared by the runs of
    one report (`RunFolder.benchmark`).
    """
    folder = RunFolder.of(run_dir)
    config = folder.config()
    bench = folder.benchmark(config, allow_rebuilt=allow_rebuilt, loaded=benchmarks)
    items = config.selected(bench)
    latest, lines = folder.latest_predictions()
    by_repeat, tallies = [], []
    for r in range(config.repeats):
        outcomes_r, counts_r = _outcomes(items, {i: p for (i, rr), p in latest.items() if rr == r})
        by_repeat.append(outcomes_r)
        tallies.append(counts_r)
    specs = {name: spec(name) for name in {i.benchmark for i in items}}
    main = specs.get(bench.manifest.benchmark) or next(iter(specs.values()), None)
    check_requested(requested, items, specs)
    return RunOutcomes(folder, config, bench, items, by_repeat, tallies, latest, lines,
                       _metrics_for(items, specs, judged=judged, requested=requested),
                       main.groups.subtypes if main else {},
                       main.groups.overall_tasks if main else None, main.groups.overall_weights if main else {})


def _outcomes(items: list[Item], latest: dict[str, Prediction]) -> tuple[list[Outcome], dict[str, Any]]:
    """One outcome per item from its latest prediction (re-extracting stale answers), and the counts."""
    outcomes: list[Outcome] = []
    tally: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    stale: Counter[str] = Counter()
    for item in items:
        p = latest.get(item.id)
        if p is None or p.raw_output is None:
            if p is not None and p.error is not None:
                tally["errors"] += 1
            outcomes.append(Outcome(item, None, "missing"))
            tally["missing"] += 1
            continue
        current = rule_id(rule_name(item))
        if p.extraction == current:
            answer = p.answer
        else:
            answer = extract(item, p.raw_output).answer
            tally["re_extracted"] += 1
            stale[p.extraction or "none"] += 1
        rules[current] += 1
        status = "answered" if answer is not None else "invalid"
        tally[status] += 1
        tally["truncated"] += p.finish_reason == "length"
        outcomes.append(Outcome(item, answer, status, p.raw_output))
    keys = ("answered", "invalid", "missing", "errors", "truncated", "re_extracted")
    return outcomes, {**{k: tally[k] for k in keys}, "re_extracted_from": dict(sorted(stale.items())),
                      "rules": dict(sorted(rules.items()))}


def _metrics_for(
    items: list[Item], specs: dict[str, BenchmarkSpec], *, judged: bool = False, requested: Sequence[str] = (),
) -> Callable[[str], tuple[str, ...]]:
    """Task → metric names, from the spec of the benchmark whose items carry that task (its own and its extra
    metrics); metrics registered with ``needs_judge`` only when a judge scores the run, and those registered
    ``on_request`` only when ``requested`` names them (or is ``("all",)``)."""
    by_task = {i.task: specs[i.benchmark] for i in items}
    known: dict[str, tuple[str, ...]] = {}
    every = "all" in requested

    def wanted(name: str) -> bool:
        info = lookup("metric", name).info
        return ((judged or not info.get("needs_judge"))
                and (not info.get("on_request") or every or name in requested))

    def metrics_for(task: str) -> tuple[str, ...]:
        if task not in known:  # resolved once per task: callers ask per item
            known[task] = tuple(n for n in by_task[task].listed_metrics(task) if wanted(n))
        return known[task]

    return metrics_for


def check_requested(requested: Sequence[str], items: Sequence[Item], specs: Mapping[str, BenchmarkSpec]) -> None:
    """Refuse, in one sentence, a requested metric that is not registered or that no task of ``items`` lists.

    Raises:
        UnknownNameError: no such metric.
        InvalidInputError: the benchmark's tasks do not list it.
    """
    listed = {n for i in {(i.benchmark, i.task) for i in items} for n in specs[i[0]].listed_metrics(i[1])}
    for name in requested:
        if name == "all":
            continue
        lookup("metric", name)
        if name not in listed:
            benchmarks = ", ".join(sorted(specs))
            raise InvalidInputError(f"The metric {name!r} is not listed for any task of {benchmarks} (listed: "
                                    f"{', '.join(sorted(listed))}); name one of those with --metrics.")
