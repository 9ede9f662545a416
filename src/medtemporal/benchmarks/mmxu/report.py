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

from collections.abc import Mapping, Sequence
from typing import Any

from medtemporal.audit.core import POOLED
from medtemporal.benchmarks.mmxu.release import CONTENT_TYPES, TASK
from medtemporal.benchmarks.mmxu.published import NONE, TABLES
from medtemporal.report.family import (
    DASH,
    READER_NAMES,
    FamilyReport,
    Level,
    Panel,
    ReportRun,
    cell,
    grouped_bars,
    markdown_table,
    published_section,
    reader_cell,
)

COLUMNS = (("Overall", "overall", POOLED), *((t, f"subtype:{t}", t) for t in CONTENT_TYPES))
"""(column, score group, audit row) of every table and of the figure."""
OURS = (("Accuracy where the blind reader is wrong (ours)", "mmxu_blind_hard_accuracy"),
        ("Blind-adjusted accuracy (ours)", "mmxu_blind_adjusted"))


def blind_rows(ctx: FamilyReport) -> dict[str, Mapping[str, Any]]:
    """The audit row per content type (and `POOLED`) of the runs' benchmark ({} when not audited)."""
    return {a: row for _, _, a in COLUMNS if (row := ctx.audit_row(TASK, a)) is not None}


def blind_reader(ctx: FamilyReport) -> str:
    """The reader whose held-out picks the build stored (``config.blind_reader``; a build that predates it stored
    the option classifier's)."""
    return str(ctx.benchmark.manifest.config.get("blind_reader") or "classifier")


def score_table(runs: Sequence[ReportRun], metric: str, blind: Mapping[str, Mapping[str, Any]] | None = None,
                reader: str = "classifier") -> str:
    """One row per run (``metric`` per column, with intervals), then chance and blind-reader (``reader``) rows if
    ``blind`` is given."""
    rows = []
    for run in runs:
        overall = run.scores.score("overall", metric)
        rows.append([run.label, *(cell(run.scores.score(g, metric), ci=True) for _, g, _ in COLUMNS),
                     str(overall.invalid) if overall else DASH, str(overall.missing) if overall else DASH])
    if blind is not None:
        rows.append(["Chance", *(cell(blind[a]["chance"]) if a in blind else DASH for _, _, a in COLUMNS), "", ""])
        rows.append([f"Blind reader (text only: {READER_NAMES.get(reader, reader)})",
                     *(reader_cell((blind.get(a) or {}).get(reader)) for _, _, a in COLUMNS), "", ""])
    return markdown_table(["System", *(c for c, _, _ in COLUMNS), "Invalid", "Missing"], rows)


def accuracy_png(runs: Sequence[ReportRun], blind: Mapping[str, Mapping[str, Any]], reader: str = "classifier") -> bytes:
    """Grouped bars (column × run) of accuracy with intervals; marks per group for the blind reader (``reader``,
    whose picks the build stored) and chance; one legend above the plot."""
    rows = [blind.get(a) for _, _, a in COLUMNS]
    levels = [Level(f"blind reader ({READER_NAMES.get(reader, reader)})",
                    [r[reader]["accuracy"] if r and reader in r else None for r in rows], dashed=False),
              Level("chance", [r["chance"] if r and reader in r else None for r in rows])]
    panel = Panel([c for c, _, _ in COLUMNS], [[run.scores.score(g, "accuracy") for _, g, _ in COLUMNS] for run in runs],
                  "accuracy (%)", levels=levels)
    return grouped_bars(runs, [panel], title="MMXU: accuracy by content type")


def write_mmxu_report(ctx: FamilyReport) -> None:
    """Write ``mmxu_tables.md`` and ``mmxu_accuracy.png`` for the runs."""
    runs = ctx.runs
    blind, reader = blind_rows(ctx), blind_reader(ctx)
    note = (f"Blind reader: the audit's {READER_NAMES.get(reader, reader)} reader, the best of its three on all "
            "items, fitted on other patients (5-fold GroupKFold) across content types, which no model sees "
            "(`medtemporal audit`); the build stored its held-out picks. Chance is one in four."
            if blind else "The benchmark's manifest holds no audit (built with --no-audit): no blind reader to "
            "compare with.")
    parts = ["# MMXU", "## Accuracy by content type", score_table(runs, "accuracy", blind or None, reader), note]
    for title, metric in OURS:
        parts += [f"## {title}", score_table(runs, metric)]
    parts.append("Ours, not the paper's: the blind reader's held-out pick of each item is stored in the benchmark "
                 "(`meta.blind_pick`); see docs/mmxu.md for the definitions.")
    audit = ctx.audit_table(TASK, "Content type", lambda s: "Overall" if s == POOLED else s)
    if audit is not None:
        parts += ["## Blind-solvability audit by content type", audit]
    figure = ctx.write("accuracy.png", accuracy_png(runs, blind, reader))
    parts += ["## Headline figure", f"![accuracy by content type]({figure.name})",
              published_section(TABLES, runs, none=NONE)]
    ctx.write("tables.md", "\n\n".join(parts) + "\n")
