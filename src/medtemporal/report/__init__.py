"""Reports: Markdown, CSV and HTML tables and charts from runs' ``scores.json``.

``write_report(["runs/r1"])`` writes ``runs/r1/report.md``, ``report.csv`` and
``report.html`` with its ``assets/`` folder (charts, thumbnails and the viewer's
per-run data, loaded on demand) from scored runs (the report only reads: ``medtemporal report`` scores
stale runs first, `medtemporal.scoring.runs.score_stale`); ``single_file=True`` makes ``report.html`` self-contained instead. When
every run is of one benchmark whose `BenchmarkSpec.report` is set, that writer
adds the benchmark's own paper-layout tables and plots beside them (written by
the family's package under ``medtemporal.benchmarks``) through one `FamilyReport` (`medtemporal.report.family`).
Every section reads the runs it shows through `medtemporal.report.loaded`: each run's scores, config, outcomes
and benchmark once.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable, Sequence

from medtemporal.contract import spec
from medtemporal.errors import InvalidInputError
from medtemporal.report.audit import audit_html, audit_markdown
from medtemporal.report.assets import ASSETS, Assets
from medtemporal.report.family import FamilyReport
from medtemporal.report.glossary import glossary_markdown
from medtemporal.report.html import html_page
from medtemporal.report.loaded import ReportRun, load_runs
from medtemporal.report.plots import family_charts
from medtemporal.report.tables import csv_text, markdown, scored_metrics
from medtemporal.registry import names
from medtemporal.writes import OWNED, disk_error, record_owned, refuse_unowned

FORMATS = ("md", "csv", "html", "png")
DEFAULT_FORMATS = ("md", "csv", "html")


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
    run_dirs: Sequence[str | Path], out: str | Path | None = None, formats: Sequence[str] = DEFAULT_FORMATS,
    *, single_file: bool = False,
) -> list[Path]:
    """Write ``report.<fmt>`` for the runs together into ``out``, or into each run folder.

    Args:
        run_dirs: Scored run folders (`medtemporal.scoring.runs.score_stale` scores stale ones).
        out: Output folder; None writes the same report into every run folder.
        formats: Any of ``md``, ``csv``, ``html`` and ``png`` (one chart per family and metric).
        single_file: Make ``report.html`` self-contained (charts, thumbnails and viewer data inline)
            instead of loading them from ``assets/`` beside it.

    Returns:
        The files written (an ``assets`` folder as one entry), the benchmark's own report files included.
    """
    formats = parse_formats(formats)
    runs = load_runs(run_dirs)  # each run's config, outcomes and benchmark are then read once, by every section
    contents: dict[str, bytes] = {}
    audits = _audits(runs)
    if "md" in formats:
        contents["report.md"] = "\n".join([markdown(runs), glossary_markdown(runs),
                                           *(audit_markdown(a, t) for t, a in audits)]).encode("utf-8")
    if "csv" in formats:
        contents["report.csv"] = csv_text(runs).encode("utf-8")
    if "png" in formats:
        for metric in scored_metrics(runs):
            for family, png in family_charts(runs, metric).items():
                contents[f"report_{metric}_{_safe(family)}.png"] = png
    targets = [Path(out)] if out is not None else [r.path for r in runs]
    for folder in targets:
        if folder.exists() and not folder.is_dir():
            raise InvalidInputError(f"--out {folder} is a file; pass a folder for the report files.")
    family = _family(runs)

    def fill(staging: Path) -> None:
        """The benchmark's own files, then the HTML page that shows them inline, with its assets."""
        made: list[Path] = []
        if family is not None:
            context = FamilyReport(family, runs, staging)
            spec(family).report_writer()(context)  # type: ignore[misc]
            made = context.written
        if "html" in formats:
            assets = Assets(single_file)
            audit = "".join(audit_html(a, t, "audit" if k == 0 else f"audit-{k}") for k, (t, a) in enumerate(audits))
            charts = {m: family_charts(runs, m, legend=False) for m in scored_metrics(runs)}  # one legend in the page
            page = html_page(runs, charts, assets, family_files=made, extra=audit)
            for name, data in {**assets.files, "report.html": page.encode("utf-8")}.items():
                (staging / name).parent.mkdir(parents=True, exist_ok=True)
                (staging / name).write_bytes(data)

    generated: dict[str, bytes] | None = None  # the family files and HTML: made once, then copied
    written: list[Path] = []
    for folder in targets:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidInputError(f"{folder} cannot be created ({exc.strerror}); pass a folder you can write.") from None
        if generated is None:
            moved = _write_set(folder, contents, fill)
            generated = {rel: data for rel, data in _files(folder, moved).items() if rel not in contents}
        else:
            moved = _write_set(folder, {**contents, **generated})
        if "html" in formats and single_file and (folder / ASSETS).is_dir():  # an earlier report's: not needed now
            refuse_unowned(folder, [folder / ASSETS], action="remove")
            shutil.rmtree(folder / ASSETS, ignore_errors=True)
        written += moved
    return written


