"""ELTLM's own report: Table 2 layout, the sequence-length figure (Fig. 3) and ablation deltas.

* Main table: ROUGE-L F1, judge Accuracy and Completeness for Perception and
  Reasoning (× 100, patient-clustered 95% CIs), with each run's unparseable
  verdicts, and the judge's calibration row (reference answers, empty answer).
* Sequence length: judge Accuracy and Completeness by number of studies
  (subtypes ``2_studies`` … ``5_studies``, both tasks together), table and PNG.
* Image order: per benchmark, the order its images are in (``date`` or
  ``file``) and how many items would be shown in another order the other way
  (``meta["date_order_differs"]``), with each run's metrics on those items and
  on the rest: where a reference was written against the other order, the
  first group scores lower (``docs/eltlm.md``, known risks).
* Ablations: each run whose protocol is not ``direct`` is paired with the
  direct run of the same model, benchmark and judge; the per-item differences
  (ablation − direct) are averaged and bootstrapped over patients
  (`cluster_bootstrap`), over the items both runs had judged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from medtemporal.benchmarks.eltlm.metrics import rouge_l_f1_of
from medtemporal.errors import InvalidInputError
from medtemporal.benchmarks.eltlm.published import TABLES
from medtemporal.report.family import (
    DASH, MAX_WIDTH_IN, FamilyReport, ReportRun, caution, cell, figure_png, legend_columns, markdown_table,
    protocol_label, published_section, pyplot,
)
from medtemporal.scoring.ci import cluster_bootstrap
from medtemporal.scoring.judge import stored_verdicts

TASKS = (("perception", "Perception"), ("reasoning", "Reasoning"))
MAIN = (("rouge_l_f1", "ROUGE-L"), ("judge_accuracy", "Accuracy"), ("judge_completeness", "Completeness"))
LENGTHS = ("2_studies", "3_studies", "4_studies", "5_studies")


def _cell(run: ReportRun, group: str, metric: str) -> str:
    return cell(run.scores.score(group, metric), ci=True)  # ROUGE-L and the judge's shares on one scale, × 100


def main_table(runs: Sequence[ReportRun]) -> str:
    """Table 2 layout: one row per run, ROUGE-L / Accuracy / Completeness per task, unparseable verdicts."""
    header = ["Model", *(f"{t} {m}" for _, t in TASKS for _, m in MAIN), "Unparseable"]
    rows = []
    for run in runs:
        judge = run.scores.judge or {}
        bad = judge.get("counts", {}).get("unparseable")
        rows.append([run.label, *(_cell(run, f"task:{task}", metric) for task, _ in TASKS for metric, _ in MAIN),
                     DASH if bad is None else str(bad)])
    return markdown_table(header, rows)


def calibration_table(runs: Sequence[ReportRun]) -> str:
    """The judge on the reference answers (≈ 1/1 expected) and on an empty answer (0/0 expected)."""
    rows = []
    for run in runs:
        judge = run.scores.judge
        if not judge:
            continue
        for kind in ("reference", "empty"):
            c = judge["calibration"][kind]
            rows.append([run.label, judge["uri"], kind, *(cell(c[k]) for k in ("accuracy", "completeness")),
                         str(c["n"]), str(c["unparseable_or_error"])])
    if not rows:
        return "No run was scored with a judge (`medtemporal score RUN --judge URI`)."
    return markdown_table(["Run", "Judge", "Answer judged", "Accuracy", "Completeness", "n", "Unparseable"], rows)


def length_table(runs: Sequence[ReportRun]) -> str:
    """Judge Accuracy / Completeness (or ROUGE-L without a judge) by number of studies."""
    header = ["Model", "Metric", *(n.split("_")[0] + " studies" for n in LENGTHS)]
    rows = [[run.label, metric, *(_cell(run, f"subtype:{n}", metric) for n in LENGTHS)]
            for run in runs for metric in _length_metrics(run)]
    return markdown_table(header, rows)


def _length_metrics(run: ReportRun) -> list[str]:
    return ["judge_accuracy", "judge_completeness"] if run.scores.judge else ["rouge_l_f1"]


def length_figure(runs: Sequence[ReportRun]) -> bytes:
    """Fig. 3: each run's scores against the number of studies with CI bars, one panel per metric, the runs
    named in a legend above the panels."""
    metrics = list(dict.fromkeys(m for run in runs for m in _length_metrics(run)))
    width = min(MAX_WIDTH_IN, 1.0 + 4.5 * len(metrics))
    fig, axes = pyplot().subplots(1, len(metrics), figsize=(width, 3.6), squeeze=False, sharey=True,
                                  layout="constrained")
    x = np.arange(2, 2 + len(LENGTHS))
    for ax, metric in zip(axes[0], metrics):
        for k, run in enumerate(runs):
            if metric not in _length_metrics(run):
                continue
            scores = [run.scores.score(f"subtype:{n}", metric) for n in LENGTHS]
            y = np.array([s.value if s else np.nan for s in scores])
            lo = np.array([s.value - s.ci_low if s and s.ci_low is not None else 0 for s in scores])
            hi = np.array([s.ci_high - s.value if s and s.ci_high is not None else 0 for s in scores])
            ax.errorbar(x + 0.06 * (k - (len(runs) - 1) / 2), y, yerr=[np.nan_to_num(lo), np.nan_to_num(hi)],
                        marker="o", capsize=3, color=f"C{k % 10}", label=run.label)
        ax.set_xticks(x)
        ax.set_xlabel("studies per question")
        ax.set_title(metric, fontsize=10)
        ax.set_ylim(-0.02, 1.02)
    axes[0][0].set_ylabel("score (0-1)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=legend_columns(labels, width), frameon=False,
               fontsize=9, title="ELTLM by sequence length (Fig. 3 layout)", title_fontproperties={"size": 11})
    return figure_png(fig)


@dataclass(frozen=True)
class ItemValues:
    """Per-item values of one run: metric → item id → value, and item id → patient."""

    values: dict[str, dict[str, float]]
    patients: dict[str, str]
    differs: dict[str, bool | None]
    """Item id → whether its date order differs from its file order (None: unknown, no metadata)."""
    order: str | None
    """The benchmark's image order (``date`` or ``file``; None for a benchmark built before it was recorded)."""


