"""MI-CXR's analyses beyond Table 1, as paper-layout Markdown tables and a figure.

- `source_statistics` — Tables 11–14 (certainty patterns, inter-study gaps, window spans, gap bins)
  computed from a built benchmark's items (their ``meta.states`` and image timestamps), one row per
  distinct five-visit window. The paper's Table 11 counts candidate windows *before* filtering; ours counts
  the windows of the built items (after filtering), and says so.
- `temperature_table` — Tables 15–16 / Appendix C: each model's accuracy per family at every temperature
  it was run at, mean ± sd over repeats, and the share of items whose answer flipped between repeats.
- `stagewise_table` — Fig. 3: stage-wise vs direct for the same model, paired per item on the common items
  (`medtemporal.scoring.compare`); `description_check` reads the stage-1 descriptions and, where one
  interval's text names exactly one kind of change, checks it against the item's annotated change.
- `icrv_table` — Table 2: the ICR variant on its own.
- `error_taxonomy` — Appendix G (Fig. 25): every wrong answer labelled by rules where the item decides it
  (`rule_label`); `judge_table` — the types that need reading the output, as the LLM judge labelled them
  (`error_judge`, stored in the run by ``medtemporal score RUN --judge URI``), in Fig. 25's layout.

`write_mi_cxr_report` writes them all (``mi-cxr_analyses.md``, ``mi-cxr_errors.png``, ``mi-cxr_judged_errors.png``)
for the spec's ``report`` hook.
"""

from __future__ import annotations

import datetime as dt
import re
import warnings
from collections import Counter
from typing import Any, Sequence

import numpy as np

from medtemporal.family import Benchmark, Item, is_correct
from medtemporal.benchmarks.mi_cxr.balance import NULL_LETTER
from medtemporal.benchmarks.mi_cxr.stage1 import CHANGE_WORDS, SAME, interval_texts
from medtemporal.benchmarks.mi_cxr.error_judge import JUDGE_TYPES, stored_labels
from medtemporal.benchmarks.mi_cxr.published import TABLES
from medtemporal.report.family import (
    DASH, FamilyReport, ReportRun, caution, cell, figure_png, legend_columns, markdown_table, published_section,
    pyplot,
)
from medtemporal.scoring.aggregate import WEIGHTED_OVERALL
from medtemporal.scoring.compare import ComparisonWarning, compare_runs

FAMILIES = ("TEL", "ICR", "GTS")
GAP_BINS = ((0, 1, "<1"), (1, 7, "1-7"), (7, 30, "7-30"), (30, 180, "30-180"), (180, np.inf, ">180"))
"""Table 14's bins in days (lower bound inclusive)."""

RULE_LABELS = {
    "abstention": "Abstention: chose the null option although an event existed (Abstention under Uncertainty)",
    "forced_choice": "Forced choice: chose an event although the answer was null (Forced Choice under "
                     "Insufficient Evidence)",
    "exclusivity": "Temporal exclusivity: chose another interval where the abnormality also changed",
    "wrong_interval": "Wrong interval: chose an interval with no such change",
    "contradicted_statement": "Contradicted statement: chose an interval statement another interval contradicts",
    "global_integration": "Global integration: chose a trajectory inconsistent with the intervals",
    "invalid": "No valid answer (invalid or missing)",
}
"""Rule labels of `rule_label`, with the paper's error type (Appendix G) they stand for in brackets."""

def _days(a: str | None, b: str | None) -> float | None:
    if not a or not b:
        return None
    return (dt.datetime.fromisoformat(b) - dt.datetime.fromisoformat(a)).total_seconds() / 86400


def _windows(items: Sequence[Item]) -> list[Item]:
    """One item per distinct window (patient and study ids)."""
    seen: dict[tuple[str, ...], Item] = {}
    for item in items:
        key = (item.cluster, *item.meta.get("study_ids", [ref.path for ref in item.images]))
        seen.setdefault(key, item)
    return list(seen.values())