def _files(folder: Path, entries: Sequence[Path]) -> dict[str, bytes]:
    """Path relative to ``folder`` → content of every file in ``entries`` (folders read whole)."""
    out = {}
    for entry in entries:
        for path in sorted(entry.rglob("*")) if entry.is_dir() else [entry]:
            if path.is_file():
                out[path.relative_to(folder).as_posix()] = path.read_bytes()
    return out


STAGING, READY, OLD = ".report.staging", ".report.ready", ".report.old"
"""Hidden folders of a report set being written, of one complete and about to be moved into place, and of
the folders (``assets``) it replaces."""


def _write_set(folder: Path, contents: dict[str, bytes], fill: Callable[[Path], object] | None = None) -> list[Path]:
    """Write the report files into ``folder`` as one set: all the new ones, or (if killed) all the old ones.

    The files are written into a staging folder, which is renamed to ``.report.ready`` once complete
    (the commit point); they are then moved into place. `recover_report` finishes a set a kill left
    ready and removes one left half-written, and runs first here. Top-level files are synced to disk;
    the many small files under ``assets/`` are not (a lost one loses a thumbnail, not a result).
    """
    recover_report(folder)
    staging = folder / STAGING
    staging.mkdir()
    try:
        for name, data in contents.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("wb") as fh:
                fh.write(data)
                if "/" not in name:
                    fh.flush()
                    os.fsync(fh.fileno())
        if fill is not None:  # the benchmark's own report writer, writing into the staging folder
            fill(staging)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        error = disk_error(exc, folder)  # a full or read-only disk: one sentence; the old set is untouched
        if error is not None:
            raise error from None
        raise
    staging.rename(folder / READY)
    return _move_ready(folder)


def recover_report(folder: Path) -> None:
    """Finish a report set that a killed `write_report` left complete in ``folder``; drop a partial one."""
    shutil.rmtree(folder / STAGING, ignore_errors=True)
    if (folder / READY).is_dir():
        _move_ready(folder)
    shutil.rmtree(folder / OLD, ignore_errors=True)


def _move_ready(folder: Path) -> list[Path]:
    """Move every entry of ``folder/.report.ready`` into ``folder``, folders first (an old folder of the same name
    is moved aside into ``.report.old``, then removed), each rename atomic; then remove it."""
    ready = folder / READY
    _adopt_legacy_report(folder)
    try:  # nothing of the user's is replaced: every file the set replaces is one a report wrote
        refuse_unowned(folder, [folder / p.name for p in ready.iterdir() if (folder / p.name).exists()],
                       action="replace")
    except InvalidInputError:
        shutil.rmtree(ready, ignore_errors=True)
        raise
    moved = []
    for path in sorted(ready.iterdir(), key=lambda p: (not p.is_dir(), p.name)):
        target = folder / path.name
        if path.is_dir() and target.is_dir():
            (folder / OLD).mkdir(exist_ok=True)
            os.replace(target, folder / OLD / path.name)
        os.replace(path, target)
        moved.append(target)
    ready.rmdir()
    shutil.rmtree(folder / OLD, ignore_errors=True)
    record_owned(folder, moved, by="medtemporal report")
    return moved


LEGACY_MARK = b"<title>medtemporal report"
"""How a ``report.html`` written before reports listed their files (`medtemporal.writes.OWNED`) is recognised."""


def _adopt_legacy_report(folder: Path) -> None:
    """List as ours the files of a report an earlier medtemporal wrote into ``folder`` before reports recorded their
    files: its ``report.*`` and ``report_*.png`` files, the family files beside them and its ``assets`` folder, when
    ``report.html`` is one of our pages. A folder that lists its files, or holds no such page, is left alone."""
    page = folder / "report.html"
    if (folder / OWNED).exists() or not page.is_file() or LEGACY_MARK not in page.read_bytes()[:4096]:
        return
    family_prefixes = tuple(f"{name}_" for name in names("benchmark"))
    ours = [path for path in folder.iterdir()
            if path.name == ASSETS and path.is_dir()
            or path.is_file() and (path.name.startswith(("report.", "report_")) or path.name.startswith(family_prefixes))]
    record_owned(folder, ours, by="medtemporal report (an earlier version's files, adopted)")


def _family(runs: Sequence[ReportRun]) -> str | None:
    """The family whose own report to add: the one every run is of, when it has a report."""
    names = {r.scores.run.benchmark for r in runs}
    if len(names) != 1 or None in names:
        return None
    name = str(names.pop())
    return name if spec(name).report is not None else None


def _audits(runs: Sequence[ReportRun]) -> list[tuple[str, dict]]:
    """(title, audit) of each distinct benchmark of the runs whose manifest holds a blind-solvability audit."""
    first: dict[str, ReportRun] = {}
    for run in runs:
        first.setdefault(run.scores.run.benchmark_path or "", run)
    out = []
    for path, run in first.items():
        manifest = run.folder.benchmark_manifest(run.config) if path else None
        if manifest is not None and manifest.audit:
            out.append((f"Blind-solvability audit of {Path(path).name} (from its manifest)", manifest.audit))
    return out


def _safe(name: str) -> str:
    """``name`` with every character but letters, digits, ``-`` and ``_`` replaced by ``_`` (for file names)."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


__all__ = ["FORMATS", "FamilyReport", "ReportRun", "load_runs", "parse_formats", "write_report"]
