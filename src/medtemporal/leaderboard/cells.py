"""The leaderboard's cells: one per run, the family's headline as its report defines it, with what qualifies it.

Every number is read, none computed: a cell is the run's headline score (`medtemporal.report.console.headline_score`)
from its ``scores.json``, × 100, with its patient-clustered interval and n; the run's settings say whether it is a
subset (``--limit``, ``--limit-per-task``, ``--tasks``: the full benchmark's n beside it), on phantoms (a benchmark
built from synthetic data) or under another protocol than the family's default. A model's name, size and backend
come from the model registry where the run recorded an entry (``config.json``'s ``model_entry``), else from the run's
name and URI. Chance is the headline score's own; the text-only floor is the benchmark's audit (`medtemporal.audit`):
the stored text floor of open answers, or the best blind reader of each audited subtype, weighted by its items.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from medtemporal.contract import spec
from medtemporal.report.console import headline_score
from medtemporal.report.loaded import ReportRun, protocol_label, subset_options


@dataclass(frozen=True)
class Model:
    """Who answered: the registry's entry where the run names one, else the run's own name and URI."""

    name: str
    size: str = ""
    backend: str = ""
    hub_id: str = ""
    uri: str = ""
    registered: bool = False


@dataclass
class Cell:
    """One run's headline on one family (values × 100, as the reports print them)."""

    family: str
    row: str
    """The front page's row: the model, with the protocol where it is not the family's default."""
    model: Model
    run: str
    """The run's label in its family's report (`medtemporal.report.loaded.report_runs`)."""
    path: str
    protocol: str
    metric: str | None
    group: str | None
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    full_n: int
    chance: float | None
    subset: str = ""
    """How the run chose a subset of the headline's items (``--limit 60``), "" for all of them."""
    phantom: bool = False
    other_protocol: bool = False
    temperature: float | None = None
    marks: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _pct(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else 100.0 * value


def model_of(run: ReportRun) -> Model:
    """The run's model as the registry names it (`medtemporal.models.lookup` of the recorded ``model_entry``), else
    the run's display name, backend from its URI."""
    uri = str(run.scores.run.model or "")
    fallback = Model(name=str(run.scores.run.name or uri or run.path.name), backend=uri.split(":", 1)[0], uri=uri)
    extra = (run.config.model_extra or {}) if run.config is not None else {}
    entry_name = extra.get("model_entry") or getattr(run.config, "model_entry", None)
    if not entry_name:
        return fallback
    try:
        from medtemporal.models import lookup  # type: ignore[import-not-found]  (the model registry)

        entry = lookup(str(entry_name))
    except Exception:  # noqa: BLE001  (no registry, or an entry since removed: the run's own name stands)
        return fallback
    return Model(name=str(getattr(entry, "name", entry_name)), size=str(getattr(entry, "size", "") or ""),
                 backend=str(getattr(entry, "backend", "") or fallback.backend),
                 hub_id=str(getattr(entry, "hub_id", "") or ""), uri=uri, registered=True)


def full_items(run: ReportRun, group: str | None, metric: str | None) -> int:
    """The answers the whole benchmark gives to the headline at the run's repeats, as a score's n counts them: the
    manifest's items of the tasks under ``group`` (the task of a ``task:`` group, the family's Overall tasks of an
    Overall) that the family scores with ``metric``."""
    manifest = run.folder.benchmark_manifest(run.config)
    counts = (manifest.counts.get("task") or {}) if manifest is not None else {}
    family = spec(str(run.scores.run.benchmark))
    tasks = ([group[5:]] if group is not None and group.startswith("task:")
             else list(family.groups.overall_tasks or counts))
    return run.repeats * sum(counts.get(t, 0) for t in tasks if metric is None or metric in family.listed_metrics(t))


def other_protocol(run: ReportRun) -> bool:
    """Whether the run's protocol is another than its family's default (options recorded as given are not)."""
    return run.scores.run.protocol != spec(str(run.scores.run.benchmark)).defaults.protocol


def cell_of(run: ReportRun, row: str) -> Cell:
    """The run's headline cell (module doc)."""
    family = str(run.scores.run.benchmark)
    score = headline_score(run)
    manifest = run.folder.benchmark_manifest(run.config)
    protocol = protocol_label(run.scores)
    temperature = (run.config.generation or {}).get("temperature") if run.config is not None else None
    cell = Cell(
        family=family, row=row, model=model_of(run), run=run.label, path=str(run.path), protocol=protocol,
        metric=score.metric if score else None, group=score.group if score else None,
        value=_pct(score.value) if score else None, ci_low=_pct(score.ci_low) if score else None,
        ci_high=_pct(score.ci_high) if score else None, n=score.n if score else 0,
        full_n=full_items(run, score.group if score else None, score.metric if score else None),
        chance=_pct(score.chance) if score else None, subset=subset_options(run.config),
        phantom=manifest is None or manifest.licence == "synthetic",
        other_protocol=other_protocol(run),
        temperature=None if temperature is None else float(temperature))
    if cell.n >= cell.full_n:  # e.g. --tasks leaving out only tasks the headline does not score
        cell.subset = ""
    cell.marks = [*(["subset"] if cell.subset else []), *(["phantom"] if cell.phantom else []),
                  *(["protocol"] if cell.other_protocol else [])]
    return cell


def row_labels(runs: Sequence[ReportRun]) -> list[str]:
    """The front page's row of each run: its model, plus the protocol where it is not its family's default (two
    protocol runs of one model are two rows), plus the folder where a model and protocol still repeat in a
    family."""
    labels = []
    for run in runs:
        name = model_of(run).name
        labels.append(f"{name} · {protocol_label(run.scores)}" if other_protocol(run) else name)
    seen: dict[tuple[str, str], int] = {}
    for k, run in enumerate(runs):
        key = (labels[k], str(run.scores.run.benchmark))
        seen[key] = seen.get(key, 0) + 1
    return [f"{label} [{run.path.name}]" if seen[(label, str(run.scores.run.benchmark))] > 1 else label
            for label, run in zip(labels, runs, strict=True)]


def floor_of(run: ReportRun, metric: str | None, group: str | None) -> dict[str, Any] | None:
    """The text-only floor of the headline, from the benchmark's stored audit: the text floor row of the headline's
    task and metric over all subtypes (the best baseline), else, for accuracy, the best blind reader of each audited
    subtype weighted by its items (a floor chosen after the fact: optimistic). None when the audit has neither."""
    manifest = run.folder.benchmark_manifest(run.config)
    audit = (manifest.audit if manifest is not None else None) or {}
    tasks = [t.task for t in run.scores.layout if group in ("overall", "overall:paper", f"task:{t.task}")]
    rows = [r for r in (audit.get("text_floor") or {}).get("rows", ())
            if r.get("metric") == metric and r.get("task") in tasks and r.get("subtype") == "(all)"]
    if rows:
        best = max(rows, key=lambda r: r["value"])
        return {"value": _pct(best["value"]), "ci_low": _pct(best.get("ci_low")), "ci_high": _pct(best.get("ci_high")),
                "n": best["n"], "what": f"text floor: {best['baseline']} ({best['task']})"}
    if metric != "accuracy":
        return None
    readers = [(r["n"], r[r["best"]]["accuracy"]) for r in audit.get("subtypes", ())
               if r["task"] in tasks and r.get("best") and r.get(r["best"])]
    n = sum(k for k, _ in readers)
    if not n:
        return None
    return {"value": _pct(sum(k * a for k, a in readers) / n), "ci_low": None, "ci_high": None, "n": n,
            "what": f"best blind reader per audited subtype, weighted by items ({n:,} items audited)"}
