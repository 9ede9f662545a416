"""MMXU's own report: accuracy by content type beside what the text alone gives, and the headline figure.

``mmxu_tables.md`` holds

* the main table: accuracy overall and per ``content_type`` (the paper's metric, FACTS §5.3; its
  per-model table was not reachable, so the columns are the release's content types), with
  patient-clustered 95% intervals, invalid and missing answers, and rows for chance and for the blind
  reader (the audit's text classifier, from the benchmark's manifest);
* ours, beside it: accuracy on the items the blind reader gets wrong (``mmxu_blind_hard_accuracy``) and
  the blind-adjusted accuracy (``mmxu_blind_adjusted``), same columns (`metrics`);
* the blind-solvability audit per content type (both readers against chance).

``mmxu_accuracy.png`` is the headline figure: each run's accuracy overall and per content type with its
interval, the blind reader's accuracy and chance marked on every group.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from medtemporal.audit.core import POOLED
from medtemporal.benchmark import MANIFEST
from medtemporal.benchmarks.mmxu.release import CONTENT_TYPES, TASK
from medtemporal.report import load_runs
from medtemporal.report.plots import figure_png, pyplot
from medtemporal.report.tables import DASH, ReportRun, fmt_score, markdown_table

COLUMNS = (("Overall", "overall", POOLED), *((t, f"subtype:{t}", t) for t in CONTENT_TYPES))
"""(column, score group, audit row) of every table and of the figure."""
OURS = (("Accuracy where the blind reader is wrong (ours)", "mmxu_blind_hard_accuracy"),
        ("Blind-adjusted accuracy (ours)", "mmxu_blind_adjusted"))


def blind_rows(runs: Sequence[ReportRun]) -> dict[str, dict[str, Any]]:
    """The audit row per content type (and `POOLED`) of the runs' benchmark, from its manifest; {} when none."""
    for run in runs:
        path = Path(str(run.scores.run.get("benchmark_path") or "")) / MANIFEST
        if path.is_file():
            audit = json.loads(path.read_text(encoding="utf-8")).get("audit") or {}
            return {r["subtype"]: r for r in audit.get("subtypes", []) if r["task"] == TASK}
    return {}


def _pct(value: float | None) -> str:
    return DASH if value is None or math.isnan(value) else f"{100 * value:.1f}"


def _reader(row: dict[str, Any] | None, reader: str) -> str:
    if row is None:
        return DASH
    r = row[reader]
    return f"{_pct(r['accuracy'])} [{_pct(r['ci_low'])}, {_pct(r['ci_high'])}]"


def score_table(runs: Sequence[ReportRun], metric: str, blind: dict[str, dict[str, Any]] | None = None) -> str:
    """One row per run (``metric`` per column, with intervals), then chance and blind-reader rows if given."""
    rows = []
    for run in runs:
        overall = run.scores.score("overall", metric)
        rows.append([run.label, *(fmt_score(run.scores.score(g, metric), True) for _, g, _ in COLUMNS),
                     str(overall.invalid) if overall else DASH, str(overall.missing) if overall else DASH])
    if blind is not None:
        rows.append(["Chance", *(_pct(blind[a]["chance"]) if a in blind else DASH for _, _, a in COLUMNS), "", ""])
        rows.append(["Blind reader (text only)", *(_reader(blind.get(a), "classifier") for _, _, a in COLUMNS), "", ""])
    return markdown_table(["System", *(c for c, _, _ in COLUMNS), "Invalid", "Missing"], rows)


def audit_table(blind: dict[str, dict[str, Any]]) -> str:
    """Both blind readers per content type against chance, with the flag."""
    rows = [[c, str(blind[a]["n"]), _pct(blind[a]["chance"]), _reader(blind[a], "heuristic"),
             blind[a]["heuristic"]["rule"], _reader(blind[a], "classifier"),
             "BLIND-SOLVABLE" if blind[a]["flagged"] else "breakdown" if blind[a].get("breakdown") else "ok"]
            for c, _, a in COLUMNS if a in blind]
    return markdown_table(["Content type", "n", "Chance", "Heuristic (95% CI)", "Rule", "Classifier (95% CI)", "Flag"],
                          rows)


def accuracy_png(runs: Sequence[ReportRun], blind: dict[str, dict[str, Any]]) -> bytes:
    """Grouped bars (column × run) of accuracy with intervals; blind-reader and chance marks per group."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    width = 0.8 / max(1, len(runs))
    for k, run in enumerate(runs):
        xs, heights, low, high = [], [], [], []
        for x, (_, group, _) in enumerate(COLUMNS):
            s = run.scores.score(group, "accuracy")
            if s is None or math.isnan(s.value):
                continue
            xs.append(x - 0.4 + width * (k + 0.5))
            heights.append(100 * s.value)
            ci = s.ci_low is not None and s.ci_high is not None
            low.append(100 * (s.value - s.ci_low) if ci else 0.0)
            high.append(100 * (s.ci_high - s.value) if ci else 0.0)
        ax.bar(xs, heights, width * 0.92, yerr=[low, high], capsize=3, label=run.label, color=f"C{k % 10}")
    for x, (_, _, a) in enumerate(COLUMNS):
        row = blind.get(a)
        if row is None:
            continue
        ax.hlines(100 * row["classifier"]["accuracy"], x - 0.45, x + 0.45, colors="C3", linewidth=2,
                  label="blind reader (text only)" if x == 0 else None, zorder=3)
        ax.hlines(100 * row["chance"], x - 0.45, x + 0.45, colors="0.25", linestyles="dashed",
                  label="chance" if x == 0 else None, zorder=3)
    ax.set_xticks(range(len(COLUMNS)), [c for c, _, _ in COLUMNS], fontsize=8)
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 104)
    ax.set_title("MMXU: accuracy by content type")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return figure_png(fig)


def write_mmxu_report(run_dirs: Sequence[Path], out: Path) -> list[Path]:
    """Write ``mmxu_tables.md`` and ``mmxu_accuracy.png`` for the runs into ``out``."""
    runs = load_runs(run_dirs)
    blind = blind_rows(runs)
    note = ("Blind reader: the audit's TF-IDF + logistic-regression classifier over question and options, "
            "fitted on other patients (5-fold GroupKFold) across content types, which no model sees "
            "(`medtemporal audit`). Chance is one in four."
            if blind else "The benchmark's manifest holds no audit (built with --no-audit, or not found where the "
            "run recorded it): no blind reader to compare with.")
    parts = ["# MMXU", "## Accuracy by content type", score_table(runs, "accuracy", blind or None), note]
    for title, metric in OURS:
        parts += [f"## {title}", score_table(runs, metric)]
    parts.append("Ours, not the paper's: the blind reader's held-out pick of each item is stored in the benchmark "
                 "(`meta.blind_pick`); see docs/mmxu.md for the definitions.")
    if blind:
        parts += ["## Blind-solvability audit by content type", audit_table(blind)]
    parts += ["## Headline figure", "![accuracy by content type](mmxu_accuracy.png)"]
    out.mkdir(parents=True, exist_ok=True)
    files = {"mmxu_tables.md": ("\n\n".join(parts) + "\n").encode("utf-8"), "mmxu_accuracy.png": accuracy_png(runs, blind)}
    written = []
    for name, data in files.items():
        tmp = out / (name + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(out / name)
        written.append(out / name)
    return written