def source_statistics(bench: Benchmark) -> str:
    """Tables 11–14 from a built MI-CXR benchmark, as Markdown."""
    items = bench.items
    tel = [i for i in items if i.task == "TEL" and i.meta.get("states")]
    patterns = Counter("-".join(i.meta["states"]) for i in {(i.cluster, i.meta.get("window"), i.meta.get("abnormality")):
                                                             i for i in tel}.values())
    rows11 = [[p, str(n)] for p, n in patterns.most_common(8)]
    rest = sum(patterns.values()) - sum(n for _, n in patterns.most_common(8))
    if rest:
        rows11.append(["other patterns", str(rest)])
    windows = _windows(items)
    gaps: list[list[float]] = [[], [], [], []]
    spans = []
    for item in windows:
        stamps = [ref.timestamp for ref in sorted(item.images, key=lambda r: r.visit or 0) if ref.role == "visit"]
        days = [_days(a, b) for a, b in zip(stamps, stamps[1:])]
        if len(days) == 4 and all(d is not None for d in days):
            for k, d in enumerate(days):
                gaps[k].append(d)  # type: ignore[arg-type]
            spans.append(sum(days))  # type: ignore[arg-type]

    def stats(values: Sequence[float]) -> list[str]:
        if not values:
            return [DASH] * 6
        v = np.asarray(values)
        return [f"{x:.2f}" for x in (np.median(v), v.mean(), *np.percentile(v, [25, 75, 90]), v.max())]

    labels = ["T1 → T2", "T2 → T3", "T3 → T4", "T4 → T5"]
    rows12 = [[label, *stats(g)] for label, g in zip(labels, gaps)]
    span = stats(spans)
    rows13 = [[name, span[k]] for k, name in enumerate(["Median", "Mean", "P25", "P75", "P90", "Max"])]
    rows14 = []
    for label, g in zip(labels, gaps):
        v = np.asarray(g)
        rows14.append([label, *(f"{100 * ((v >= lo) & (v < hi)).mean():.1f}" if len(v) else DASH
                                for lo, hi, _ in GAP_BINS)])
    return "\n\n".join([
        "### Certainty patterns of TEL windows (Table 11 layout; built items, after filtering)",
        markdown_table(["Window certainty pattern", "Count"], rows11),
        f"### Inter-study gaps in days over {len(spans)} distinct windows (Table 12 layout)",
        markdown_table(["Interval", "Median", "Mean", "P25", "P75", "P90", "Max"], rows12),
        "### Total span T1 → T5 in days (Table 13 layout)",
        markdown_table(["Statistic", "Value (days)"], rows13),
        "### Inter-study gaps by bin, % (Table 14 layout)",
        markdown_table(["Interval", *(b[2] for b in GAP_BINS)], rows14),
    ])


def _temperature(run: ReportRun) -> float:
    return float((run.config.generation.get("temperature") if run.config else None) or 0.0)


def _mean_sd(run: ReportRun, group: str) -> str:
    """``31.5 ± 2.1`` over repeats, or the single value."""
    if run.scores.repeats:
        row = next((s for s in run.scores.repeats["scores"] if s["group"] == group and s["metric"] == "accuracy"), None)
        if row is not None:
            sd = f" ± {100 * row['sd']:.1f}" if row["sd"] is not None else ""
            return f"{100 * row['mean']:.1f}{sd}"
    return cell(run.scores.score(group, "accuracy"))


def temperature_table(runs: Sequence[ReportRun]) -> str:
    """Accuracy per family at each temperature per model and protocol, with flips over repeats."""
    rows = []
    for run in sorted(runs, key=lambda r: (str(r.scores.run.model), str(r.scores.run.protocol), _temperature(r))):
        flips = (run.scores.repeats or {}).get("consistency", {}).get("overall")
        rows.append([str(run.scores.run.model), str(run.scores.run.protocol), f"{_temperature(run):g}",
                     str((run.scores.repeats or {}).get("n", 1)),
                     *(_mean_sd(run, f"task:{f}") for f in FAMILIES), _mean_sd(run, WEIGHTED_OVERALL),
                     _mean_sd(run, "overall"),
                     DASH if flips is None else f"{100 * (1 - flips['answer_agreement']):.1f}"])
    return markdown_table(["Model", "Protocol", "Temperature", "Repeats", *FAMILIES, "Overall (paper)",
                           "Overall (micro)", "Items that flipped (%)"], rows)


