"""A family's published tables on the leaderboard, each row in percent beside the runs, with the comparability of
every run against each table decided from data (`medtemporal.published.Conditions`).

A family gives its published rows in its spec (`medtemporal.contract.Published`: ``tables``; ``none`` where it has
none; ``conditions(manifest, config, scores)``, what a run measured on). A run is **comparable** with a table
when its test set, section and protocol equal the table's and it has a value in every column whose metric is the
paper's implementation (a column of another implementation has no counterpart and stays empty). A family without
``conditions`` marks no run comparable.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from medtemporal.published import (
    Conditions, PublishedTable, column_order, mismatches, percent, percent_digits, run_values,
)
from medtemporal.report.loaded import ReportRun


def comparability(table: PublishedTable, run: ReportRun, conditions: Callable[[Any, Any, Any], Conditions] | None
                  ) -> list[str]:
    """Why ``run`` is not comparable with ``table``'s rows, each reason in words; empty when it is."""
    if table.conditions is None or conditions is None:
        return ["the table's conditions are not recorded as data"]
    manifest = run.folder.benchmark_manifest(run.config)
    reasons = mismatches(table.conditions, conditions(manifest, run.config, run.scores))
    values = run_values(table, run.scores)
    missing = [c.label for c, v in zip(table.columns, values, strict=True) if c.metric is not None and v is None]
    if missing:
        reasons.append(f"metric implementation: no value for {', '.join(missing)} (score them with the paper's "
                       "implementation, `medtemporal score --metrics`)")
    if not any(c.metric for c in table.columns):
        reasons.append("metric implementation: no column of the table is implemented here")
    return reasons


def table_data(table: PublishedTable, runs: Sequence[ReportRun], labels: Sequence[str],
               conditions: Callable[[Any, Any, Any], Conditions] | None) -> dict[str, Any]:
    """One published table as the site shows it: columns, the published rows in %, each run's row in % with its
    comparability, and the table's provenance, conditions and note."""
    order = column_order(table)  # Overall first, as the report's tables
    digits = [percent_digits(table, k) for k in order]
    temperature = table.conditions.temperature if table.conditions else None
    run_rows = []
    for run, label in zip(runs, labels, strict=True):
        values = run_values(table, run.scores)
        reasons = comparability(table, run, conditions)
        run_temperature = (run.config.generation or {}).get("temperature") if run.config is not None else None
        run_rows.append({
            "label": label, "values": [percent(table, k, values[k]) for k in order],
            "comparable": not reasons, "reasons": reasons,
            "temperature": run_temperature,
            "temperature_note": (f"run at temperature {run_temperature}, rows at {temperature}"
                                 if temperature is not None and run_temperature is not None
                                 and float(run_temperature) != float(temperature) else ""),
        })
    return {
        "paper": table.paper, "name": table.name, "caption": table.caption, "setting": table.setting,
        "provenance": table.provenance, "note": table.note, "source": table.source,
        "conditions": None if table.conditions is None else {
            "test_set": table.conditions.test_set, "section": table.conditions.section,
            "protocol": table.conditions.protocol, "metrics": table.conditions.metrics,
            "temperature": table.conditions.temperature},
        "columns": [{"label": c.label, "metric": c.metric, "group": c.group, "variant": c.variant}
                    for c in (table.columns[k] for k in order)],
        "digits": digits,
        "rows": [{"model": r.model, "section": r.section, "line": r.line,
                  "values": [percent(table, k, r.values[k]) for k in order]} for r in table.rows],
        "runs": run_rows,
    }
