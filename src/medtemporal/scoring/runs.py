"""Score a run folder: its outcomes (`medtemporal.scoring.outcomes`) → ``scores.json`` (`medtemporal.runs.RunScores`).

``scores.json`` holds the run's identity, one `Score` per group and metric
(groups named as in `medtemporal.scoring.aggregate`), counts of what was
scored, the table layout, the metrics' declared metadata and the bootstrap
settings, so a report needs nothing else.
"""

from __future__ import annotations

import functools
from collections import Counter
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from medtemporal import __version__
from medtemporal.backends.uri import short_name
from medtemporal.contract import BenchmarkSpec, Variant, spec
from medtemporal.errors import InvalidInputError
from medtemporal.provenance import run_licence
from medtemporal.runs import RunFolder, RunInfo, RunScores, run_folders
from medtemporal.schema import Item, Score
from medtemporal.scoring.aggregate import Outcome, layout, score_outcomes
from medtemporal.scoring.ci import CONFIDENCE, RESAMPLES, check_bootstrap
from medtemporal.scoring.extraction import extract, rule_id
from medtemporal.scoring.metrics import metric
from medtemporal.scoring.outcomes import RunOutcomes, load_outcomes
from medtemporal.scoring.repeats import repeat_summary

if TYPE_CHECKING:
    from medtemporal.scoring.judge import Judge


def score_stale(run_dirs: Iterable[str | Path]) -> list[Path]:
    """Score each run whose ``scores.json`` is missing or older than its predictions (`RunFolder.needs_scoring`)
    with the default settings, before a report reads them (a folder that is not a run stands for the runs under
    it, `medtemporal.runs.run_folders`); returns the runs scored."""
    stale = [p for p in run_folders(run_dirs) if RunFolder(p).needs_scoring()]
    for path in stale:
        score_run(path)
    return stale