def item_values(run: ReportRun) -> ItemValues:
    """ROUGE-L of the run's final answers and the verdicts of the run's judge, per item."""
    outcomes = run.outcomes.by_repeat[0]
    values = {"rouge_l_f1": {o.item.id: rouge_l_f1_of(o.item.reference or str(o.item.answer),
                                                      o.answer if isinstance(o.answer, str) else None)
                             for o in outcomes}}
    judge = run.scores.judge
    if judge:
        verdicts = stored_verdicts(run.folder, judge["id"])
        for metric, criterion in (("judge_accuracy", "accuracy"), ("judge_completeness", "completeness")):
            values[metric] = {o.item.id: float((verdicts[o.item.id].scores or {}).get(criterion, 0))
                              if o.item.id in verdicts else 0.0
                              for o in outcomes if o.item.id in verdicts or o.status == "missing"}
    return ItemValues(values, {o.item.id: o.item.cluster for o in outcomes},
                      {o.item.id: o.item.meta.get("date_order_differs") for o in outcomes},
                      run.benchmark.manifest.config.get("order"))


def _values(run: ReportRun, cache: dict[Path, ItemValues]) -> ItemValues:
    """`item_values` of ``run``, read once per run folder."""
    if run.path not in cache:
        cache[run.path] = item_values(run)
    return cache[run.path]


