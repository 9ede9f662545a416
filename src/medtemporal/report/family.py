"""What a family's own report gets from the core: one `FamilyReport`, and every tool it writes with.

`medtemporal report` hands the family of its runs (when all are of one family whose
`BenchmarkSpec.report` is set) a `FamilyReport`: the loaded runs (`ReportRun`: scores, config, outcomes,
each read once), the benchmark they answered (read once, through the run folder's owner), the audit rows
of its manifest, the one cell formatter (`cell`), the one grouped-bars chart (`grouped_bars`) and the one
writer (`FamilyReport.write`, which names every file ``<family>_<name>`` and puts it in the report's
folder, committed with the rest of the report). A family's ``report.py`` imports this module alone from
``medtemporal.report``:

>>> from medtemporal.report.family import FamilyReport, cell, markdown_table
>>> def report(ctx: FamilyReport) -> None:
...     rows = [[run.label, cell(run.scores.score("overall", "accuracy"), ci=True)] for run in ctx.runs]
...     ctx.write("tables.md", "\\n\\n".join(["# Mine", markdown_table(["Run", "Accuracy (%)"], rows)]))

`family_report` writes one family's files for runs outside ``medtemporal report`` (tests, notebooks).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medtemporal.benchmark import Benchmark
from medtemporal.errors import InvalidInputError
from medtemporal.report.audit import HEADER as AUDIT_HEADER
from medtemporal.report.audit import FLOOR_HEADER, READER_NAMES, audit_rows, floor_rows, reader_cell
from medtemporal.report.escaping import data_block, html_text, inline_script, policy_meta, script_json
from medtemporal.report.loaded import ReportRun, load_runs, protocol_label
from medtemporal.report.plots import (
    FONT_PT,
    MAX_WIDTH_IN,
    Level,
    Panel,
    colour,
    figure_png,
    grouped_bars,
    legend_columns,
    pyplot,
)
from medtemporal.report.published import caution, published_section
from medtemporal.report.tables import DASH, UNAVAILABLE, cell, markdown_table, unavailable_notes, variant_runs


@dataclass
class FamilyReport:
    """The context of one family's report (`BenchmarkSpec.report` takes it and writes through it)."""

    family: str
    """The family's slug (`BenchmarkSpec.name`): the prefix of every file `write` makes."""
    runs: list[ReportRun]
    """The runs, in the report's order, with their row labels."""
    out: Path
    """The folder the files go to (the report's staging folder: they appear with the report, or not at all)."""
    written: list[Path] = field(default_factory=list)
    """The files written so far, in order."""

    @property
    def benchmark(self) -> Benchmark:
        """The benchmark the first run answered, read once for the whole report."""
        return self.runs[0].benchmark

    @property
    def audit(self) -> Mapping[str, Any] | None:
        """The blind-solvability audit in the benchmark's manifest (`medtemporal.audit`); None when not audited."""
        return self.benchmark.manifest.audit

    def audit_row(self, task: str, subtype: str) -> Mapping[str, Any] | None:
        """The audit's stored row of one subtype (readers' accuracies, chance, flag), None when not audited."""
        return next((r for r in (self.audit or {}).get("subtypes", ()) if r["task"] == task and r["subtype"] == subtype),
                    None)

    def audit_table(self, task: str | None = None, first: str = "Subtype",
                    name: Callable[[str], str] = str, with_task: bool = False) -> str | None:
        """The audit of ``task`` (all tasks when None) as `medtemporal audit` shows it, one row per subtype (named
        by ``name``, under the column ``first``; after a "Task" column ``with_task``): n, chance, each reader with
        its interval, the best and the flag; None when the manifest holds no audited subtype."""
        rows = [[*([r[0]] if with_task else []), name(r[1]), r[2], *r[4:]] for r in audit_rows(self.audit or {})
                if task is None or r[0] == task]
        header = [*(["Task"] if with_task else []), first, "n", "Chance", *AUDIT_HEADER[5:]]
        return markdown_table(header, rows) if rows else None

    def floor_table(self) -> str | None:
        """The audit's text-only floor of open answers (`medtemporal.audit.floor`) as `medtemporal audit` shows it;
        None when the manifest holds none."""
        rows = floor_rows(self.audit or {})
        return markdown_table(FLOOR_HEADER, rows) if rows else None

    def file(self, name: str) -> str:
        """The file name `write` gives ``name`` (``tables.md`` → ``mmxu_tables.md``), to link it from Markdown."""
        return f"{self.family}_{name}"

    def write(self, name: str, data: str | bytes) -> Path:
        """Write one file of the family's report (``<family>_<name>``; text as UTF-8) and return its path."""
        path = self.out / self.file(name)
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        self.written.append(path)
        return path


def family_report(run_dirs: Sequence[str | Path], out: str | Path) -> list[Path]:
    """Write the own report of the runs' family (scored runs) into ``out`` (outside ``medtemporal report``);
    returns the files written.

    Raises:
        InvalidInputError: the runs are of several families, or of one without its own report.
    """
    from medtemporal.contract import spec

    runs = load_runs(run_dirs)
    names = {r.scores.run.benchmark for r in runs}
    if len(names) != 1 or None in names:
        raise InvalidInputError(f"The runs are of {len(names)} benchmarks ({', '.join(map(str, names))}); pass runs "
                                "of one family.")
    name = str(names.pop())
    writer = spec(name).report_writer()
    if writer is None:
        raise InvalidInputError(f"The benchmark {name!r} has no report of its own; `medtemporal report` writes the "
                                "common one.")
    Path(out).mkdir(parents=True, exist_ok=True)
    context = FamilyReport(name, runs, Path(out))
    writer(context)
    return context.written


__all__ = [
    "DASH", "FONT_PT", "MAX_WIDTH_IN", "READER_NAMES", "UNAVAILABLE", "FamilyReport", "caution", "Level", "Panel", "ReportRun",
    "cell", "colour", "data_block", "family_report", "figure_png", "grouped_bars", "html_text", "inline_script",
    "legend_columns", "markdown_table", "policy_meta", "protocol_label", "published_section", "pyplot", "reader_cell",
    "script_json", "unavailable_notes", "variant_runs",
]
