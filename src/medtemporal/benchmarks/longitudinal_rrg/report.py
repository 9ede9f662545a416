"""The family's report: every metric with its interval on all items, with-prior and no-prior items, the
copy-prior baseline as the reference row; each run's reports as the field's CSVs.

Files (each prefixed ``longitudinal-rrg_``):

* ``tables.md`` — the test set as built (its size beside the release's 2,347 / 1,624, the prior rule, what was
  left out); per task, one table per column (all items, with prior, no prior): a row per run, the copy-prior
  baseline first and marked as the reference, a column per metric with its 95% interval clustered by patient;
  then each run's paired difference from copy-prior on the with-prior items (the same patients resampled for
  both runs), where the question is what a model adds over restating the prior; the audit's text-only floor.
* ``<run>_cxrmate.csv``, ``<run>_mlrg.csv`` — `exports`: each run's generated reports in CXRMate's and MLRG's
  released shapes.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from medtemporal.benchmarks.longitudinal_rrg.exports import cxrmate_csv, mlrg_csv
from medtemporal.report.family import FamilyReport, ReportRun, cell, markdown_table
from medtemporal.scoring.compare import paired_bootstrap, per_item

REFERENCE_MODEL = "longitudinal_rrg:copy-prior"
"""The run every table compares with: the prior report restated."""
COLUMNS = (("All items", "task:{task}"), ("With prior", "subtypes:{task}/With prior"),
           ("No prior", "subtypes:{task}/No prior"))
"""Each task's three columns and their score groups (`PRIOR_COLUMNS` of the spec)."""
RELEASE = {"findings": "2,347 studies of 289 patients (3,858 images)", "impression": "1,624 studies"}
"""The common test set's size on the release (FACTS §6.1), for each task."""
DELTA_METRICS = 5
"""How many of a task's metrics (in the spec's order) the paired differences from copy-prior show."""


def ordered(runs: Sequence[ReportRun]) -> list[ReportRun]:
    """The runs with the copy-prior baseline first (the reference row), the others in the report's order."""
    return sorted(runs, key=lambda r: r.scores.run.model != REFERENCE_MODEL)


def _label(run: ReportRun) -> str:
    return f"{run.label} (reference)" if run.scores.run.model == REFERENCE_MODEL else run.label


def _metrics(runs: Sequence[ReportRun], task: str) -> list[str]:
    """The metrics scored for ``task`` by any run, in the order the scores list them."""
    group = f"task:{task}"
    return list(dict.fromkeys(s.metric for r in runs for s in r.scores.scores if s.group == group))


def _value(run: ReportRun, group: str, metric: str) -> str:
    percent = bool(run.scores.metrics.get(metric, {}).get("percent"))
    score = run.scores.score(group, metric)
    return cell(score, ci=True) if percent else cell(score, scale=1.0, digits=3, ci=True)


def score_tables(runs: Sequence[ReportRun], task: str) -> str:
    """Markdown tables of ``task``: one per column (all items, with prior, no prior), a row per run."""
    metrics = _metrics(runs, task)
    parts = []
    for title, group in COLUMNS:
        group = group.format(task=task)
        n = next((s.n for r in runs for s in r.scores.scores if s.group == group), 0)
        rows = [[_label(r), *(_value(r, group, m) for m in metrics)] for r in runs]
        parts += [f"#### {task}: {title.lower()} (n = {n})", "", markdown_table(["Run", *metrics], rows), ""]
    return "\n".join(parts)


