"""Paired comparison of runs on the items they share: differences, clustered paired bootstrap, McNemar.

``compare_runs(a, b)`` reads two run folders and, on the items both answered
(present in both runs' selections, not missing in either), gives for every
group (``overall`` and each task) and metric the difference ``A - B`` with a
percentile bootstrap interval that resamples *patients* and keeps each
patient's items of both runs together (the pairing), and, for accuracy,
McNemar's exact test: the two-sided binomial test (`scipy.stats.binomtest`) on
the discordant items (A right and B wrong vs A wrong and B right), which is the
exact McNemar test. Runs with repeats contribute each item's mean over repeats
to the bootstrap; McNemar then uses repeat 0 (said in ``Paired.note``). Each run's per-item statistics
of a metric are computed once (`per_item`) and sliced per group; a run passed as its `RunOutcomes` (a report's
runs, read once) shares them with every comparison of that run.

It warns when the runs cover different item sets or were made with different
settings, naming what differs. ``compare_runs(a, b, metrics=[...])`` (``compare --metric``) compares on the named
metrics only, the model-based report metrics of `medtemporal.scoring.clinical` included (computed for both runs;
``green_score`` from each run's stored GREEN verdicts).
"""

from __future__ import annotations

import json
import warnings
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from medtemporal.runs import RunConfig, RunFolder
from medtemporal.errors import InvalidInputError
from medtemporal.scoring.aggregate import Outcome
from medtemporal.scoring.ci import CONFIDENCE, RESAMPLES, check_bootstrap, cluster_sums
from medtemporal.scoring.metrics import UNAVAILABLE, is_correct, metric
from medtemporal.scoring.outcomes import RunOutcomes, load_outcomes

SETTINGS_COMPARED = (
    ("benchmark", "manifest_sha256"), ("model", "uri"), ("protocol", "name"), ("protocol", "options"),
    ("protocol", "templates"), ("generation",), ("tasks",), ("limit",), ("repeats",),
)
"""Config settings whose differences `compare_runs` names."""


class ComparisonWarning(UserWarning):
    """Two compared runs differ in items or settings (the comparison still runs)."""


@dataclass(frozen=True)
class Paired:
    """One metric over one group: both runs' values on the common items and their paired difference."""

    group: str
    metric: str
    n: int
    """Common items in the group."""
    a: float
    b: float
    diff: float
    """``a - b``."""
    ci_low: float | None
    ci_high: float | None
    p_mcnemar: float | None = None
    """Exact McNemar p-value (accuracy only)."""
    a_only: int | None = None
    """Items A got right and B wrong (accuracy only)."""
    b_only: int | None = None
    note: str = ""