def _paired_rows(a: ReportRun, b: ReportRun, label: str) -> list[list[str]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ComparisonWarning)
        result = compare_runs(a.outcomes, b.outcomes)
    rows = []
    for r in result.rows:
        if r.metric != "accuracy":
            continue
        ci = DASH if r.ci_low is None else f"[{100 * r.ci_low:+.1f}, {100 * r.ci_high:+.1f}]"
        rows.append([str(a.scores.run.model), label, r.group, str(r.n), f"{100 * r.b:.1f}",
                     f"{100 * r.a:.1f}", f"{100 * r.diff:+.1f}", ci, f"{r.p_mcnemar:.3g}"])
    return rows


def stagewise_table(runs: Sequence[ReportRun]) -> str | None:
    """Fig. 3: stage-wise − direct per model, paired on common items; None without such a pair."""
    rows = []
    for run in runs:
        if run.scores.run.protocol != "stagewise":
            continue
        direct = next((r for r in runs if r.scores.run.protocol == "direct"
                       and r.scores.run.model == run.scores.run.model
                       and _temperature(r) == _temperature(run)), None)
        if direct is not None:
            rows += _paired_rows(run, direct, "stage-wise − direct")
    if not rows:
        return None
    return markdown_table(["Model", "Comparison", "Group", "n", "Direct", "Stage-wise", "Difference", "95% CI",
                           "McNemar p"], rows)


def temperature_pairs(runs: Sequence[ReportRun]) -> str | None:
    """T > 0 − T = 0 per model and protocol, paired on common items; None without such a pair."""
    rows = []
    for run in runs:
        if _temperature(run) == 0:
            continue
        cold = next((r for r in runs if _temperature(r) == 0 and r.scores.run.model == run.scores.run.model
                     and r.scores.run.protocol == run.scores.run.protocol), None)
        if cold is not None:
            rows += _paired_rows(run, cold, f"T={_temperature(run):g} − T=0")
    if not rows:
        return None
    return markdown_table(["Model", "Comparison", "Group", "n", "T=0", "T>0", "Difference", "95% CI",
                           "McNemar p (repeat 0)"], rows)


def description_check(run: ReportRun) -> dict[str, int]:
    """Stage-1 descriptions against the annotated interval changes of single-abnormality items.

    An interval is *decided* when its text names exactly one kind of change (`CHANGE_WORDS`); returns
    counts of ``intervals`` read, ``decided`` and ``agree``, and ``items_all_agree`` / ``right_when_all_agree``
    (items whose every decided interval agrees, and how many of them were answered right).
    """
    loaded = run.outcomes
    tally: Counter[str] = Counter()
    for r, outcomes in enumerate(loaded.by_repeat):
        for o in outcomes:
            changes = o.item.meta.get("changes")
            p = loaded.latest.get((o.item.id, r))
            describe = next((c.get("output") for c in (p.calls if p else ()) if c.get("stage") == "describe"), None)
            if not describe or not isinstance(changes, list) or o.item.subtype.startswith(("icr", "multi_entity")):
                continue
            agree_all, decided_any = True, False
            for text, change in zip(interval_texts(describe, len(changes) + 1), changes):
                tally["intervals"] += 1
                kinds = {k for k, pattern in CHANGE_WORDS.items() if text and re.search(pattern, text, re.I)}
                if len(kinds) != 1:
                    continue
                decided_any = True
                tally["decided"] += 1
                if kinds == {SAME.get(change, change)}:
                    tally["agree"] += 1
                else:
                    agree_all = False
            if decided_any and agree_all:
                tally["items_all_agree"] += 1
                tally["right_when_all_agree"] += int(is_correct(o.item, o.answer))
    return {k: tally[k] for k in ("intervals", "decided", "agree", "items_all_agree", "right_when_all_agree")}