def delta_table(ctx: FamilyReport, runs: Sequence[ReportRun], task: str) -> str | None:
    """Each run minus copy-prior on the with-prior items of ``task`` both answered, paired by item, with the
    interval of a bootstrap over patients; None without a copy-prior run or another run."""
    reference = next((r for r in runs if r.scores.run.model == REFERENCE_MODEL), None)
    others = [r for r in runs if r is not reference]
    if reference is None or not others:
        return None
    metrics = _metrics(runs, task)[:DELTA_METRICS]
    base = ctx.outcomes(reference)
    wanted = {i.id: i.cluster for i in base.items if i.task == task and i.subtype == "with_prior"}
    rows = []
    for run in others:
        outcomes = ctx.outcomes(run)
        row = [run.label]
        for name in metrics:
            if any(r.scores.score(f"task:{task}", name) is None or r.scores.score(f"task:{task}", name).unavailable
                   for r in (run, reference)):
                row.append(cell(None, unavailable=True))
                continue
            at_a, stats_a = per_item(outcomes, name)
            at_b, stats_b = per_item(base, name)
            ids = [i for i in wanted if i in at_a and i in at_b]
            if not ids:
                row.append(cell(None))
                continue
            diff, low, high = paired_bootstrap(stats_a[[at_a[i] for i in ids]], stats_b[[at_b[i] for i in ids]],
                                               [wanted[i] for i in ids], name, rng=0)
            percent = bool(run.scores.metrics.get(name, {}).get("percent"))
            scale, digits = (100.0, 1) if percent else (1.0, 3)
            interval = "" if low is None else f" [{low * scale:+.{digits}f}, {high * scale:+.{digits}f}]"
            row.append(f"{diff * scale:+.{digits}f}{interval}")
        rows.append(row)
    return markdown_table(["Run", *metrics], rows)


def _test_set(ctx: FamilyReport) -> str:
    manifest = ctx.benchmark.manifest
    config = manifest.config
    left = ", ".join(f"{k} {v}" for k, v in manifest.exclusions.items()) or "none"
    return (f"Built from the {config.get('split', 'test')} split: {config.get('studies')} studies of "
            f"{config.get('patients')} patients ({config.get('images')} images), {config.get('with_prior')} with a "
            f"prior and {config.get('no_prior')} without (the release's common test set: {RELEASE['findings']}; "
            f"{RELEASE['impression']} with an impression). Prior: {config.get('prior_rule')}. Left out: {left}.")


def _floor(ctx: FamilyReport) -> str | None:
    rows = (ctx.audit or {}).get("text_floor", {}).get("rows", [])
    if not rows:
        return None
    body = [[r["task"], r["subtype"], str(r["n"]), r["baseline"], r["metric"],
             cell(r["value"], scale=1.0, digits=3) + ("" if r["ci_low"] is None else
                                                      f" [{r['ci_low']:.3f}, {r['ci_high']:.3f}]")] for r in rows]
    return markdown_table(["Task", "Subtype", "n", "Baseline", "Metric", "Value"], body)


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-").lower() or "run"


def _answers(run: ReportRun) -> list[tuple[Any, str | None]]:
    """(item, the scored text or None) of the run's first repeat."""
    outcomes = run.outcomes.by_repeat[0]
    return [(o.item, o.answer if isinstance(o.answer, str) else None) for o in outcomes]


def write_longitudinal_rrg_report(ctx: FamilyReport) -> None:
    """The family's files (module doc)."""
    runs = ordered(ctx.runs)
    tasks = [t for t in ("findings", "impression") if any(r.scores.score(f"task:{t}", m) for r in runs
                                                          for m in _metrics(runs, t))]
    parts = ["# Longitudinal report generation", "", _test_set(ctx), "",
             f"The first row restates the prior report ({REFERENCE_MODEL}): a model's score says what it adds over "
             "that only where it is higher. Cells: the score and its 95% interval, clustered by patient.", ""]
    for task in tasks:
        parts += [f"## {task}", "", score_tables(runs, task)]
        delta = delta_table(ctx, runs, task)
        if delta:
            parts += [f"#### {task}: each run minus copy-prior, with-prior items (paired by item, 95% interval over "
                      "patients)", "", delta, ""]
    floor = _floor(ctx)
    if floor:
        parts += ["## Text-only floor (the audit)", "", floor, ""]
    exports = []
    for run in runs:
        pairs = _answers(run)
        for shape, writer in (("cxrmate", cxrmate_csv), ("mlrg", mlrg_csv)):
            exports.append(ctx.write(f"{_slug(run.label)}_{shape}.csv", writer(pairs)).name)
    parts += ["## Generated reports", "", "Each run's reports in CXRMate's (`findings,impression,study_id`) and "
              "MLRG's (`dicom_id,labels,report`) released CSV shapes: " + ", ".join(f"[{n}]({n})" for n in exports)
              + ".", ""]
    ctx.write("tables.md", "\n".join(parts))