@dataclass
class Comparison:
    """The paired comparison of run A with run B."""

    a: str
    b: str
    common: int
    only_a: int
    only_b: int
    differs: dict[str, tuple[Any, Any]]
    """Setting (dotted path) → (A's value, B's value), for every compared setting that differs."""
    rows: list[Paired] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def row(self, group: str, metric_name: str) -> Paired | None:
        """The row of ``metric_name`` over ``group``, if compared."""
        return next((r for r in self.rows if r.group == group and r.metric == metric_name), None)

    def markdown(self, *, b_first: bool = False) -> str:
        """The comparison as a Markdown table with its warnings above it; values × 100 (%), as every table shows
        them, and differences in percentage points (``--json`` keeps the fractions). ``b_first``: run B is shown
        as the table's A (the first run named on a command line, its base) and the difference as B − A, the same
        numbers as A − B unflipped."""
        first, second = (self.b, self.a) if b_first else (self.a, self.b)
        only = (self.only_b, self.only_a) if b_first else (self.only_a, self.only_b)
        diff = "B − A" if b_first else "A − B"
        lines = [f"A = {first}", f"B = {second}", f"{self.common} common items ({only[0]} only in A, "
                 f"{only[1]} only in B). Values × 100 (%); {diff} in points.", ""]
        lines += [f"Warning: {w}" for w in self.warnings]
        lines += ["", f"| Group | Metric | n | A | B | {diff} | 95% CI | McNemar p | A✓B✗ | A✗B✓ |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in self.rows:
            ci = "–" if r.ci_low is None else f"[{_points(r.ci_low, True)}, {_points(r.ci_high, True)}]"
            p = "–" if r.p_mcnemar is None else f"{r.p_mcnemar:.4g}"
            values = (r.b, r.a) if b_first else (r.a, r.b)
            wins = (r.b_only, r.a_only) if b_first else (r.a_only, r.b_only)
            lines.append(f"| {r.group} | {r.metric} | {r.n} | {_points(values[0])} | {_points(values[1])} | "
                         f"{_points(r.diff, True)} | {ci} | {p} | {'–' if wins[0] is None else wins[0]} | "
                         f"{'–' if wins[1] is None else wins[1]} |")
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {"a": self.a, "b": self.b, "common": self.common, "only_a": self.only_a, "only_b": self.only_b,
                "differs": {k: list(v) for k, v in self.differs.items()}, "warnings": self.warnings,
                "rows": [r.__dict__ for r in self.rows]}


def _points(value: float | None, signed: bool = False) -> str:
    """A fraction as percent (points), one decimal: ``0.315`` → ``31.5`` (``+31.5`` signed); a dash for NaN.

    >>> _points(0.315), _points(-0.02, True), _points(float("nan"))
    ('31.5', '-2.0', '–')
    """
    if value is None or value != value:
        return "–"
    return f"{100 * value:+.1f}" if signed else f"{100 * value:.1f}"


def _get(config: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = config
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def setting_differences(a: RunConfig, b: RunConfig) -> dict[str, tuple[Any, Any]]:
    """Dotted setting → (A, B) for each of `SETTINGS_COMPARED` that differs (mappings key by key)."""
    out: dict[str, tuple[Any, Any]] = {}
    plain_a, plain_b = a.model_dump(mode="json"), b.model_dump(mode="json")
    for path in SETTINGS_COMPARED:
        _differences(".".join(path), _get(plain_a, path), _get(plain_b, path), out)
    return out


def _differences(name: str, va: Any, vb: Any, out: dict[str, tuple[Any, Any]]) -> None:
    """Add ``name`` → (A, B) to ``out`` when they differ; two mappings are compared key by key."""
    if isinstance(va, dict) and isinstance(vb, dict):
        for key in sorted(va.keys() | vb.keys()):
            _differences(f"{name}.{key}", va.get(key), vb.get(key), out)
    elif va != vb:
        out[name] = (va, vb)


def _answered(run: RunOutcomes) -> dict[str, list[Outcome]]:
    """Item id → its outcome in every repeat, for items not missing in any repeat (once per run)."""
    if "answered" not in run.memo:
        out: dict[str, list[Outcome]] = {}
        for k, item in enumerate(run.items):
            outcomes = [rep[k] for rep in run.by_repeat]
            if all(o.status != "missing" for o in outcomes):
                out[item.id] = outcomes
        run.memo["answered"] = out
    return run.memo["answered"]


def per_item(run: RunOutcomes, name: str) -> tuple[dict[str, int], np.ndarray]:
    """Item id → row, and the ``(n, k)`` statistics of metric ``name`` (mean over repeats) of every answered
    item whose task it scores: computed once per (run, metric), then sliced by group and by the other run."""
    key = ("per_item", name)
    if key not in run.memo:
        answered = _answered(run)
        ids = [i.id for i in run.items if i.id in answered and name in run.metrics_for(i.task)]
        stats = _stats(name, [answered[i] for i in ids]) if ids else np.zeros((0, 1))
        run.memo[key] = ({item_id: row for row, item_id in enumerate(ids)}, stats)
    return run.memo[key]


def _stats(name: str, per_item: Sequence[list[Outcome]]) -> np.ndarray:
    """``(n, k)`` per-item statistics of metric ``name``, averaged over the item's repeats."""
    m = metric(name)
    repeats = len(per_item[0])
    layers = []
    for r in range(repeats):
        scored = m.per_sample([o[r].item for o in per_item], [o[r].answer for o in per_item],
                              [o[r].output for o in per_item])
        layers.append(scored.reshape(len(per_item), -1))
    return np.mean(layers, axis=0)


def stored_green(run_dir: str | Path) -> AbstractContextManager[None]:
    """The run's stored GREEN verdicts in force for ``green_score`` (`medtemporal.scoring.clinical.green`), when
    its ``scores.json`` records a GREEN pass; else nothing (``green_score`` is then unavailable)."""
    from medtemporal.scoring.clinical.green import green_verdicts, stored_verdicts
    folder = RunFolder(run_dir)
    if not folder.has_scores():
        return nullcontext()
    block = folder.scores().green
    return green_verdicts(stored_verdicts(run_dir, block["id"])) if block else nullcontext()


def paired_bootstrap(
    a: np.ndarray, b: np.ndarray, clusters: Sequence[str], name: str, *, confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES, rng: np.random.Generator | int | None = None,
) -> tuple[float, float | None, float | None]:
    """``value(a) - value(b)`` of metric ``name`` and its percentile interval, resampling clusters with both
    runs' statistics of a cluster kept together; no interval for fewer than two clusters."""
    reduce = metric(name).reduce
    sums_a, counts = cluster_sums(a, clusters)
    sums_b, _ = cluster_sums(b, clusters)
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = float(reduce(sums_a.sum(axis=0), counts.sum()) - reduce(sums_b.sum(axis=0), counts.sum()))
    if len(counts) < 2 or np.isnan(diff):
        return diff, None, None
    k = sums_a.shape[1]

    def statistic(*arrays: np.ndarray, axis: int = -1) -> np.ndarray:
        n = arrays[-1].sum(axis=axis)
        sa = np.stack([x.sum(axis=axis) for x in arrays[:k]], axis=-1)
        sb = np.stack([x.sum(axis=axis) for x in arrays[k:2 * k]], axis=-1)
        return reduce(sa, n) - reduce(sb, n)

    if np.allclose(sums_a, sums_b):  # identical runs: every replicate is 0 (scipy refuses a degenerate sample)
        return diff, 0.0, 0.0
    from scipy import stats as scipy_stats  # here, as in `medtemporal.scoring.ci`: a report need not import it

    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy_stats.DegenerateDataWarning)  # NaN replicates: left out below
        result = scipy_stats.bootstrap(
            (*sums_a.T, *sums_b.T, counts), statistic, paired=True, vectorized=True, n_resamples=resamples,
            batch=max(1, min(resamples, 400_000 // len(counts))), confidence_level=confidence, method="percentile",
            rng=np.random.default_rng(rng),
        )
    low, high = result.confidence_interval
    if np.isnan(low) or np.isnan(high):
        replicates = result.bootstrap_distribution
        if np.isnan(replicates).all():
            return diff, None, None
        alpha = (1 - confidence) / 2
        low, high = np.nanpercentile(replicates, [100 * alpha, 100 * (1 - alpha)])
    return diff, float(low), float(high)


def _shown(value: Any, width: int = 60) -> str:
    """A setting's value as JSON, cut to ``width`` characters with an ellipsis."""
    text = json.dumps(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts (1 when there are none)."""
    if a_only + b_only == 0:
        return 1.0
    from scipy import stats as scipy_stats

    return float(scipy_stats.binomtest(a_only, a_only + b_only, 0.5).pvalue)


def compare_runs(
    run_a: str | Path | RunOutcomes, run_b: str | Path | RunOutcomes, *, resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE, seed: int = 0, metrics: Sequence[str] = (),
) -> Comparison:
    """Compare run A with run B on their common answered items (see the module doc); each a run folder, or a run
    already read (`RunOutcomes`).

    Args:
        run_a: Run folder A, or run A already read.
        run_b: Run folder B (the reference), or run B already read.
        resamples: Bootstrap replicates.
        confidence: Interval level.
        seed: Bootstrap seed.
        metrics: Compare on these metrics only (any the benchmark lists, model-based report metrics included:
            they are computed for both runs); default: the metrics ``medtemporal score`` computes.

    Raises:
        InvalidInputError: a folder is not a run, the runs share no answered item, or a named metric is not
            listed for their benchmark.
    """
    check_bootstrap(resamples, confidence, seed)
    ra, rb = (r if isinstance(r, RunOutcomes) else load_outcomes(r, requested=metrics) for r in (run_a, run_b))
    name_a, name_b = ra.path, rb.path
    ans_a, ans_b = _answered(ra), _answered(rb)
    common = [i for i in ans_a if i in ans_b]
    result = Comparison(str(name_a), str(name_b), len(common), len(ans_a.keys() - ans_b.keys()),
                        len(ans_b.keys() - ans_a.keys()), setting_differences(ra.config, rb.config))
    if not common:
        raise InvalidInputError(f"{name_a} and {name_b} share no answered item; compare runs of the same benchmark.")
    if result.only_a or result.only_b:
        result.warnings.append(
            f"the runs cover different items: {result.only_a} answered only in {name_a} and {result.only_b} only in "
            f"{name_b}; "
            f"only the {len(common)} common items are compared")
    if result.differs:
        shown = "; ".join(f"{k}: {_shown(va)} vs {_shown(vb)}" for k, (va, vb) in result.differs.items())
        result.warnings.append(f"the runs differ in settings, {name_a} vs {name_b} ({shown})")
    for text in result.warnings:
        warnings.warn(text, ComparisonWarning, stacklevel=2)
    per_a = [ans_a[i] for i in common]
    per_b = [ans_b[i] for i in common]
    items = [o[0].item for o in per_a]
    clusters = np.array([i.cluster for i in items], dtype=object)
    tasks = list(dict.fromkeys(i.task for i in items))
    at: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    left_out: set[str] = set()
    for group in ["overall", *(f"task:{t}" for t in tasks)]:
        idx = np.array([k for k, i in enumerate(items) if group == "overall" or group == f"task:{i.task}"])
        names = dict.fromkeys(m for t in tasks if group in ("overall", f"task:{t}")
                              for m in ra.metrics_for(t) if m in rb.metrics_for(t) and (not metrics or m in metrics))
        for name in names:
            use = [k for k in idx if name in ra.metrics_for(items[k].task) and name in rb.metrics_for(items[k].task)]
            if not use:
                continue
            if name in left_out:
                continue
            if name not in at:  # row of each common item in either run's statistics, once per metric
                try:
                    with stored_green(ra.path):
                        rows_a, stats_a = per_item(ra, name)
                    with stored_green(rb.path):
                        rows_b, stats_b = per_item(rb, name)
                except UNAVAILABLE as exc:
                    left_out.add(name)
                    result.warnings.append(f"{name} is left out: unavailable ({str(exc).rstrip('.')})")
                    continue
                at[name] = (stats_a, np.array([rows_a.get(i.id, -1) for i in items]),
                            stats_b, np.array([rows_b.get(i.id, -1) for i in items]))
            stats_a, row_a, stats_b, row_b = at[name]
            sa, sb = stats_a[row_a[use]], stats_b[row_b[use]]
            reduce = metric(name).reduce
            n = np.float64(len(use))
            diff, low, high = paired_bootstrap(sa, sb, clusters[use], name, confidence=confidence,
                                               resamples=resamples, rng=[seed, len(use)])
            row = Paired(group, name, len(use), float(reduce(sa.sum(axis=0), n)), float(reduce(sb.sum(axis=0), n)),
                         diff, low, high)
            if name == "accuracy":
                right_a = np.array([is_correct(per_a[k][0].item, per_a[k][0].answer) for k in use])
                right_b = np.array([is_correct(per_b[k][0].item, per_b[k][0].answer) for k in use])
                a_only, b_only = int((right_a & ~right_b).sum()), int((~right_a & right_b).sum())
                note = "McNemar on repeat 0" if max(len(ra.by_repeat), len(rb.by_repeat)) > 1 else ""
                row = Paired(**{**row.__dict__, "p_mcnemar": mcnemar_exact(a_only, b_only), "a_only": a_only,
                                "b_only": b_only, "note": note})
            result.rows.append(row)
    return result