def description_table(runs: Sequence[ReportRun]) -> str | None:
    """`description_check` per stage-wise run; None without stage-wise runs."""
    rows = []
    for run in runs:
        if run.scores.run.protocol != "stagewise":
            continue
        c = description_check(run)
        pct = lambda a, b: DASH if not b else f"{100 * a / b:.1f}"  # noqa: E731
        rows.append([run.label, str(c["intervals"]), str(c["decided"]), pct(c["agree"], c["decided"]),
                     str(c["items_all_agree"]), pct(c["right_when_all_agree"], c["items_all_agree"])])
    if not rows:
        return None
    return markdown_table(["Run", "Intervals described", "Decided by rules", "Agree with annotation (%)",
                           "Items whose decided intervals all agree", "Of those answered right (%)"], rows)


def icrv_table(runs: Sequence[ReportRun]) -> str | None:
    """Table 2: ICR-V accuracy per run with its interval; None when no run has ICR-V items."""
    rows = []
    for run in runs:
        score = run.scores.score("task:ICR-V", "accuracy")
        if score is None:
            continue
        rows.append([run.label, str(score.n), cell(score, ci=True), cell(score.chance)])
    return markdown_table(["Run", "n", "ICR-V accuracy (%)", "Chance"], rows) if rows else None


def rule_label(item: Item, answer: Any) -> str | None:
    """The rule-decided error type of a wrong ``answer`` (None when it is right)."""
    if is_correct(item, answer):
        return None
    if answer is None:
        return "invalid"
    gold_null = item.answer == NULL_LETTER
    chose_null = str(answer).upper() == NULL_LETTER
    if chose_null:
        return "abstention"
    if gold_null:
        return "forced_choice"
    if item.task == "TEL":
        chosen = item.options.get(str(answer).upper(), "")
        changed = set(item.meta.get("emergences", [])) | set(item.meta.get("resolutions", []))
        return "exclusivity" if any(i in chosen for i in changed) else "wrong_interval"
    if item.task in ("ICR", "ICR-V"):
        return "contradicted_statement"
    return "global_integration"


def error_taxonomy(run: ReportRun) -> dict[str, Counter[str]]:
    """Family → rule label → count over every wrong answer of a run (all repeats)."""
    counts: dict[str, Counter[str]] = {}
    for outcomes in run.outcomes.by_repeat:
        for o in outcomes:
            label = rule_label(o.item, o.answer)
            if label is not None:
                counts.setdefault(o.item.task, Counter())[label] += 1
    return counts


def judged_taxonomy(run: ReportRun) -> dict[str, Counter[str]]:
    """Family → judge label (``unparseable`` for a verdict it could not read) → count, from the run's stored
    labels (`error_judge.stored_labels`, the judge that wrote last); empty when no judge labelled the run."""
    labels = stored_labels(run.folder)
    if not labels:
        return {}
    counts: dict[str, Counter[str]] = {}
    for r, outcomes in enumerate(run.outcomes.by_repeat):
        for o in outcomes:
            if (o.item.id, r) in labels and not is_correct(o.item, o.answer):
                counts.setdefault(o.item.task, Counter())[labels[(o.item.id, r)] or "unparseable"] += 1
    return counts


def _stacked(per_family: dict[str, Counter[str]], labels: dict[str, str], title: str) -> bytes:
    """Horizontal stacked bars: each family's share of its counted errors by label (Fig. 25 layout)."""
    fig, ax = pyplot().subplots(figsize=(7.5, 3.6), layout="constrained")
    families = list(per_family)
    left = np.zeros(len(families))
    for k, (label, name) in enumerate(labels.items()):
        share = np.array([100 * per_family[f][label] / max(1, sum(per_family[f][x] for x in labels))
                          for f in families])
        ax.barh(families, share, left=left, label=name, color=f"C{k}")
        left += share
    ax.set_xlabel("share of wrong answers (%)")
    ax.set_xlim(0, 100)
    names = list(labels.values())
    fig.legend(loc="outside upper center", ncol=legend_columns(names, 7.5), frameon=False, fontsize=9, title=title,
               title_fontproperties={"size": 10})
    return figure_png(fig)


