"""MMXU's own report: accuracy by content type beside what the text alone gives, and the headline figure.

``mmxu_tables.md`` holds

* the main table: accuracy overall and per ``content_type`` (the paper's metric, FACTS §5.3; its
  per-model table was not reachable, so the columns are the release's content types), with
  patient-clustered 95% intervals, invalid and missing answers, and rows for chance and for the blind
  reader (the audit's reader whose held-out picks the build stored: the best of the task's row, named in
  the manifest's ``config.blind_reader``);
* ours, beside it: accuracy on the items the blind reader gets wrong (``mmxu_blind_hard_accuracy``) and
  the blind-adjusted accuracy (``mmxu_blind_adjusted``), same columns (`metrics`);
* the blind-solvability audit per content type (the three readers against chance).

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
from medtemporal.report.audit import READER_NAMES
from medtemporal.report.plots import FONT_PT, colour, figure_png, legend_columns, pyplot
from medtemporal.report.tables import DASH, ReportRun, fmt_score, markdown_table

COLUMNS = (("Overall", "overall", POOLED), *((t, f"subtype:{t}", t) for t in CONTENT_TYPES))
"""(column, score group, audit row) of every table and of the figure."""
OURS = (("Accuracy where the blind reader is wrong (ours)", "mmxu_blind_hard_accuracy"),
        ("Blind-adjusted accuracy (ours)", "mmxu_blind_adjusted"))


def blind_rows(runs: Sequence[ReportRun]) -> tuple[dict[str, dict[str, Any]], str]:
    """The audit row per content type (and `POOLED`) of the runs' benchmark, from its manifest ({} when none),
    and the reader whose picks the build stored (``config.blind_reader``; a build that predates it stored the
    option classifier's)."""
    for run in runs:
        path = Path(str(run.scores.run.get("benchmark_path") or "")) / MANIFEST
        if path.is_file():
            manifest = json.loads(path.read_text(encoding="utf-8"))
            audit = manifest.get("audit") or {}
            reader = (manifest.get("config") or {}).get("blind_reader") or "classifier"
            return {r["subtype"]: r for r in audit.get("subtypes", []) if r["task"] == TASK}, reader
    return {}, "classifier"


def _pct(value: float | None) -> str:
    return DASH if value is None or math.isnan(value) else f"{100 * value:.1f}"


def _reader(row: dict[str, Any] | None, reader: str) -> str:
    r = None if row is None else row.get(reader)
    if r is None:
        return DASH
    return f"{_pct(r['accuracy'])} [{_pct(r['ci_low'])}, {_pct(r['ci_high'])}]"


def score_table(runs: Sequence[ReportRun], metric: str, blind: dict[str, dict[str, Any]] | None = None,
                reader: str = "classifier") -> str:
    """One row per run (``metric`` per column, with intervals), then chance and blind-reader (``reader``) rows if
    ``blind`` is given."""
    rows = []
    for run in runs:
        overall = run.scores.score("overall", metric)
        rows.append([run.label, *(fmt_score(run.scores.score(g, metric), True) for _, g, _ in COLUMNS),
                     str(overall.invalid) if overall else DASH, str(overall.missing) if overall else DASH])
    if blind is not None:
        rows.append(["Chance", *(_pct(blind[a]["chance"]) if a in blind else DASH for _, _, a in COLUMNS), "", ""])
        rows.append([f"Blind reader (text only: {READER_NAMES.get(reader, reader)})",
                     *(_reader(blind.get(a), reader) for _, _, a in COLUMNS), "", ""])
    return markdown_table(["System", *(c for c, _, _ in COLUMNS), "Invalid", "Missing"], rows)


def audit_table(blind: dict[str, dict[str, Any]]) -> str:
    """The three blind readers per content type against chance, the best of each row, and the flag."""
    rows = [[c, str(blind[a]["n"]), _pct(blind[a]["chance"]), _reader(blind[a], "heuristic"),
             blind[a]["heuristic"]["rule"], _reader(blind[a], "classifier"), _reader(blind[a], "question"),
             READER_NAMES.get(blind[a].get("best", ""), DASH),
             "BLIND-SOLVABLE" if blind[a]["flagged"] else "breakdown" if blind[a].get("breakdown") else "ok"]
            for c, _, a in COLUMNS if a in blind]
    return markdown_table(["Content type", "n", "Chance", "Heuristic (95% CI)", "Rule", "Options (95% CI)",
                           "Question + options (95% CI)", "Best", "Flag"], rows)


def accuracy_png(runs: Sequence[ReportRun], blind: dict[str, dict[str, Any]], reader: str = "classifier") -> bytes:
    """Grouped bars (column × run) of accuracy with intervals; marks per group for the blind reader (``reader``,
    whose picks the build stored) and chance; one legend above the plot."""
    width_in = 6.5
    fig, ax = pyplot().subplots(figsize=(width_in, 3.6), layout="constrained")
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
        ax.bar(xs, heights, width * 0.92, yerr=[low, high], capsize=3, label=run.label, color=colour(k))
    marked = False
    for x, (_, _, a) in enumerate(COLUMNS):
        row = blind.get(a)
        if row is None or reader not in row:
            continue
        ax.hlines(100 * row[reader]["accuracy"], x - 0.45, x + 0.45, colors="black", linewidth=2,
                  label=None if marked else f"blind reader ({READER_NAMES.get(reader, reader)})", zorder=3)
        ax.hlines(100 * row["chance"], x - 0.45, x + 0.45, colors="0.25", linestyles="dashed",
                  label=None if marked else "chance", zorder=3)
        marked = True
    ax.set_xticks(range(len(COLUMNS)), [c for c, _, _ in COLUMNS])
    ax.tick_params(labelsize=FONT_PT)
    ax.set_ylabel("accuracy (%)", fontsize=FONT_PT)
    ax.set_ylim(0, 104)
    ax.spines[["top", "right"]].set_visible(False)
    handles, labels = ax.get_legend_handles_labels()
    runs_first = sorted(range(len(labels)), key=lambda i: labels[i] not in {r.label for r in runs})
    handles, labels = [handles[i] for i in runs_first], [labels[i] for i in runs_first]
    fig.legend(handles, labels, loc="outside upper center", ncol=legend_columns(labels, width_in), frameon=False,
               fontsize=FONT_PT, title="MMXU: accuracy by content type", title_fontproperties={"size": 11})
    return figure_png(fig)


def write_mmxu_report(run_dirs: Sequence[Path], out: Path) -> list[Path]:
    """Write ``mmxu_tables.md`` and ``mmxu_accuracy.png`` for the runs into ``out``."""
    runs = load_runs(run_dirs)
    blind, reader = blind_rows(runs)
    note = (f"Blind reader: the audit's {READER_NAMES.get(reader, reader)} reader, the best of its three on all "
            "items, fitted on other patients (5-fold GroupKFold) across content types, which no model sees "
            "(`medtemporal audit`); the build stored its held-out picks. Chance is one in four."
            if blind else "The benchmark's manifest holds no audit (built with --no-audit, or not found where the "
            "run recorded it): no blind reader to compare with.")
    parts = ["# MMXU", "## Accuracy by content type", score_table(runs, "accuracy", blind or None, reader), note]
    for title, metric in OURS:
        parts += [f"## {title}", score_table(runs, metric)]
    parts.append("Ours, not the paper's: the blind reader's held-out pick of each item is stored in the benchmark "
                 "(`meta.blind_pick`); see docs/mmxu.md for the definitions.")
    if blind:
        parts += ["## Blind-solvability audit by content type", audit_table(blind)]
    parts += ["## Headline figure", "![accuracy by content type](mmxu_accuracy.png)"]
    out.mkdir(parents=True, exist_ok=True)
    files = {"mmxu_tables.md": ("\n\n".join(parts) + "\n").encode("utf-8"), "mmxu_accuracy.png": accuracy_png(runs, blind, reader)}
    written = []
    for name, data in files.items():
        tmp = out / (name + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(out / name)
        written.append(out / name)
    return written
