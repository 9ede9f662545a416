"""Reports: Markdown, CSV and self-contained HTML tables and charts from runs' ``scores.json``.

``write_report(["runs/r1"])`` writes ``runs/r1/report.md``, ``report.csv`` and
``report.html``, scoring the run first if its scores are missing or stale. When
every run is of one benchmark whose `BenchmarkSpec.report` is set, that writer
adds the benchmark's own paper-layout tables and plots beside them (written by
the family's package under ``medtemporal.benchmarks``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable, Sequence

from medtemporal.audit import audit_html, audit_markdown
from medtemporal.benchmark import MANIFEST, spec
from medtemporal.errors import InvalidInputError
from medtemporal.report.html import html_page
from medtemporal.report.plots import family_charts
from medtemporal.report.tables import ReportRun, csv_text, headline, markdown, metric_names, report_runs
from medtemporal.scoring.runs import needs_scoring, read_scores, score_run

FORMATS = ("md", "csv", "html", "png")
DEFAULT_FORMATS = ("md", "csv", "html")


def load_runs(run_dirs: Sequence[str | Path], *, rescore: bool = True) -> list[ReportRun]:
    """Read each run's ``scores.json``, scoring it first where missing or older than its predictions."""
    paths = [Path(p) for p in run_dirs]
    if not paths:
        raise InvalidInputError("No run folders given; pass at least one folder written by `medtemporal run`.")
    if rescore:
        for path in paths:
            if needs_scoring(path):
                score_run(path)
    return report_runs(paths, [read_scores(p) for p in paths])


def parse_formats(text: str | Sequence[str]) -> tuple[str, ...]:
    """``"md,csv"`` → ``("md", "csv")``, refusing unknown formats with one clear sentence."""
    names = [f.strip().lower() for f in (text.split(",") if isinstance(text, str) else text) if f.strip()]
    unknown = [f for f in names if f not in FORMATS]
    if unknown or not names:
        raise InvalidInputError(
            f"Unknown report format {', '.join(unknown) or '(none)'}; use any of {','.join(FORMATS)}."
        )
    return tuple(dict.fromkeys(names))


def write_report(
    run_dirs: Sequence[str | Path], out: str | Path | None = None, formats: Sequence[str] = DEFAULT_FORMATS
) -> list[Path]:
    """Write ``report.<fmt>`` for the runs together into ``out``, or into each run folder.

    Args:
        run_dirs: Run folders; stale or missing scores are computed first.
        out: Output folder; None writes the same report into every run folder.
        formats: Any of ``md``, ``csv``, ``html`` and ``png`` (one chart per family and metric).

    Returns:
        The files written, the benchmark's own report files included.
    """
    formats = parse_formats(formats)
    runs = load_runs(run_dirs)
    contents: dict[str, bytes] = {}
    audits = _audits(runs)
    if "md" in formats:
        contents["report.md"] = "\n".join([markdown(runs), *(audit_markdown(a, t) for t, a in audits)]).encode("utf-8")
    if "csv" in formats:
        contents["report.csv"] = csv_text(runs).encode("utf-8")
    charts = {m: family_charts(runs, m) for m in metric_names(runs)} if {"html", "png"} & set(formats) else {}
    if "html" in formats:
        page = html_page(runs, charts)
        sections = "".join(audit_html(a, t) for t, a in audits)
        contents["report.html"] = page.replace("</body>", sections + "</body>", 1).encode("utf-8")
    if "png" in formats:
        for metric, pngs in charts.items():
            for family, png in pngs.items():
                contents[f"report_{metric}_{_safe(family)}.png"] = png
    targets = [Path(out)] if out is not None else [r.path for r in runs]
    extra = _benchmark_report(runs)
    extra_files: list[Path] | None = None
    written = []
    for folder in targets:
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in contents.items():
            tmp = folder / (name + ".tmp")
            tmp.write_bytes(data)
            tmp.replace(folder / name)
            written.append(folder / name)
        if extra is None:
            continue
        if extra_files is None:  # written once, then copied: the same runs give the same files
            extra_files = extra([r.path for r in runs], folder)
            written += extra_files
        else:
            for path in extra_files:
                shutil.copyfile(path, folder / path.name)
                written.append(folder / path.name)
    return written


def _benchmark_report(runs: Sequence[ReportRun]) -> Callable[[Sequence[Path], Path], list[Path]] | None:
    """The benchmark's own report writer when every run is of one benchmark that has one."""
    names = {r.scores.run.get("benchmark") for r in runs}
    if len(names) != 1 or None in names:
        return None
    return spec(str(names.pop())).report


def _audits(runs: Sequence[ReportRun]) -> list[tuple[str, dict]]:
    """(title, audit) of each distinct benchmark of the runs whose manifest holds a blind-solvability audit."""
    out = []
    for path in dict.fromkeys(str(r.scores.run.get("benchmark_path") or "") for r in runs):
        manifest = Path(path) / MANIFEST
        if path and manifest.is_file():
            audit = json.loads(manifest.read_text(encoding="utf-8")).get("audit")
            if audit:
                out.append((f"Blind-solvability audit of {Path(path).name} (from its manifest)", audit))
    return out


def _safe(name: str) -> str:
    """``name`` with every character but letters, digits, ``-`` and ``_`` replaced by ``_`` (for file names)."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


__all__ = ["FORMATS", "ReportRun", "headline", "load_runs", "parse_formats", "write_report"]