def order_table(runs: Sequence[ReportRun], cache: dict[Path, ItemValues] | None = None) -> str:
    """Per run: the benchmark's image order, how many items the other order would rearrange, and the mean of
    each metric on those items and on the rest."""
    cache = {} if cache is None else cache
    rows = []
    for run in runs:
        try:
            v = _values(run, cache)
        except InvalidInputError as exc:  # the benchmark folder moved: the other sections do not need it
            rows.append([run.label, DASH, DASH, f"benchmark not readable: {exc}"])
            continue
        known = {i: d for i, d in v.differs.items() if d is not None}
        counted = f"{sum(known.values())} of {len(v.differs)}" if known else f"unknown of {len(v.differs)}"
        cells = []
        for metric, label in MAIN:
            per = v.values.get(metric, {})
            groups = [[per[i] for i, d in known.items() if d is flag and i in per] for flag in (True, False)]
            if any(groups):
                cells.append(f"{label} " + " / ".join(f"{cell(float(np.mean(g)))} (n={len(g)})" if g else DASH
                                                      for g in groups))
        rows.append([run.label, v.order or DASH, counted, "; ".join(cells) or DASH])
    return markdown_table(["Run", "Images in", "Items whose date and file orders differ",
                           "Orders differ / agree"], rows)


def ablation_table(runs: Sequence[ReportRun], *, resamples: int = 2000, seed: int = 0,
                   cache: dict[Path, ItemValues] | None = None) -> str:
    """Ablation − direct per metric, mean of paired per-item differences with a patient-clustered 95% CI
    (``cache``: per-item values already read, by run folder)."""
    rows = []
    cache = {} if cache is None else cache
    for run in runs:
        if run.scores.run.protocol == "direct":
            continue
        base = next((r for r in runs if r.scores.run.protocol == "direct"
                     and r.scores.run.model == run.scores.run.model
                     and r.scores.run.items_sha256 == run.scores.run.items_sha256
                     and (r.scores.judge or {}).get("id") == (run.scores.judge or {}).get("id")), None)
        if base is None:
            continue
        a = _values(run, cache)
        b = _values(base, cache)
        for metric, label in MAIN:
            shared = sorted(a.values.get(metric, {}).keys() & b.values.get(metric, {}).keys())
            if not shared:
                continue
            diff = np.array([a.values[metric][i] - b.values[metric][i] for i in shared])
            est = cluster_bootstrap(diff, [a.patients[i] for i in shared], resamples=resamples, rng=seed,
                                    label=f"{label} delta")
            ci = f" [{100 * est.low:+.1f}, {100 * est.high:+.1f}]" if est.low is not None else ""  # signed points
            rows.append([run.label, protocol_label(run.scores), label, f"{100 * est.value:+.1f}{ci}",
                         str(len(shared)), str(est.clusters)])
    if not rows:
        return "No ablation run with a matching direct run (same model, benchmark and judge)."
    return markdown_table(["Model", "Protocol", "Metric", "Δ vs direct [95% CI]", "Items", "Patients"], rows)


def write_eltlm_report(ctx: FamilyReport) -> None:
    """Write ``eltlm_tables.md``, ``eltlm_lengths.png`` and ``eltlm_judges.json``."""
    runs = ctx.runs
    cache: dict[Path, ItemValues] = {}
    lengths = ctx.write("lengths.png", length_figure(runs))
    text = (
        "# ELTLM\n\nValues × 100 (%; ROUGE-L and the judge's shares alike) with patient-clustered 95% CIs; "
        "unparseable judge verdicts are left out of Accuracy and Completeness and counted apart.\n\n"
        f"## Main results (Table 2 layout)\n\n{main_table(runs)}\n\n"
        f"## Judge calibration\n\n{calibration_table(runs)}\n\n"
        f"## By sequence length (Fig. 3)\n\n{length_table(runs)}\n\n![lengths]({lengths.name})\n\n"
        "## Image order (date vs file)\n\nThe release lists each item's studies by id; the images are shown in "
        "date order unless the benchmark was built with `--order file`. On items whose two orders differ, a "
        "reference written against the other order names the exams differently (docs/eltlm.md).\n\n"
        f"{order_table(runs, cache)}\n\n"
        f"## Ablations (paired, clustered by patient)\n\n{ablation_table(runs, cache=cache)}\n\n"
        + published_section(TABLES, runs, cautions=lambda run: caution(
            run, lambda m: "official" in m.config, "the paper's released test.json"))
    )
    ctx.write("tables.md", text)
    ctx.write("judges.json", json.dumps({r.label: r.scores.judge for r in runs}, indent=2) + "\n")
