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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

from pydantic import ValidationError

from medtemporal import __version__
from medtemporal.benchmark import Benchmark, BenchmarkSpec, load, spec
from medtemporal.errors import InvalidInputError
from medtemporal.registry import lookup
from medtemporal.schema import Item, Prediction, Record, Score, describe_validation_error, iter_jsonl, read_json_object
from medtemporal.scoring.aggregate import Outcome, TaskLayout, layout, score_outcomes
from medtemporal.scoring.ci import CONFIDENCE, RESAMPLES
from medtemporal.scoring.extraction import extract, rule_id, rule_name
from medtemporal.scoring.metrics import metric
from medtemporal.scoring.repeats import repeat_summary
from medtemporal.writes import write_atomic

if TYPE_CHECKING:
    from medtemporal.scoring.judge import Judge

CONFIG = "config.json"
PREDICTIONS = "predictions.jsonl"
SCORES = "scores.json"


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

    def score(self, group: str, metric: str) -> Score | None:
        """The score of ``metric`` over ``group``, if computed."""
        return next((s for s in self.scores if s.group == group and s.metric == metric), None)


def score_run(
    run_dir: str | Path, *, resamples: int = RESAMPLES, confidence: float = CONFIDENCE, seed: int = 0,
    judge: Judge | None = None, judge_options: dict[str, Any] | None = None,
) -> list[Score]:
    """Score the predictions of a run folder and write its ``scores.json``.

    Only the items the run selected (its recorded ``tasks`` and ``limit``) are
    scored. The last prediction line of an item (per repeat) wins. With ``repeats`` above 1 in
    the config, every repeat's answers are pooled (``Score.n`` counts answers; the
    intervals still resample patients) and ``RunScores.repeats`` holds each repeat's
    values and the items' consistency. Items without one, or whose last
    line has no output (an error), are missing; outputs without a valid answer
    are invalid; both count as wrong. An answer stored under another rule id
    than the current rule's is extracted again from ``raw_output``.

    Args:
        run_dir: Folder with ``config.json`` (``benchmark.path``) and ``predictions.jsonl``.
        resamples: Bootstrap replicates per score.
        confidence: Confidence level of the intervals.
        seed: Bootstrap seed.
        judge: The LLM judge of open answers; without one, metrics that need a judge are left out.
        judge_options: Keyword options of `medtemporal.scoring.judge.judge_answers` (cache, remote data, progress).

    Returns:
        The scores written.
    """
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise InvalidInputError(f"The bootstrap resamples (--resamples) must be a whole number of 1 or more, not {resamples}.")
    if not (math.isfinite(confidence) and 0 < confidence < 1):
        raise InvalidInputError(f"The interval level (--confidence) must be between 0 and 1, e.g. 0.95, not {confidence}.")
    run_dir = Path(run_dir)
    loaded = load_outcomes(run_dir, judged=judge is not None)
    config, bench, items, by_repeat = loaded.config, loaded.bench, loaded.items, loaded.by_repeat
    metrics_for, subtype_groups, repeats = loaded.metrics_for, loaded.subtype_groups, len(by_repeat)
    outcomes = [o for outcomes_r in by_repeat for o in outcomes_r]
    latest, lines = loaded.latest, loaded.lines
    counts = {"items": len(items), "prediction_lines": lines, "superseded": lines - len(latest),
              "unknown_items": len({i for i, _ in latest} - {i.id for i in items}), **_sum_counts(loaded.tallies)}
    if repeats > 1:
        counts["repeats"] = repeats
    judged = None
    verdicts: dict[str, Any] = {}
    family_judge = spec(bench.manifest.benchmark).judge_pass if judge is not None else None
    judge_block = None
    if family_judge is not None:
        judge_block = family_judge(run_dir, judge, {"licence": bench.manifest.licence, **(judge_options or {})})
    elif judge is not None:
        from medtemporal.scoring.judge import judge_answers

        if repeats > 1:
            raise InvalidInputError(f"{run_dir} has {repeats} repeats; the LLM judge scores runs of one repeat only, "
                                    "so score it without --judge or judge a run made without --repeats.")
        answers = {o.item.id: (o.answer if isinstance(o.answer, str) else None) for o in outcomes}
        judged = judge_answers(run_dir, items, answers, judge, licence=bench.manifest.licence, **(judge_options or {}))
        verdicts = {item_id: v for (kind, item_id), v in judged.verdicts.items() if kind == "answer"}
        judge_block = judged.summary()
    with _verdicts_in_scope(verdicts if judge is not None else None):
        scores = score_outcomes(outcomes, metrics_for, subtype_groups, resamples=resamples, confidence=confidence,
                                seed=seed, overall_tasks=loaded.overall_tasks)
    first = next(iter(latest.values()), None)
    result = RunScores(
        run={
            "model": _name(config.get("model")) or (first.model if first else None),
            "protocol": _name(config.get("protocol")) or (first.protocol if first else None),
            "protocol_options": _options(config.get("protocol")),
            "benchmark": bench.manifest.benchmark,
            "benchmark_version": bench.manifest.version,
            "benchmark_path": str(bench.path),
            "items_sha256": bench.manifest.items_sha256,
        },
        scores=scores,
        counts=counts,
        layout=layout(items, subtype_groups),
        metrics={name: metric(name).summary() for name in dict.fromkeys(s.metric for s in scores)},
        bootstrap={"method": "percentile bootstrap over patients (scipy.stats.bootstrap)",
                   "resamples": resamples, "confidence": confidence, "seed": seed},
        scored_with=f"medtemporal {__version__}",
        judge=judge_block,
        repeats=repeat_summary(by_repeat, metrics_for, subtype_groups, loaded.overall_tasks) if repeats > 1 else None,
    )
    write_atomic(run_dir / SCORES, json.dumps(result.model_dump(mode="python"), indent=2, ensure_ascii=False) + "\n")
    return scores


