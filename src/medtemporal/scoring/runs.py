"""Score a run folder: ``config.json`` + ``predictions.jsonl`` → ``scores.json``.

``scores.json`` holds the run's identity, one `Score` per group and metric
(groups named as in `medtemporal.scoring.aggregate`), counts of what was
scored, the table layout, the metrics' declared metadata and the bootstrap
settings, so a report needs nothing else.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

from pydantic import ValidationError

from medtemporal import __version__
from medtemporal.benchmark import Benchmark
from medtemporal.contract import BenchmarkSpec, Variant, spec
from medtemporal.errors import InvalidInputError
from medtemporal.registry import lookup
from medtemporal.runs import SCORES, RunConfig, RunFolder
from medtemporal.schema import Item, Prediction, Record, Score, describe_validation_error
from medtemporal.scoring.aggregate import Outcome, TaskLayout, layout, score_outcomes
from medtemporal.scoring.ci import CONFIDENCE, RESAMPLES
from medtemporal.scoring.extraction import extract, rule_id, rule_name
from medtemporal.scoring.metrics import metric
from medtemporal.scoring.repeats import repeat_summary

if TYPE_CHECKING:
    from medtemporal.scoring.judge import Judge


class RunScores(Record):
    """The content of ``scores.json``."""

    run: dict[str, Any]
    """model, protocol, protocol_options (as recorded in ``config.json``, e.g. ``{"k": 3}``), benchmark,
    benchmark_version, benchmark_path, items_sha256."""
    scores: list[Score]
    counts: dict[str, Any]
    """items, prediction_lines, superseded, unknown_items, answered, invalid, missing, errors,
    truncated (outputs cut off at the token limit, scored as they are), re_extracted, re_extracted_from (stored rule id → items extracted again) and rules
    (current rule id → items decided by it)."""
    layout: list[TaskLayout]
    metrics: dict[str, dict[str, Any]]
    """Metric name → declared metadata (higher_is_better, aggregation, percent, description)."""
    bootstrap: dict[str, Any]
    scored_with: str
    judge: dict[str, Any] | None = None
    """The LLM judge's identity, settings, prompt hash, counts and calibration row (`medtemporal.scoring.judge`);
    None when no judge scored the run."""
    repeats: dict[str, Any] | None = None
    """For runs with ``--repeats`` above 1: `medtemporal.scoring.repeats.repeat_summary` (each repeat's
    value with mean and sd, and per-item consistency); None for a single repeat."""
    variants: dict[str, dict[str, Any]] | None = None
    """Other scorings of the run beside the main one (`BenchmarkSpec.variants`, e.g. ``"as released"``):
    name → description, extraction rule per task and scores."""

    def score(self, group: str, metric: str) -> Score | None:
        """The score of ``metric`` over ``group``, if computed."""
        return next((s for s in self.scores if s.group == group and s.metric == metric), None)


def score_run(
    run_dir: str | Path, *, resamples: int = RESAMPLES, confidence: float = CONFIDENCE, seed: int = 0,
    judge: Judge | None = None, judge_options: dict[str, Any] | None = None, allow_rebuilt: bool = False,
) -> list[Score]:
    """Score the predictions of a run folder and write its ``scores.json``, holding the folder's writer lock.

    Only the items the run selected (its recorded ``tasks`` and ``limit``) are
    scored. The last prediction line of an item (per repeat) wins. With ``repeats`` above 1 in
    the config, every repeat's answers are pooled (``Score.n`` counts answers; the
    intervals still resample patients) and ``RunScores.repeats`` holds each repeat's
    values and the items' consistency. Items without one, or whose last
    line has no output (an error), are missing; outputs without a valid answer
    are invalid; both count as wrong. An answer stored under another rule id
    than the current rule's is extracted again from ``raw_output``. The family's
    other scorings (`BenchmarkSpec.variants`, e.g. 3D-RAD's release rule) are scored beside, labelled.

    Args:
        run_dir: Folder with ``config.json`` (``benchmark.path``) and ``predictions.jsonl``.
        resamples: Bootstrap replicates per score.
        confidence: Confidence level of the intervals.
        seed: Bootstrap seed.
        judge: The LLM judge: the family's rubric (`BenchmarkSpec.judge_rubric`) or judge pass
            (`BenchmarkSpec.judge_pass`); without one, metrics that need a judge are left out.
        judge_options: Keyword options of `medtemporal.scoring.judge.judge_answers` (cache, remote data, progress).
        allow_rebuilt: Score against a benchmark rebuilt since the run (recorded in ``scores.json``).

    Returns:
        The scores written.

    Raises:
        InvalidInputError: a bad setting, a folder that is not a run or is being written, a rebuilt benchmark.
    """
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise InvalidInputError(f"The bootstrap resamples (--resamples) must be a whole number of 1 or more, not {resamples}.")
    if not (math.isfinite(confidence) and 0 < confidence < 1):
        raise InvalidInputError(f"The interval level (--confidence) must be between 0 and 1, e.g. 0.95, not {confidence}.")
    folder = RunFolder(run_dir)
    folder.config()  # one sentence when the folder is not a run, before any lock file is made
    with folder.writer():
        loaded = _load_outcomes(folder, judge is not None, allow_rebuilt)
        config, bench, items, by_repeat = loaded.config, loaded.bench, loaded.items, loaded.by_repeat
        family = spec(bench.manifest.benchmark)
        repeats = len(by_repeat)
        latest, lines = loaded.latest, loaded.lines
        counts = {"items": len(items), "prediction_lines": lines, "superseded": lines - len(latest),
                  "unknown_items": len({i for i, _ in latest} - {i.id for i in items}), **_sum_counts(loaded.tallies)}
        if repeats > 1:
            counts["repeats"] = repeats
        judge_block = None
        if judge is not None:
            options = {"licence": bench.manifest.licence, **(judge_options or {})}
            if family.judge_pass is not None:
                judge_block = family.judge_pass(folder, judge, options)
            elif family.judge_rubric is not None:
                from medtemporal.scoring.judge import judge_answers

                if repeats > 1:
                    raise InvalidInputError(f"{folder.path} has {repeats} repeats; the LLM judge scores runs of one "
                                            "repeat only, so score it without --judge or judge a run made without "
                                            "--repeats.")
                answers = {o.item.id: (o.answer if isinstance(o.answer, str) else None) for o in by_repeat[0]}
                judged = judge_answers(folder, items, answers, judge, family.judge_rubric, **options)
                by_repeat = [[replace(o, verdict=judged.verdict(o.item.id)) for o in by_repeat[0]]]
                judge_block = judged.summary()
            else:
                raise InvalidInputError(f"The benchmark {bench.manifest.benchmark!r} has no metric an LLM judge "
                                        "decides; score it without --judge.")
        outcomes = [o for outcomes_r in by_repeat for o in outcomes_r]
        scores = score_outcomes(outcomes, loaded.metrics_for, loaded.subtype_groups, resamples=resamples,
                                confidence=confidence, seed=seed, overall_tasks=loaded.overall_tasks,
                                overall_weights=loaded.overall_weights)
        variants = {name: _variant(variant, loaded, resamples=resamples, confidence=confidence, seed=seed)
                    for name, variant in family.variants.items()}
        first = next(iter(latest.values()), None)
        run = {
            "model": config.model.uri or (first.model if first else None),
            "protocol": config.protocol.name or (first.protocol if first else None),
            "protocol_options": dict(config.protocol.options),
            "benchmark": bench.manifest.benchmark,
            "benchmark_version": bench.manifest.version,
            "benchmark_path": str(bench.path),
            "items_sha256": bench.manifest.items_sha256,
        }
        if allow_rebuilt and (config.benchmark.items_sha256 or bench.manifest.items_sha256) != bench.manifest.items_sha256:
            run["allow_rebuilt_benchmark"] = True
        result = RunScores(
            run=run,
            scores=scores,
            counts=counts,
            layout=layout(items, loaded.subtype_groups),
            metrics={name: metric(name).summary() for name in dict.fromkeys(s.metric for s in scores)},
            bootstrap={"method": "percentile bootstrap over patients (scipy.stats.bootstrap)",
                       "resamples": resamples, "confidence": confidence, "seed": seed},
            scored_with=f"medtemporal {__version__}",
            judge=judge_block,
            repeats=(repeat_summary(by_repeat, loaded.metrics_for, loaded.subtype_groups, loaded.overall_tasks,
                                    loaded.overall_weights) if repeats > 1 else None),
            variants=variants or None,
        )
        folder.write_scores(result.model_dump(mode="python"))
    return scores


def _variant(variant: Variant, loaded: RunOutcomes, **bootstrap: Any) -> dict[str, Any]:
    """The scores of one other scoring of the run (`BenchmarkSpec.variants`): the tasks it covers, each answer
    extracted again with the variant's rule, scored with its metrics."""
    outcomes = []
    for outcomes_r in loaded.by_repeat:
        for o in outcomes_r:
            rule = variant.extractors.get(o.item.task)
            if rule is None:
                continue
            answer = None if o.output is None else extract(o.item, o.output, rule).answer
            status = "missing" if o.output is None else ("answered" if answer is not None else "invalid")
            outcomes.append(Outcome(o.item, answer, status, o.output))
    default = loaded.metrics_for
    scores = score_outcomes(outcomes, lambda task: variant.metrics.get(task) or default(task),
                            loaded.subtype_groups, overall_tasks=loaded.overall_tasks, **bootstrap) if outcomes else []
    return {"description": variant.description,
            "rules": {task: rule_id(rule) for task, rule in sorted(variant.extractors.items())},
            "scores": [s.model_dump(mode="python") for s in scores]}


@dataclass
class RunOutcomes:
    """A run folder read for scoring: its config, benchmark, selected items and one outcome list per repeat."""

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
    """The tasks the ``overall`` group covers (`BenchmarkSpec.overall_tasks`; None: all)."""
    overall_weights: Mapping[str, float] = field(default_factory=dict)
    """Group → weight of the paper's weighted Overall (`BenchmarkSpec.overall_weights`)."""
    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    """Values computed once per run and reused (e.g. per-item metric statistics, `medtemporal.scoring.compare`)."""


_SHARED: ContextVar[dict[tuple[str, bool], RunOutcomes] | None] = ContextVar("shared_outcomes", default=None)


@contextmanager
def shared_outcomes() -> Iterator[None]:
    """Within this block `load_outcomes` reads each run folder once and hands every caller the same
    `RunOutcomes` (with its `RunOutcomes.memo`): a report reads its runs from several sections. The run
    folders must not change meanwhile."""
    token = _SHARED.set({} if _SHARED.get() is None else _SHARED.get())
    try:
        yield
    finally:
        _SHARED.reset(token)


def load_outcomes(run_dir: str | Path, *, judged: bool = False) -> RunOutcomes:
    """Read a run folder's config, benchmark and predictions into per-repeat outcomes (nothing written).

    Metrics registered with ``needs_judge`` are included only when ``judged``. Inside `shared_outcomes`
    a folder is read once.
    """
    shared = _SHARED.get()
    key = (str(Path(run_dir).resolve()), judged)
    if shared is not None and key in shared:
        return shared[key]
    loaded = _load_outcomes(RunFolder(run_dir), judged)
    if shared is not None:
        shared[key] = loaded
    return loaded


def _load_outcomes(folder: RunFolder, judged: bool, allow_rebuilt: bool = False) -> RunOutcomes:
    config = folder.config()
    bench = folder.benchmark(config, allow_rebuilt=allow_rebuilt)
    items = config.selected(bench)
    latest, lines = folder.latest_predictions()
    by_repeat, tallies = [], []
    for r in range(config.repeats):
        outcomes_r, counts_r = _outcomes(items, {i: p for (i, rr), p in latest.items() if rr == r})
        by_repeat.append(outcomes_r)
        tallies.append(counts_r)
    specs = {name: spec(name) for name in {i.benchmark for i in items}}
    main = specs.get(bench.manifest.benchmark) or next(iter(specs.values()), None)
    return RunOutcomes(config, bench, items, by_repeat, tallies, latest, lines, _metrics_for(items, specs, judged=judged),
                       main.subtype_groups if main else {}, main.overall_tasks if main else None,
                       main.overall_weights if main else {})


def read_scores(run_dir: str | Path) -> RunScores:
    """The ``scores.json`` of a run folder, with one clear sentence if it is missing or malformed."""
    folder = RunFolder(run_dir)
    text = folder.scores_text()
    try:
        return RunScores.model_validate(json.loads(text))
    except (ValueError, ValidationError) as exc:
        reason = describe_validation_error(exc) if isinstance(exc, ValidationError) else "not valid JSON"
        raise InvalidInputError(f"{folder.file(SCORES)}: {reason}; score the run again with `medtemporal score`.") from None


def needs_scoring(run_dir: str | Path) -> bool:
    """True when ``scores.json`` is missing or older than ``predictions.jsonl``."""
    return RunFolder(run_dir).needs_scoring()


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



def _sum_counts(tallies: list[dict[str, Any]]) -> dict[str, Any]:
    """The counts of several repeats added up (numbers summed, mappings such as ``rules`` merged)."""
    total: dict[str, Any] = {}
    for tally in tallies:
        for key, value in tally.items():
            if isinstance(value, dict):
                merged: Counter[str] = Counter(total.get(key, {}))
                merged.update(value)
                total[key] = dict(sorted(merged.items()))
            else:
                total[key] = total.get(key, 0) + value
    return total


def _metrics_for(
    items: list[Item], specs: dict[str, BenchmarkSpec], *, judged: bool = False
) -> Callable[[str], tuple[str, ...]]:
    """Task → metric names, from the spec of the benchmark whose items carry that task; metrics
    registered with ``needs_judge`` only when a judge scores the run."""
    by_task = {i.task: specs[i.benchmark] for i in items}
    known: dict[str, tuple[str, ...]] = {}

    def metrics_for(task: str) -> tuple[str, ...]:
        if task not in known:  # resolved once per task: callers ask per item
            names = BenchmarkSpec.for_task(by_task[task].metrics, task, ("accuracy",))
            known[task] = tuple(n for n in names if judged or not lookup("metric", n).info.get("needs_judge"))
        return known[task]

    return metrics_for




