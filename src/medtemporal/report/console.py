"""What ``medtemporal run`` and ``score`` print: every metric of every task a run touched, in %, with intervals.

One table per run, in the long layout lmms-eval prints (a row per task and metric), so nothing a run
scored is hidden behind a single headline metric: judge metrics after ``--judge``, report-generation
metrics beside accuracy, every task of a family. Every value is shown × 100 (percent for shares, and the
field's ×100 convention for BLEU, ROUGE, METEOR, CIDEr and BERTScore). A metric that could not be computed
is left out of the rows and named once below the table with its reason, so the computable ones stand in
its place. The other scorings of a run (`BenchmarkSpec.variants`, e.g. 3D-RAD "as released") follow as
rows of their own, labelled. Several runs end with one summary table across them (`summary_table`).

Nothing here computes a metric: every number comes from a run's ``scores.json``.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from medtemporal.contract import BenchmarkSpec, spec
from medtemporal.errors import MedTemporalError
from medtemporal.report.tables import ReportRun, markdown_table, overall_tasks, protocol_label
from medtemporal.runs import RunScores
from medtemporal.schema import Score
from medtemporal.scoring.aggregate import WEIGHTED_OVERALL

DASH = "–"


def pct(value: float | None) -> str:
    """A value × 100 with one decimal (``0.315`` → ``31.5``); a dash when missing or NaN.

    >>> pct(0.315), pct(None), pct(float("nan"))
    ('31.5', '–', '–')
    """
    return DASH if value is None or math.isnan(value) else f"{100 * value:.1f}"


def pct_interval(score: Score) -> str:
    """``31.5 [28.1, 34.9]``, the interval left out where it is undefined."""
    text = pct(score.value)
    if text != DASH and score.ci_low is not None and score.ci_high is not None:
        text += f" [{pct(score.ci_low)}, {pct(score.ci_high)}]"
    return text


def family_of(scores: RunScores) -> BenchmarkSpec | None:
    """The spec of the run's benchmark, None where it is not registered here (a plugin not installed)."""
    try:
        return spec(str(scores.run.benchmark))
    except MedTemporalError:
        return None


def headline_metrics(scores: RunScores) -> tuple[str, ...]:
    """The family's headline metrics (`ScoreGroups.headline_metrics`); () where it names none."""
    family = family_of(scores)
    return family.groups.headline_metrics if family else ()


def _split(run: ReportRun) -> list[str]:
    """The labels of the task columns the family's terminal table shows beside each score
    (`ScoreGroups.headline_split`)."""
    family = family_of(run.scores)
    if not family or not family.groups.headline_split:
        return []
    return list(dict.fromkeys(c.label for t in run.scores.layout for c in t.columns))


def _group_rows(run: ReportRun, scores: Sequence[Score], groups: Sequence[tuple[str, str]], shown: Sequence[str],
                split: Sequence[str], suffix: str = "") -> list[list[str]]:
    """Rows (label, metric, value [CI], each split column, chance, n, invalid, missing) of every computed score of
    ``groups`` whose metric is ``shown`` (all where empty), in the order of ``shown``."""
    columns = {t.group: {c.label: c.group for c in t.columns} for t in run.scores.layout}
    by_key = {(s.group, s.metric): s for s in scores}
    rows = []
    for group, label in groups:
        computed = [s for s in scores if s.group == group and not s.unavailable]
        if shown:
            computed = sorted((s for s in computed if s.metric in shown), key=lambda s: shown.index(s.metric))
        for s in computed:
            cells = []
            for column in split:
                other = by_key.get((columns.get(group, {}).get(column, ""), s.metric))
                cells.append(pct(other.value) if other and not other.unavailable else DASH)
            rows.append([label + suffix, s.metric, pct_interval(s), *cells, pct(s.chance), str(s.n), str(s.invalid),
                         str(s.missing)])
    return rows


def _groups(run: ReportRun) -> list[tuple[str, str]]:
    """(group, row label) of each task, then Overall (the paper's weighted one first where there is one);
    Overall is left out where it covers one task only (it repeats that task's rows)."""
    tasks = [(t.group, t.task) for t in run.scores.layout]
    overall = [(WEIGHTED_OVERALL, "Overall (paper)"), ("overall", "Overall (micro)")]
    if not any(s.group == WEIGHTED_OVERALL for s in run.scores.scores):
        covered = overall_tasks(run)
        if len(tasks) == 1 or len(covered) == 1:
            return tasks
        overall = [("overall", f"Overall ({', '.join(covered)})" if covered else "Overall")]
    return tasks + overall if len(tasks) != 1 else tasks


def unavailable_reasons(scores: Sequence[Score]) -> dict[str, list[str]]:
    """Reason → the metrics it left uncomputed, each reason once."""
    out: dict[str, list[str]] = {}
    for s in scores:
        if s.unavailable and s.metric not in out.setdefault(s.unavailable, []):
            out[s.unavailable].append(s.metric)
    return out


