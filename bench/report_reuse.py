"""Report-time reuse: per-item statistics once per (run, metric), run folders read once per report.

Writes ``--runs`` constructed runs of ``--items`` text-only items over four tasks (no model), then measures,
in one process:

1. ``compare_runs`` statistics: the per-sample scoring of the old loop (each group's items scored anew
   for every group: overall + each task) against `medtemporal.scoring.compare.per_item` (once per run and
   metric, sliced by group), on the same pair of runs;
2. the report's paired section and per-item viewer data for all runs, each section reading its runs itself
   (as before) against both sharing one read of each run (`medtemporal.report.loaded.ReportRun`, as
   `write_report` now does).

Prints each time and the ratio (before / after).

    .venv/bin/python bench/report_reuse.py [--items 4000] [--runs 4]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from medtemporal.benchmark import Manifest, save
from medtemporal.contract import BenchmarkSpec
from medtemporal.registry import register
from medtemporal.schema import Item, Prediction, write_jsonl

NAME = "bench-report-reuse"
OPTIONS = {"A": "T1 → T2", "B": "T2 → T3", "C": "T3 → T4", "D": "T4 → T5", "E": "No change"}
TASKS = ("TEL", "ICR", "GTS", "ICR-V")

register("benchmark", NAME)(BenchmarkSpec(
    name=NAME, version="1", licence="synthetic", description="constructed runs for bench/report_reuse.py",
    add_arguments=lambda parser: None, build=lambda args: ([], Manifest(benchmark=NAME, version="1", licence="synthetic")),
))


def make_runs(root: Path, n_items: int, n_runs: int) -> list[Path]:
    """A benchmark and ``n_runs`` run folders answering it at random (seeded)."""
    items = [Item.create(benchmark=NAME, task=TASKS[k % 4], subtype=f"s{k % 7}", images=[], question=f"Q{k}?",
                         options=OPTIONS, answer_type="choice", answer="ABCDE"[k % 5],
                         meta={"patient_id": f"p{k // 4}"}) for k in range(n_items)]
    bench = save(root / "bench", items, Manifest(benchmark=NAME, version="1", licence="synthetic"))
    runs = []
    for r in range(n_runs):
        rng = np.random.default_rng(r)
        run = root / f"run{r}"
        run.mkdir()
        (run / "config.json").write_text(json.dumps({"benchmark": {"path": str(bench), "name": NAME},
                                                      "model": {"uri": f"baseline:r{r}"}, "protocol": "direct"}))
        letters = rng.choice(list("ABCDE"), n_items)
        write_jsonl(run / "predictions.jsonl", [
            Prediction(item_id=i.id, model=f"baseline:r{r}", protocol="direct", request_hash=f"h{k}",
                       raw_output=f"The answer is {x}.", answer=str(x), extraction="letter")
            for k, (i, x) in enumerate(zip(items, letters))])
        runs.append(run)
    return runs


def main() -> None:
    from medtemporal.report import load_runs
    from medtemporal.report.sections import paired_section
    from medtemporal.report.assets import Assets
    from medtemporal.report.viewer import viewer_index
    from medtemporal.scoring.compare import _answered, _stats, per_item
    from medtemporal.scoring.outcomes import load_outcomes

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=4000)
    p.add_argument("--runs", type=int, default=4)
    args = p.parse_args()
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_runs(Path(tmp), args.items, args.runs)
        runs = load_runs(paths)  # scores each run once (not timed)

        loaded = load_outcomes(paths[0])
        answered = _answered(loaded)
        items = [i for i in loaded.items if i.id in answered]
        groups = ["overall", *(f"task:{t}" for t in TASKS)]
        t0 = time.perf_counter()
        for group in groups:  # before: each group's items scored anew, for each run of the pair
            use = [i for i in items if (group == "overall" or group == f"task:{i.task}")
                   and "accuracy" in loaded.metrics_for(i.task)]
            for _ in range(2):
                _stats("accuracy", [answered[i.id] for i in use])
        before = time.perf_counter() - t0
        pair = [load_outcomes(paths[0]), load_outcomes(paths[1])]
        for run in pair:
            _answered(run)  # read once per run either way
        t0 = time.perf_counter()
        task_of = np.array([i.task for i in items])
        for run in pair:  # after: once per run, then sliced by group
            rows, stats = per_item(run, "accuracy")
            row = np.array([rows[i.id] for i in items])
            for group in groups:
                stats[row[np.flatnonzero((task_of == group[5:]) | (group == "overall"))]]
        after = time.perf_counter() - t0
        print(f"compare statistics, {len(groups)} groups x {len(items)} items: per group {before * 1e3:.1f} ms, "
              f"once per (run, metric) {after * 1e3:.1f} ms, ratio {before / after:.1f}x")

        t0 = time.perf_counter()
        paired_section(load_runs(paths))  # each section with runs of its own: each reads them
        viewer_index(load_runs(paths), Assets())
        before = time.perf_counter() - t0
        t0 = time.perf_counter()
        paired_section(runs)  # the report's runs: each read once, shared by the sections
        viewer_index(runs, Assets())
        after = time.perf_counter() - t0
        print(f"paired section + viewer, {args.runs} runs x {args.items} items: each section loading its runs "
              f"{before:.2f} s, outcomes loaded once per report {after:.2f} s, ratio {before / after:.2f}x")


if __name__ == "__main__":
    main()
