"""The family's report: every metric with its interval on all items, with-prior and no-prior items, the
copy-prior baseline as the reference row; the side-by-side viewer; each run's reports as the field's CSVs.

Files (each prefixed ``longitudinal-rrg_``):

* ``tables.md`` — the test set as built (its size beside the release's 2,347 / 1,624, the prior rule, what was
  left out); per task and metric group (lexical on R2Gen-cleaned text, temporal, clinical, lexical on the text as
  written), one table: the copy-prior baseline first and marked as the reference, each run on all items, on
  with-prior and on no-prior items, a column per metric with its 95% interval clustered by patient; then each
  run minus copy-prior on the with-prior items, paired by item (the same patients resampled for both runs):
  what a model adds over restating the prior; the audit's text-only floor.
* ``viewer.html`` (+ its data blocks) — `viewer`: prior study, current study and each run's report side by
  side, temporal words marked.
* ``<run>_cxrmate.csv``, ``<run>_mlrg.csv`` — `exports`: each run's generated reports in CXRMate's and MLRG's
  released shapes.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from medtemporal.benchmarks.longitudinal_rrg.baselines import REFERENCE
from medtemporal.benchmarks.longitudinal_rrg.exports import cxrmate_csv, mlrg_csv
from medtemporal.benchmarks.longitudinal_rrg.viewer import RunAnswers, viewer_files
from medtemporal.benchmarks.longitudinal_rrg.published import TABLES
from medtemporal.report.family import FamilyReport, ReportRun, caution, cell, markdown_table, published_section
from medtemporal.schema import Item
from medtemporal.scoring.clinical import CXR_CLINICAL, LEXICAL_R2GEN, LEXICAL_RAW, TEMPORAL
from medtemporal.scoring.compare import paired_bootstrap, per_item, stored_green
from medtemporal.scoring.metrics import UNAVAILABLE

COLUMNS = (("all items", "task:{task}"), ("with prior", "subtypes:{task}/With prior"),
           ("no prior", "subtypes:{task}/No prior"))
"""Each task's three rows per run and their score groups (`PRIOR_COLUMNS` of the spec)."""
GROUPS = (("Lexical, R2Gen-cleaned text (the R2Gen lineage's numbers)", LEXICAL_R2GEN), ("Temporal", TEMPORAL),
          ("Clinical (scored on request: `medtemporal score RUN --metrics ...`)", CXR_CLINICAL),
          ("Lexical, text as written", LEXICAL_RAW))
"""The metric groups, one table each, in order."""
DELTA = ("r2gen_bleu_4", "r2gen_meteor", "r2gen_rouge_l", "r2gen_cider", "temporal_entity_f1", "chexbert_f1_14_micro",
         "radgraph_f1_partial", "ratescore", "inv_radcliq_v1", "green_score")
"""The metrics of the paired differences from copy-prior, where the runs were scored with them."""
RELEASE = {"findings": "2,347 studies of 289 patients (3,858 images)", "impression": "1,624 studies"}
"""The common test set's size on the release (FACTS §6.1), for each task."""


def ordered(runs: Sequence[ReportRun]) -> list[ReportRun]:
    """The runs with the copy-prior baseline first (the reference row), the others in the report's order."""
    return sorted(runs, key=lambda r: r.scores.run.model != REFERENCE)


def _is_reference(run: ReportRun) -> bool:
    return run.scores.run.model == REFERENCE


def _scored(runs: Sequence[ReportRun], task: str, names: Sequence[str]) -> list[str]:
    """The metrics of ``names`` some run has a score of for ``task``, in that order."""
    group = f"task:{task}"
    return [m for m in names if any(r.scores.score(group, m) is not None for r in runs)]


def _value(run: ReportRun, group: str, metric: str) -> str:
    score = run.scores.score(group, metric)
    if run.scores.metrics.get(metric, {}).get("percent"):
        return cell(score, ci=True)
    return cell(score, scale=1.0, digits=3, ci=True)


def score_table(runs: Sequence[ReportRun], task: str, metrics: Sequence[str]) -> str:
    """One metric group of ``task`` as a Markdown table: each run on all items, with-prior and no-prior items."""
    rows = []
    for run in runs:
        label = f"{run.label} (reference)" if _is_reference(run) else run.label
        for name, group in COLUMNS:
            group = group.format(task=task)
            n = next((s.n for s in run.scores.scores if s.group == group), 0)
            rows.append([label, f"{name} (n = {n})", *(_value(run, group, m) for m in metrics)])
    return markdown_table(["Run", "Items", *metrics], rows)