@dataclass
class RunOutcomes:
    """A run folder read for scoring: its config, benchmark, selected items and one outcome list per repeat."""

    config: dict[str, Any]
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
    loaded = _load_outcomes(Path(run_dir), judged)
    if shared is not None:
        shared[key] = loaded
    return loaded


def _load_outcomes(run_dir: Path, judged: bool) -> RunOutcomes:
    config = _read_config(run_dir)
    bench = load(_benchmark_path(run_dir, config))
    items = bench.select(config.get("tasks"), config.get("limit"))
    if not (run_dir / PREDICTIONS).is_file():
        raise InvalidInputError(f"{run_dir} has no {PREDICTIONS}; run `medtemporal run` into it first.")
    latest: dict[tuple[str, int], Prediction] = {}
    lines = 0
    for prediction in iter_jsonl(run_dir / PREDICTIONS, Prediction):
        latest[(prediction.item_id, prediction.repeat)] = prediction
        lines += 1
    by_repeat, tallies = [], []
    for r in range(_repeats(config)):
        outcomes_r, counts_r = _outcomes(items, {i: p for (i, rr), p in latest.items() if rr == r})
        by_repeat.append(outcomes_r)
        tallies.append(counts_r)
    specs = {name: spec(name) for name in {i.benchmark for i in items}}
    main = specs.get(bench.manifest.benchmark) or next(iter(specs.values()), None)
    return RunOutcomes(config, bench, items, by_repeat, tallies, latest, lines, _metrics_for(items, specs, judged=judged),
                       main.subtype_groups if main else {}, main.overall_tasks if main else None)


def read_scores(run_dir: str | Path) -> RunScores:
    """The ``scores.json`` of a run folder, with one clear sentence if it is missing or malformed."""
    path = Path(run_dir) / SCORES
    if not path.is_file():
        raise InvalidInputError(f"{path} does not exist; score the run with `medtemporal score {run_dir}`.")
    try:
        return RunScores.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as exc:
        reason = describe_validation_error(exc) if isinstance(exc, ValidationError) else "not valid JSON"
        raise InvalidInputError(f"{path}: {reason}; score the run again with `medtemporal score`.") from None


def needs_scoring(run_dir: str | Path) -> bool:
    """True when ``scores.json`` is missing or older than ``predictions.jsonl``."""
    scores, predictions = Path(run_dir) / SCORES, Path(run_dir) / PREDICTIONS
    if not scores.is_file():
        return True
    return predictions.is_file() and predictions.stat().st_mtime_ns > scores.stat().st_mtime_ns


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


def _repeats(config: dict[str, Any]) -> int:
    """The run's ``repeats`` (1 when not recorded)."""
    value = config.get("repeats") or 1
    if not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"config.json has repeats={value!r}; it must be a whole number of at least 1.")
    return value


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


@contextmanager
def _verdicts_in_scope(verdicts: dict[str, Any] | None) -> Iterator[None]:
    """The judge's verdicts visible to the judge metrics while scoring (nothing when no judge)."""
    if verdicts is None:
        yield
        return
    from medtemporal.scoring.judge import use_verdicts

    with use_verdicts(verdicts):
        yield


def _read_config(run_dir: Path) -> dict[str, Any]:
    """The run's ``config.json``, with one clear sentence if it is missing or malformed."""
    path = run_dir / CONFIG
    if not path.is_file():
        raise InvalidInputError(
            f"{run_dir} is not a run folder (no {CONFIG}); pass the folder `medtemporal run` wrote."
        )
    return read_json_object(path, "restore it or re-run into a new folder")


def _benchmark_path(run_dir: Path, config: dict[str, Any]) -> Path:
    """``benchmark.path`` of the config; a relative path is tried from the run folder, then the current one."""
    bench = config.get("benchmark")
    raw = bench.get("path") if isinstance(bench, dict) else bench
    if not isinstance(raw, str) or not raw:
        raise InvalidInputError(f"{run_dir / CONFIG} has no benchmark.path; re-run with `medtemporal run`.")
    path = Path(raw)
    if path.is_absolute():
        return path
    for candidate in (run_dir / path, Path.cwd() / path):
        if candidate.is_dir():
            return candidate
    raise InvalidInputError(
        f"The benchmark folder {raw} named in {run_dir / CONFIG} does not exist; "
        "restore it or fix benchmark.path."
    )


def _name(value: Any) -> str | None:
    """A model or protocol name from a config value (a string, or a mapping with a name)."""
    if isinstance(value, dict):
        value = value.get("uri") or value.get("name") or value.get("id")
    return str(value) if value else None


def _options(protocol: Any) -> dict[str, Any]:
    """The protocol options recorded in a config's ``protocol`` value (none for a bare name)."""
    options = protocol.get("options") if isinstance(protocol, dict) else None
    return dict(options) if isinstance(options, dict) else {}
