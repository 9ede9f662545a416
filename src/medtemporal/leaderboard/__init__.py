"""The temporal leaderboard: every model × every family on one static site, beside the field's published numbers.

``write_leaderboard(["runs/qwen", "runs/medgemma"], "site")`` reads every run folder given or under a folder given
(an eval set's), through the run folder's owner (`medtemporal.report.loaded.load_runs`, which scores stale runs), and
writes::

    site/index.html            models × families: each family's headline (× 100) with interval, n and marks;
                               chance and the text-only floor as rows; sortable and filterable in the browser
    site/family/<family>.html  the family's runs, its published tables with each run's comparability, and which
                               runs differ significantly (paired on common items, clustered by patient)
    site/cells.csv             one row per cell
    site/leaderboard.json      every cell, reference row, published table and pairwise test

The pages need no server (no fetch; the data is inline), so the folder can be opened from disk or put on any static
host. Nothing is recomputed: each number is a run's stored score (`medtemporal.leaderboard.cells`), a published row
(`medtemporal.leaderboard.published`) or the report's paired test (`medtemporal.leaderboard.pairwise`).
"""

from __future__ import annotations

import csv
import io
from collections import Counter
import json
from pathlib import Path
from typing import Any, Sequence

from medtemporal.contract import spec
from medtemporal.errors import InvalidInputError
from medtemporal.leaderboard.cells import Cell, Model, cell_of, floor_of, row_labels
from medtemporal.leaderboard.pairwise import pairwise
from medtemporal.leaderboard.published import table_data
from medtemporal.leaderboard.site import family_page, front_page, slug
from medtemporal.progress import progress_bar
from medtemporal.registry import names
from medtemporal.report.loaded import ReportRun, load_runs
from medtemporal.writes import disk_error, record_owned, refuse_unowned, write_atomic

CSV_FIELDS = ("family", "row", "model", "size", "backend", "hub_id", "uri", "run", "path", "protocol", "metric", "group",
              "value", "ci_low", "ci_high", "n", "full_n", "chance", "subset", "phantom", "other_protocol",
              "temperature")
"""The columns of ``cells.csv`` (values × 100)."""


def collect(run_dirs: Sequence[str | Path], *, paired: bool = True) -> dict[str, Any]:
    """Everything the site shows, as plain data (``leaderboard.json``); ``paired=False`` leaves out the paired tests."""
    runs = load_runs(run_dirs)
    rows = row_labels(runs)
    cells = [cell_of(run, row) for run, row in zip(runs, rows, strict=True)]
    order = {name: k for k, name in enumerate(names("benchmark"))}
    families = sorted({c.family for c in cells}, key=lambda f: (order.get(f, len(order)), f))
    by_family: dict[str, list[tuple[ReportRun, Cell]]] = {f: [] for f in families}
    for run, cell in zip(runs, cells, strict=True):
        by_family[cell.family].append((run, cell))
    data: dict[str, Any] = {"families": [], "cells": [c.as_dict() for c in cells]}
    for family in progress_bar(families, desc="families (published rows, paired tests)", unit="family"):
        members = by_family[family]
        fruns, fcells = [r for r, _ in members], [c for _, c in members]
        first = fcells[0]
        published = spec(family).published
        floor = floor_of(fruns[0], first.metric, first.group)
        data["families"].append({
            "name": family, "description": spec(family).description,
            "metric": Counter(str(c.metric) for c in fcells).most_common(1)[0][0],  # a cell of another says so
            "chance": next((c.chance for c in fcells if c.chance is not None), None), "floor": floor,
            "tables": [table_data(t, fruns, [c.row + (f" (subset: {c.n:,} of {c.full_n:,})" if c.subset else "")
                                  for c in fcells], published.conditions)
                       for t in published.tables],
            "none": published.none.reason if published.none else None,
            "pairwise": pairwise(fruns, fcells) if paired else [],
        })
    return data


def _csv(cells: Sequence[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for c in cells:
        model = c["model"]
        writer.writerow({**{k: c.get(k) for k in CSV_FIELDS if k in c}, "model": model["name"], "size": model["size"],
                         "backend": model["backend"], "hub_id": model["hub_id"], "uri": model["uri"]})
    return out.getvalue()


def render(data: dict[str, Any]) -> dict[str, str]:
    """The site's files (relative path → text) from `collect`'s data."""
    cells = [Cell(**{**c, "model": Model(**c["model"])}) for c in data["cells"]]
    families = [f["name"] for f in data["families"]]
    rows: dict[str, dict[str, Cell]] = {}
    models: dict[str, Model] = {}
    for c in cells:
        rows.setdefault(c.row, {})[c.family] = c
        models.setdefault(c.row, c.model)
    chance = {f["name"]: {"value": f["chance"], "what": "chance of the headline"} for f in data["families"]
              if f["chance"] is not None}
    floor = {f["name"]: f["floor"] for f in data["families"] if f["floor"]}
    metrics = {f["name"]: f["metric"] for f in data["families"]}
    files = {"index.html": front_page(families, metrics, rows, models,
                                      [("Chance", chance), ("Text-only floor (blind readers)", floor)],
                                      {"cells": data["cells"]}),
             "cells.csv": _csv(data["cells"]),
             "leaderboard.json": json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False) + "\n"}
    for f in data["families"]:
        fcells = [c for c in cells if c.family == f["name"]]
        files[f"family/{slug(f['name'])}.html"] = family_page(
            f["name"], f["description"], fcells, f["tables"], f["none"], f["pairwise"],
            {"family": f["name"], "cells": [c.as_dict() for c in fcells], "tables": f["tables"],
             "pairwise": f["pairwise"]})
    return files


def write_leaderboard(run_dirs: Sequence[str | Path], out: str | Path, *, paired: bool = True) -> list[Path]:
    """Write the site for the runs in or under ``run_dirs`` into ``out`` (module doc); return the files written.

    Raises:
        InvalidInputError: no run found, ``out`` is a file, or it holds files of the user's where the site's go.
    """
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise InvalidInputError(f"--out {folder} is a file; pass a folder for the leaderboard site.")
    files = render(collect(run_dirs, paired=paired))
    paths = [folder / name for name in files]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        refuse_unowned(folder, [p for p in paths if p.exists()], action="replace")
        for path, text in zip(paths, files.values(), strict=True):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text)
    except OSError as exc:
        error = disk_error(exc, folder)
        if error is not None:
            raise error from None
        raise
    record_owned(folder, paths, by="medtemporal leaderboard")
    return paths


__all__ = ["collect", "render", "write_leaderboard"]
