"""Runs as a report reads them: scored first where stale, as ``medtemporal report`` does (the report only reads)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from medtemporal.report import load_runs
from medtemporal.report.loaded import ReportRun
from medtemporal.scoring.runs import score_stale


def loaded(run_dirs: Sequence[str | Path]) -> list[ReportRun]:
    """`load_runs` of ``run_dirs`` after `score_stale`."""
    score_stale(run_dirs)
    return load_runs(run_dirs)