def delta_table(runs: Sequence[ReportRun], task: str) -> str | None:
    """Each run minus copy-prior on the with-prior items of ``task`` both answered, paired by item, with the
    interval of a bootstrap over patients; None without a copy-prior run or another run. A metric the reference
    cannot be scored with here (no encoder, no stored GREEN verdicts) is left out, a run's is "unavailable"."""
    reference = next((r for r in runs if _is_reference(r)), None)
    others = [r for r in runs if r is not reference]
    metrics = [m for m in _scored(runs, task, DELTA)
               if all((s := r.scores.score(f"task:{task}", m)) is not None and not s.unavailable for r in runs)]
    if reference is None or not others or not metrics:
        return None
    base = {m: _per_item(reference, m) for m in metrics}
    metrics = [m for m in metrics if base[m] is not None]
    wanted = {i.id: i.cluster for i in reference.outcomes.items if i.task == task and i.subtype == "with_prior"}
    rows = []
    for run in others:
        row = [run.label]
        for name in metrics:
            got = _per_item(run, name)
            at_b, stats_b = base[name]  # type: ignore[misc]
            ids = [] if got is None else [i for i in wanted if i in got[0] and i in at_b]
            if got is None or not ids:
                row.append(cell(None, unavailable=got is None))
                continue
            at_a, stats_a = got
            diff, low, high = paired_bootstrap(stats_a[[at_a[i] for i in ids]], stats_b[[at_b[i] for i in ids]],
                                               [wanted[i] for i in ids], name, rng=0)
            scale, digits = (100.0, 1) if run.scores.metrics.get(name, {}).get("percent") else (1.0, 3)
            interval = "" if low is None or high is None else f" [{low * scale:+.{digits}f}, {high * scale:+.{digits}f}]"
            row.append(f"{diff * scale:+.{digits}f}{interval}")
        rows.append(row)
    return markdown_table(["Run", *metrics], rows) if metrics else None


def _per_item(run: ReportRun, name: str) -> tuple[dict[str, int], np.ndarray] | None:
    """The run's per-item statistics of metric ``name`` (its stored GREEN verdicts in force), None when it cannot
    be computed here."""
    try:
        with stored_green(run.path):
            return per_item(run.outcomes, name)
    except UNAVAILABLE:
        return None


def _test_set(ctx: FamilyReport) -> str:
    manifest = ctx.benchmark.manifest
    config = manifest.config
    left = ", ".join(f"{k} {v}" for k, v in manifest.exclusions.items()) or "none"
    return (f"Built from the {config.get('split', 'test')} split: {config.get('studies')} studies of "
            f"{config.get('patients')} patients ({config.get('images')} images), {config.get('with_prior')} with a "
            f"prior and {config.get('no_prior')} without (the release's common test set: {RELEASE['findings']}; "
            f"{RELEASE['impression']} with an impression). Prior ({config.get('prior_rule')}): "
            f"{config.get('prior_rule_text', '')}. Left out: {left}.")


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-").lower() or "run"


def _answers(run: ReportRun) -> list[tuple[Item, str | None]]:
    """(item, the scored text or None) of the run's first repeat."""
    return [(o.item, o.answer if isinstance(o.answer, str) else None) for o in run.outcomes.by_repeat[0]]


def _temporal_entity_f1(run: ReportRun) -> dict[str, float | None]:
    """Item id → the run's Temporal Entity F1 of the item (its first statistic: the per-item F1)."""
    if all(s.metric != "temporal_entity_f1" for s in run.scores.scores):
        return {}
    at, stats = per_item(run.outcomes, "temporal_entity_f1")
    return {item_id: float(np.asarray(stats[row]).ravel()[0]) for item_id, row in at.items()}


def write_longitudinal_rrg_report(ctx: FamilyReport) -> None:
    """The family's files (module doc)."""
    runs = ordered(ctx.runs)
    tasks = [t for t in ("findings", "impression") if any(r.scores.score(f"task:{t}", m) is not None for r in runs
                                                          for m in (*LEXICAL_R2GEN, *TEMPORAL))]
    parts = ["# Longitudinal report generation", "", _test_set(ctx), "",
             f"The first rows restate the prior report ({REFERENCE}): a model's score says what it adds over "
             "that only where it is higher. Cells: the score and its 95% interval, clustered by patient.", ""]
    for task in tasks:
        parts += [f"## {task}", ""]
        for title, names in GROUPS:
            metrics = _scored(runs, task, names)
            if metrics:
                parts += [f"### {task}: {title}", "", score_table(runs, task, metrics), ""]
        delta = delta_table(runs, task)
        if delta:
            parts += [f"### {task}: each run minus copy-prior on with-prior items (paired by item, 95% interval over "
                      "patients)", "", delta, ""]
    floor = ctx.floor_table()
    if floor:
        parts += ["## Text-only floor (the audit)", "", floor, ""]
    answers = [RunAnswers(r.label, {i.id: t for i, t in _answers(r)}, _temporal_entity_f1(r)) for r in runs]
    shown = {i.id for r in runs for i in r.outcomes.items}
    items = [i for i in ctx.benchmark.items if i.id in shown]
    for name, text in viewer_files(items, answers, ctx.benchmark.image_root, "viewer.html", ctx.file("")).items():
        ctx.write(name, text)
    parts += ["## Per item", "", f"[The side-by-side viewer]({ctx.file('viewer.html')}): the prior study, the current "
              "study and each run's report, temporal words marked.", ""]
    exports: list[str] = []
    for run in runs:
        pairs = _answers(run)
        for shape, writer in (("cxrmate", cxrmate_csv), ("mlrg", mlrg_csv)):
            exports.append(ctx.write(f"{_slug(run.label)}_{shape}.csv", writer(pairs)).name)
    parts += ["## Generated reports", "", "Each run's reports in CXRMate's (`findings,impression,study_id`) and "
              "MLRG's (`dicom_id,labels,report`) released CSV shapes: " + ", ".join(f"[{n}]({n})" for n in exports)
              + ".", ""]
    parts.append(published_section(TABLES, runs, cautions=lambda run: caution(
        run, lambda manifest: False, "these models' test sets (MLRG scores each image, Libra its own findings file)")))
    ctx.write("tables.md", "\n".join(parts))