def _judge_line(judge: dict[str, Any] | None) -> str:
    """One line on the judge pass: who judged, and how many verdicts were read, unparseable or failed."""
    if not judge:
        return ""
    c = judge.get("counts") or {}
    return (f"Judge {judge.get('uri') or judge.get('id')}: {c.get('judged', 0)} verdicts read, "
            f"{c.get('unparseable', 0)} unparseable, {c.get('errors', 0)} failed, "
            f"{c.get('missing_answers', 0)} answers missing (scored 0 without a call).")


def run_table(run: ReportRun, *, full: bool = False) -> str:
    """The run's table: each task's metrics (its family's headline ones unless ``full``) and Overall, then its other
    scorings, then what was not computed."""
    s = run.scores
    counts = s.counts
    confidence = 100 * float(s.bootstrap.get("confidence", 0.95))
    name = s.run.name or s.run.model
    head = (f"{name} on {s.run.benchmark} ({protocol_label(s)}; {run.path}): {counts.get('items', 0):,} items, "
            f"{counts.get('answered', 0):,} answered, {counts.get('invalid', 0):,} invalid, "
            f"{counts.get('missing', 0):,} missing. Values × 100 (%), {confidence:.0f}% intervals clustered by patient:")
    groups = _groups(run)
    shown = () if full else headline_metrics(s)
    split = _split(run)
    rows = _group_rows(run, s.scores, groups, shown, split)
    zeros = []
    for name, variant in (s.variants or {}).items():
        scores = [Score.model_validate(v) for v in variant.get("scores", [])]
        in_variant = [(g, label) for g, label in groups if any(v.group == g for v in scores)]
        rows += _group_rows(run, scores, in_variant, shown, split, f" ({name})")
        zeros += [_zero_line(name, variant, score) for score in scores if score.group == "overall"
                  and not score.unavailable and score.value == 0 and score.n and (not shown or score.metric in shown)]
    parts = [head, ""]
    if rows:
        parts.append(markdown_table(["Task", "Metric", "Score [CI]", *split, "Chance", "n", "Invalid", "Missing"],
                                    rows))
    else:
        parts.append("(no metric could be computed)")
    hidden = sorted({x.metric for x in s.scores if not x.unavailable} - set(shown)) if shown else []
    if hidden:
        parts.append(f"\nThe family's headline metrics; {len(hidden)} more ({', '.join(hidden[:3])}"
                     f"{', …' if len(hidden) > 3 else ''}): `medtemporal runs show {run.path}`.")
    notes = [f"Not computed: {', '.join(metrics)}: {reason.rstrip('.')}."
             for reason, metrics in unavailable_reasons(s.scores).items()]
    notes += zeros
    judge = _judge_line(s.judge)
    return "\n".join([*parts, *([""] if notes or judge else []), *notes, *([judge] if judge else [])])


def _zero_line(name: str, variant: dict[str, Any], score: Score) -> str:
    """Why a labelled scoring gives 0: every answer invalid under its rule, or none right by it (its rule)."""
    why = (f"all {score.n:,} answers are invalid under its rule" if score.invalid + score.missing >= score.n
           else "no answer is right by its rule")
    return f"{score.metric} ({name}) is 0: {why}, {variant.get('description', '').rstrip('.')}."


def headline_score(run: ReportRun) -> Score | None:
    """The run's headline score (`headline_of`)."""
    return headline_of(run.scores)


def headline_of(scores: RunScores) -> Score | None:
    """A run's headline: its family's first computed headline metric (else its first computed metric) over the
    paper's Overall, else Overall, else its first task."""
    order = headline_metrics(scores)
    ranked = sorted(scores.scores, key=lambda x: order.index(x.metric) if x.metric in order else len(order))
    for group in (WEIGHTED_OVERALL, "overall", *(t.group for t in scores.layout)):
        for score in ranked:
            if score.group == group and not score.unavailable and not math.isnan(score.value):
                return score
    return None


def summary_table(runs: Sequence[ReportRun]) -> str:
    """One row per run: benchmark, headline metric and score (× 100) against its chance (marked where below), and
    the answer counts."""
    rows = []
    for run in runs:
        best = headline_score(run)
        c = run.scores.counts
        name = run.scores.run.name or run.scores.run.model
        below = best is not None and best.chance is not None and best.ci_high is not None and best.ci_high < best.chance
        chance = pct(best.chance if best else None) + (" (below)" if below else "")
        rows.append([str(name), str(run.scores.run.benchmark), protocol_label(run.scores),
                     best.metric if best else DASH, pct_interval(best) if best else DASH, chance,
                     f"{c.get('items', 0):,}", f"{c.get('answered', 0):,}", f"{c.get('invalid', 0):,}",
                     f"{c.get('missing', 0):,}"])
    return ("Summary (each run's headline, × 100, with intervals; below: the interval lies below chance):\n\n"
            + markdown_table(["Run", "Benchmark", "Protocol", "Metric", "Score [CI]", "Chance", "Items", "Answered",
                              "Invalid", "Missing"],
                             rows))


def console_report(runs: Sequence[ReportRun], *, full: bool = False) -> str:
    """Every run's table (every metric where ``full``), then the summary across them when there are several."""
    parts = [run_table(r, full=full) for r in runs]
    if len(runs) > 1:
        parts.append(summary_table(runs))
    return "\n\n".join(parts)
