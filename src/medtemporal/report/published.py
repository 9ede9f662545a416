"""The papers' published rows beside a user's runs, in the paper's table layout (`medtemporal.published`).

Each `PublishedTable` becomes a Markdown table: the paper's rows, marked *(published)*, in the paper's row
groups, then one row per run with its values in the paper's columns, units and
decimals (models as columns for a table the paper prints that way). A run's value comes from the family's
``values`` function (default `medtemporal.published.run_values`: the column's score group and metric). Above the
tables, one caution per run that cannot be compared with the paper's rows: a run on phantoms, or on another
test set than the paper's (`caution`, with the family's test of its manifest).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from medtemporal.benchmark import Manifest
from medtemporal.published import NoneFound, PublishedTable, run_values
from medtemporal.report.tables import cell, markdown_table

PUBLISHED = "published"
Values = Callable[[PublishedTable, Any], tuple[float | None, ...]]
"""(table, a report run) → its values in the table's columns (the paper's units)."""


def number(value: float | None, digits: int) -> str:
    """``value`` with the paper's decimals (the report's one cell formatter); a dash when there is none."""
    return cell(value, scale=1.0, digits=digits)


def caution(run: Any, papers: Callable[[Manifest], bool] | None = None,
            test_set: str = "the paper's test set") -> str | None:
    """The caution of a run that cannot be compared with the paper's rows: its benchmark was built from phantoms
    (licence ``synthetic``), or is not ``test_set`` (``papers(manifest)`` False: a build by rule, another split);
    None when it can.

    >>> from types import SimpleNamespace as NS
    >>> run = NS(label="m", benchmark=NS(manifest=NS(licence="credentialed", config={})))
    >>> caution(run, lambda m: "official" in m.config)[:40]
    'm ran on another test set than the paper'
    """
    manifest = run.benchmark.manifest
    if manifest.licence == "synthetic":
        return (f"{run.label} ran on phantoms (synthetic data), not on {test_set}: its numbers show the layout, "
                "not a result to compare.")
    if papers is not None and not papers(manifest):
        return (f"{run.label} ran on another test set than {test_set}: compare levels and layout, not the "
                "numbers row by row.")
    return None


def published_table(table: PublishedTable, runs: Sequence[Any], values: Values = lambda t, r: run_values(
        t, r.scores)) -> str:
    """``table``'s published rows, then the runs', as Markdown (module doc)."""
    run_rows = [(run.label, values(table, run)) for run in runs]
    if table.transposed:
        header = ["Task / metric", *(f"{r.model} ({PUBLISHED})" for r in table.rows), *(label for label, _ in run_rows)]
        rows = [[col.label, *(number(r.values[k], table.digits) for r in table.rows),
                 *(number(v[k], table.digits) for _, v in run_rows)] for k, col in enumerate(table.columns)]
        return markdown_table(header, rows)
    sectioned = any(r.section for r in table.rows)
    header = [*(["Group"] if sectioned else []), "Model", *(c.label for c in table.columns)]
    rows = [[*([r.section] if sectioned else []), f"{r.model} ({PUBLISHED})",
             *(number(v, table.digits) for v in r.values)] for r in table.rows]
    rows += [[*(["Your runs"] if sectioned else []), label, *(number(x, table.digits) for x in v)]
             for label, v in run_rows]
    return markdown_table(header, rows)


def published_section(tables: Sequence[PublishedTable], runs: Sequence[Any], *, none: NoneFound | None = None,
                      values: Values | None = None, cautions: Callable[[Any], str | None] = caution,
                      heading: str = "##") -> str:
    """Every table of the paper with the runs beside it, each under its heading with the paper's setting, and the
    cautions; where the paper prints none, the one sentence that says why."""
    parts = [f"{heading} Published results beside your runs", ""]
    if not tables:
        return "\n".join([*parts, f"No published rows: {none.reason if none else 'none were transcribed'}.", ""])
    notes = [c for c in (cautions(run) for run in runs) if c]
    parts += ["Rows and columns marked (published) are the paper's, as printed; the others are your runs, in the "
              "paper's units and decimals.", "",
              *(f"**Caution:** {note}" for note in notes), *([""] if notes else [])]
    for table in tables:
        parts += [f"{heading}# {table.paper[:1].upper()}{table.paper[1:]}, {table.name}: {table.caption}", "",
                  f"The paper's setting: {table.setting}.", "",
                  published_table(table, runs, values or (lambda t, r: run_values(t, r.scores))), ""]
    return "\n".join(parts)