def judge_table(runs: Sequence[ReportRun]) -> tuple[str, bytes | None] | None:
    """Judge-labelled error types per run and family, and Fig. 25 (TEL, ICR, GTS; local interval
    misinterpretation counted in the table but left out of the figure, as the paper does); None when no run
    has stored labels."""
    rows, per_family, judges = [], {}, set()
    for run in runs:
        counts = judged_taxonomy(run)
        if counts:
            judges.add(str((run.scores.judge or {}).get("uri", "the judge recorded in error_judgements.jsonl")))
        for family, c in counts.items():
            total = sum(c.values())
            rows.append([run.label, family, str(total),
                         *(f"{c[k]} ({100 * c[k] / total:.0f}%)" if c[k] else "0" for k in (*JUDGE_TYPES, "unparseable"))])
            per_family.setdefault(family, Counter()).update(c)
    if not rows:
        return None
    table = markdown_table(["Run", "Family", "Errors judged", *JUDGE_TYPES.values(), "Unparseable"], rows)
    shown = {f: per_family[f] for f in FAMILIES if f in per_family}
    task_aligned = {k: v for k, v in JUDGE_TYPES.items() if k != "local_misinterpretation"}
    png = _stacked(shown, task_aligned, "Task-aligned reasoning failure types (judge: " + ", ".join(sorted(judges))
                   + ")") if shown else None
    return table, png


def taxonomy_table(runs: Sequence[ReportRun]) -> tuple[str, bytes | None]:
    """Counts (share of the family's errors, %) per run and family, and a stacked-bar figure (Fig. 25 layout)."""
    rows, per_family = [], {}
    for run in runs:
        counts = error_taxonomy(run)
        for family, c in counts.items():
            total = sum(c.values())
            rows.append([run.label, family, str(total),
                         *(f"{c[k]} ({100 * c[k] / total:.0f}%)" if c[k] else "0" for k in RULE_LABELS)])
            per_family.setdefault(family, Counter()).update(c)
    table = markdown_table(["Run", "Family", "Errors", *RULE_LABELS], rows)
    if not per_family:
        return table, None
    names = {k: k.replace("_", " ") for k in RULE_LABELS}
    return table, _stacked(per_family, names, "Error types by task family (rule-labelled)")


def write_mi_cxr_report(ctx: FamilyReport) -> None:
    """Write ``mi-cxr_analyses.md`` (and ``mi-cxr_errors.png``, ``mi-cxr_judged_errors.png``) for MI-CXR runs."""
    runs = ctx.runs
    parts = ["# MI-CXR analyses", "", published_section(TABLES, runs, cautions=lambda run: caution(
        run, lambda m: "official" in m.config, "the paper's released test set")), "",
             "## Temperature sensitivity (Tables 15–16 layout): accuracy (%) per family, mean ± sd over repeats",
             "", temperature_table(runs)]
    for title, table in (("Temperature, paired on common items", temperature_pairs(runs)),
                         ("Stage-wise vs direct, paired on common items (Fig. 3)", stagewise_table(runs)),
                         ("Stage-1 descriptions against the annotated interval changes", description_table(runs)),
                         ("ICR variant (Table 2 layout)", icrv_table(runs))):
        if table is not None:
            parts += ["", f"## {title}", "", table]
    taxonomy, png = taxonomy_table(runs)
    parts += ["", "## Error types of wrong answers by rules (Appendix G, where the item decides)", "", taxonomy]
    judged = judge_table(runs)
    if judged is None:
        parts += ["", "Judge-labelled error types: none yet; label wrong answers with `medtemporal score RUN --judge URI`."]
    else:
        parts += ["", "## Error types of wrong answers by the LLM judge (Appendix G, Fig. 25 layout)", "", judged[0]]
    parts += ["", "## Source statistics of the benchmark", "", source_statistics(ctx.benchmark)]
    ctx.write("analyses.md", "\n".join(parts) + "\n")
    if png is not None:
        ctx.write("errors.png", png)
    if judged is not None and judged[1] is not None:
        ctx.write("judged_errors.png", judged[1])
