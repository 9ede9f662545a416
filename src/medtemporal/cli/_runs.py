"""``medtemporal runs list [DIR]``: the run folders under DIR with their progress and headline scores;
``medtemporal runs show RUN...``: every metric of each run, the table `run` and `score` print in short."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from medtemporal.errors import InvalidInputError, MedTemporalError
from medtemporal.report.console import headline_of
from medtemporal.report.tables import fmt_score, markdown_table
from medtemporal.runs import RunConfig, RunFolder, find_runs
from medtemporal.scoring.aggregate import WEIGHTED_OVERALL

MAX_DEPTH = 4


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="inspect run folders")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    ls = actions.add_parser("list", help="list runs under a folder with their headline scores")
    ls.add_argument("folder", nargs="?", type=Path, default=Path("runs"), metavar="FOLDER",
                    help="a folder holding run folders, at any depth (default ./runs)")
    ls.set_defaults(func=list_runs)
    show = actions.add_parser("show", help="every metric of every task of runs, with intervals (the full table)")
    show.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folder written by `medtemporal run`")
    show.set_defaults(func=show_runs)


def show_runs(args: argparse.Namespace) -> int:
    """Print each run's full table from its ``scores.json`` (nothing scored again: a stale run is refused, naming
    ``medtemporal score``)."""
    from medtemporal.report import load_runs
    from medtemporal.report.console import console_report

    print(console_report(load_runs(args.runs), full=True))
    return 0


@dataclass
class RunRow:
    """One run folder as `runs list` shows it."""

    path: Path
    name: str
    """The run's display name (``run --name``), else its model."""
    model: str
    protocol: str
    benchmark: str
    answered: int
    errors: int
    total: int | None
    status: str
    scores: str


def _total(run: RunFolder, config: RunConfig) -> int | None:
    """Items in the run: those of its ``tasks`` in the benchmark's manifest (if still there), at most
    ``limit_per_task`` of each and ``limit`` in all."""
    limit, tasks, per_task = config.limit, config.tasks, config.limit_per_task
    manifest = run.benchmark_manifest(config)
    if manifest is None or "task" not in manifest.counts:
        return limit
    counts = manifest.counts["task"]
    total = sum(n if per_task is None else min(n, per_task) for task, n in counts.items() if not tasks or task in tasks)
    return total if limit is None else min(total, limit)


def _headline(folder: Path) -> str:
    """Overall and per-family scores of the first metric, from scores.json."""
    run = RunFolder(folder)
    if not run.has_scores():
        return "not scored"
    try:
        scores = run.scores()
    except InvalidInputError:  # one damaged folder must not hide the others
        return f"unreadable {run.scores_file.name} (run `medtemporal score {folder}`)"
    if not scores.scores:
        return "no scores"
    headline = headline_of(scores)
    name = headline.metric if headline else scores.scores[0].metric
    percent = bool(scores.metrics.get(name, {}).get("percent", False))
    parts = [f"{name} {fmt_score(scores.score('overall', name), percent)}"]
    paper = scores.score(WEIGHTED_OVERALL, name)
    if paper is not None:
        parts = [f"{name} {fmt_score(paper, percent)} (paper) · {fmt_score(scores.score('overall', name), percent)} (micro)"]
    for task in scores.layout:
        score = scores.score(task.group, name)
        if score is not None:
            parts.append(f"{task.task} {fmt_score(score, percent)}")
    stale = " (stale: run `medtemporal score`)" if run.needs_scoring() else ""
    return " · ".join(parts) + stale


def describe(folder: Path) -> RunRow:
    """What `runs list` shows about one run folder."""
    run = RunFolder(folder)
    config: RunConfig | None = None
    damaged = False
    try:
        config = run.read_config()
    except InvalidInputError:  # listed all the same, with what can still be read
        damaged = True
    answered, errors = run.tally()
    if run.being_written():
        status = "running"
    elif damaged:
        status = f"unreadable {run.config_file.name}"
    elif config is not None and config.finished_at:
        status = "finished"
    else:
        status = "unfinished"
    return RunRow(
        path=folder,
        name=str((config.name or config.model.uri) if config else "?"),
        model=str(config.model.uri if config else "?"),
        protocol=str(config.protocol.name if config else "?"),
        benchmark=str(config.benchmark.name if config else "?"),
        answered=answered,
        errors=errors,
        total=_total(run, config) if config else None,
        status=status,
        scores=_headline(folder),
    )


def _describe_or_mark(folder: Path) -> RunRow:
    """`describe`, or a row marking ``folder`` unreadable (with why) so that one bad folder hides no other."""
    try:
        return describe(folder)
    except (MedTemporalError, OSError, ValueError, TypeError, AttributeError, KeyError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return RunRow(folder, "?", "?", "?", "?", 0, 0, None, f"unreadable: {why}", "?")


def _shown(run: Path, folder: Path) -> Path:
    """``run`` (resolved) as the user named the folder above it; itself where a link led elsewhere."""
    return folder / run.relative_to(folder.resolve()) if run.is_relative_to(folder.resolve()) else run


def list_runs(args: argparse.Namespace) -> int:
    """Print a table of the runs under ``args.folder``."""
    folder: Path = args.folder
    if not folder.is_dir():
        raise InvalidInputError(f"{folder} is not a folder; pass the folder that holds your run folders.")
    rows = [_describe_or_mark(_shown(path, folder)) for path in find_runs([folder], MAX_DEPTH)]
    if not rows:
        print(f"No runs under {folder}; start one with `medtemporal run BENCHMARK --model URI --out {folder}/NAME`.")
        return 0
    header = ["Run", "Name", "Model", "Protocol", "Benchmark", "Answered", "Failed", "Status", "Scores"]
    table = [
        [
            str(r.path),
            r.name,
            r.model,
            r.protocol,
            r.benchmark,
            f"{r.answered}/{r.total}" if r.total is not None else str(r.answered),
            str(r.errors),
            r.status,
            r.scores,
        ]
        for r in rows
    ]
    print(markdown_table(header, table))
    return 0