def score_run(
    run_dir: str | Path, *, resamples: int = RESAMPLES, confidence: float = CONFIDENCE, seed: int = 0,
    judge: Judge | None = None, judge_options: dict[str, Any] | None = None, allow_rebuilt: bool = False,
    metrics: Sequence[str] = (), green: Judge | None = None, green_options: dict[str, Any] | None = None,
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
        judge: The LLM judge, used as the family's `BenchmarkSpec.judge` says (a rubric over open answers, or
            the family's own pass); without one, metrics that need a judge are left out.
        judge_options: Keyword options of `medtemporal.scoring.judge.judge_answers` (cache, remote data, progress).
        allow_rebuilt: Score against a benchmark rebuilt since the run (recorded in ``scores.json``).
        metrics: Metrics registered ``on_request`` (model-based report metrics) to score too, where the family
            lists them; ``("all",)`` for every one it lists; none: those the last scoring of the run was asked for.
        green: The GREEN model (`medtemporal.scoring.clinical.green.green_judge`): scores ``green_score`` where
            the family lists it; its verdicts go to ``judgements.jsonl`` and its summary to ``scores.json``.
        green_options: Keyword options of `medtemporal.scoring.judge.judge_answers` for the GREEN pass.

    Returns:
        The scores written.

    Raises:
        InvalidInputError: a bad setting, a folder that is not a run or is being written, a rebuilt benchmark, a
            requested metric the family does not list.
    """
    check_bootstrap(resamples, confidence, seed)
    folder = RunFolder(run_dir)
    folder.config()  # one sentence when the folder is not a run, before any lock file is made
    with folder.writer():
        metrics = tuple(metrics) or _requested_before(folder)
        requested = (*metrics, *(("green_score",) if green is not None else ()))
        loaded = load_outcomes(folder, judged=judge is not None, allow_rebuilt=allow_rebuilt, requested=requested)
        config, bench, items, by_repeat = loaded.config, loaded.bench, loaded.items, loaded.by_repeat
        family = spec(bench.manifest.benchmark)
        repeats = len(by_repeat)
        latest, lines = loaded.latest, loaded.lines
        counts = {"items": len(items), "prediction_lines": lines, "superseded": lines - len(latest),
                  "unknown_items": len({i for i, _ in latest} - {i.id for i in items}), **_sum_counts(loaded.tallies)}
        if repeats > 1:
            counts["repeats"] = repeats
        judge_block = None
        # the guard judges the run's images as they are (its --image-root, else the benchmark's, re-verified), not
        # the manifest's label, and only where the verdict can change where the answers go (an off-host judge)
        licence = functools.cache(functools.partial(run_licence, bench.manifest, config.image_root,
                                                    [r.path for i in items for r in i.images], folder=bench.path))
        if judge is not None:
            options = {"licence": licence, **(judge_options or {})}
            if family.judge is not None:
                judge_block, verdicts = family.judge(loaded, judge, options)
                if verdicts is not None:
                    by_repeat = [[replace(o, verdict=verdicts.get(o.item.id)) for o in r] for r in by_repeat]
            else:
                raise InvalidInputError(f"The benchmark {bench.manifest.benchmark!r} has no metric an LLM judge "
                                        "decides; score it without --judge.")
        green_block, in_force = None, nullcontext()
        if green is not None:
            green_block, in_force = _green_pass(folder, loaded, green, {"licence": licence, **(green_options or {})})
        outcomes = [o for outcomes_r in by_repeat for o in outcomes_r]
        protocol = config.protocol.name or next((p.protocol for p in latest.values()), None)
        with in_force:
            scores = score_outcomes(outcomes, loaded.metrics_for, loaded.subtype_groups, resamples=resamples,
                                    confidence=confidence, seed=seed, overall_tasks=loaded.overall_tasks,
                                    overall_weights=loaded.overall_weights)
            variants = {name: _variant(variant, loaded, resamples=resamples, confidence=confidence, seed=seed)
                        for name, variant in family.variants.items()
                        if variant.protocols is None or protocol in variant.protocols}
        first = next(iter(latest.values()), None)
        model = config.model.uri or (first.model if first else None)
        run = RunInfo(
            name=config.name or (short_name(model) if model else None),
            model=model,
            protocol=config.protocol.name or (first.protocol if first else None),
            protocol_options=dict(config.protocol.options),
            benchmark=bench.manifest.benchmark,
            benchmark_version=bench.manifest.version,
            benchmark_path=str(bench.path),
            items_sha256=bench.manifest.items_sha256,
            allow_rebuilt_benchmark=allow_rebuilt and (config.benchmark.items_sha256 or bench.manifest.items_sha256)
            != bench.manifest.items_sha256,
        )
        result = RunScores(
            run=run,
            scores=scores,
            counts=counts,
            layout=layout(items, loaded.subtype_groups),
            metrics={name: {**metric(name).summary(), **({"ours": True} if name in _ours(family, items) else {})}
                     for name in dict.fromkeys(s.metric for s in scores)},
            bootstrap={"method": "percentile bootstrap over patients (scipy.stats.bootstrap)",
                       "resamples": resamples, "confidence": confidence, "seed": seed},
            scored_with=f"medtemporal {__version__}",
            judge=judge_block,
            requested_metrics=list(metrics),
            green=green_block,
            repeats=(repeat_summary(by_repeat, loaded.metrics_for, loaded.subtype_groups, loaded.overall_tasks,
                                    loaded.overall_weights) if repeats > 1 else None),
            variants=variants or None,
        )
        folder.write_scores(result)
    return scores


def _requested_before(folder: RunFolder) -> tuple[str, ...]:
    """The on-request metrics the run's last scoring was asked for (none when it has no readable scores)."""
    try:
        return tuple(folder.scores().requested_metrics) if folder.has_scores() else ()
    except InvalidInputError:
        return ()


def _ours(family: BenchmarkSpec, items: Sequence[Item]) -> set[str]:
    """Metrics the family scores beside its paper's own (`BenchmarkSpec.extra_metrics`) on some task of ``items``."""
    return {name for task in {i.task for i in items}
            for name in family.for_task(family.extra_metrics, task, ())
            if name not in family.for_task(family.metrics, task, ("accuracy",))}


def _green_pass(folder: RunFolder, loaded: RunOutcomes, green: Judge, options: dict[str, Any],
                ) -> tuple[dict[str, Any], AbstractContextManager[None]]:
    """Ask the GREEN model about every answer of the tasks that list ``green_score``: the ``green`` block of
    ``scores.json``, and the context in which ``green_score`` reads the verdicts."""
    from medtemporal.scoring.clinical.green import RUBRIC, green_verdicts
    from medtemporal.scoring.judge import judge_answers

    if len(loaded.by_repeat) > 1:
        raise InvalidInputError(f"{folder.path} has {len(loaded.by_repeat)} repeats; GREEN scores runs of one repeat "
                                "only, so score it without --green or use a run made without --repeats.")
    scored = [o for o in loaded.by_repeat[0] if "green_score" in loaded.metrics_for(o.item.task)]
    answers = {o.item.id: (o.answer if isinstance(o.answer, str) else None) for o in scored}
    passed = judge_answers(folder, [o.item for o in scored], answers, green, RUBRIC, calibrate=False, **options)
    return passed.summary(), green_verdicts({o.item.id: passed.verdict(o.item.id) for o in scored})


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
