"""3D-RAD tables in the paper's layout, both scoring rules side by side (``3d-rad_tables.md``).

- Closed tasks (paper Tables 3–4): per run, Tasks 4–6 accuracy × 100, macro over subtasks
  (labels for Task 4, scan letters b–h for Tasks 5–6: the paper's "macro") with micro (over
  items) beside it, under our strict letter extraction and under the released ``"X."`` rule
  (labelled "as released").
- Per-subtask tables for Tasks 4–6 (strict).
- Open tasks (paper Table 5): BLEU-1, ROUGE-1, METEOR and BERTScore × 100 per task, macro over subtasks.

Runs of baselines (``baseline:*``, ``rad3d:*``) are marked as reference rows: several published
model scores sit at their level (FACTS §1.1). Values come from ``scores.json``: the strict scores and the
variant "as released" that ``medtemporal score`` writes beside them (`scoring.RELEASED`).
"""

from __future__ import annotations

import math
from typing import Sequence

from medtemporal.benchmarks.rad3d.labels import CLOSED_TASKS, EXISTENCE_ORDER, LETTERS_BH, OPEN_SUBTASKS, OPEN_TASKS, TASKS
from medtemporal.benchmarks.rad3d.scoring import OPEN_METRICS, macro
from medtemporal.benchmarks.rad3d.published import TABLES
from medtemporal.family import PublishedTable, Score
from medtemporal.report.family import (
    FamilyReport, ReportRun, caution, cell, markdown_table, published_section, unavailable_notes,
)

TASK4_TEXT = ("rad3d_bleu_1", "rad3d_rouge_1")
OPEN_LABELS = {"rad3d_bleu_1": "BLEU", "rad3d_rouge_1": "ROUGE-1", "rad3d_meteor": "METEOR", "bertscore_f1": "BERTScore"}


def _subtypes(task: str) -> list[str]:
    if task == "task4":
        return list(EXISTENCE_ORDER)
    if task in OPEN_SUBTASKS:
        return list(OPEN_SUBTASKS[task])
    return [f"{task}_{letter}" for letter in LETTERS_BH]


def _fmt(value: float | None) -> str:
    """× 100 to two decimals (`cell`'s rule; NaN, from a metric that could not be computed, is "unavailable")."""
    return cell(value, digits=2, unavailable=value is not None and math.isnan(value))


def _released(run: ReportRun) -> list[Score]:
    """The run's scores under the release's rule (empty for a run scored before variants were written)."""
    variant = (run.scores.variants or {}).get("as released") or {}
    return [Score.model_validate(s) for s in variant.get("scores", ())]


def task4_text_table(runs: Sequence[ReportRun]) -> str | None:
    """Task 4 as the released code scores it (text metrics against "<letter>. <answer>"), macro and micro."""
    header = ["Run", *(f"{OPEN_LABELS[m]} {kind}" for m in TASK4_TEXT for kind in ("macro", "micro"))]
    rows = []
    for run in runs:
        variant = (run.scores.variants or {}).get("task 4 as the release computes it") or {}
        scores = [Score.model_validate(s) for s in variant.get("scores", ())]
        if scores:
            rows.append([_label(run), *(v for m in TASK4_TEXT for v in (
                _fmt(macro(scores, m, _subtypes("task4"))), _fmt(_micro(scores, "task4", m))))])
    return markdown_table(header, rows) if rows else None


def _label(run: ReportRun) -> str:
    model = str(run.scores.run.model or "")
    return f"{run.label} (reference)" if model.startswith(("baseline:", "rad3d:")) else run.label


def _micro(scores: Sequence[Score], task: str, metric: str = "accuracy") -> float | None:
    return next((s.value for s in scores if s.group == f"task:{task}" and s.metric == metric), None)


def closed_table(runs: Sequence[ReportRun]) -> str:
    """Tasks 4–6: macro and micro accuracy, strict and as released."""
    header = ["Run"]
    for task in CLOSED_TASKS:
        name = TASKS[task][2]
        header += [f"{name} macro", f"{name} micro", f"{name} macro (as released)", f"{name} micro (as released)"]
    header += ["Invalid (strict)"]
    rows = []
    for run in runs:
        strict, rel = run.scores.scores, _released(run)
        row = [_label(run)]
        for task in CLOSED_TASKS:
            subs = _subtypes(task)
            row += [_fmt(macro(strict, "accuracy", subs)), _fmt(_micro(strict, task)),
                    _fmt(macro(rel, "accuracy", subs)), _fmt(_micro(rel, task))]
        invalid = sum(s.invalid for s in strict if s.metric == "accuracy" and s.group in {f"task:{t}" for t in CLOSED_TASKS})
        rows.append(row + [str(invalid)])
    return markdown_table(header, rows)


def subtask_table(runs: Sequence[ReportRun], task: str) -> str:
    """One closed task's accuracy per subtask (strict)."""
    subs = _subtypes(task)
    header = ["Run", *(s.rsplit("_", 1)[-1] if task != "task4" else s for s in subs), "Macro"]
    rows = []
    for run in runs:
        values = {s.group: s.value for s in run.scores.scores if s.metric == "accuracy"}
        rows.append([_label(run), *(_fmt(values.get(f"subtype:{s}")) for s in subs),
                     _fmt(macro(run.scores.scores, "accuracy", subs))])
    return markdown_table(header, rows)


def open_table(runs: Sequence[ReportRun]) -> str:
    """Tasks 1–3: the released metrics, macro over subtasks (paper Table 5)."""
    header = ["Run", *(f"{TASKS[t][2]} {OPEN_LABELS[m]}" for t in OPEN_TASKS for m in OPEN_METRICS)]
    rows = [[_label(run), *(_fmt(macro(run.scores.scores, m, _subtypes(t))) for t in OPEN_TASKS for m in OPEN_METRICS)]
            for run in runs]
    return markdown_table(header, rows)


def published_values(table: PublishedTable, run: ReportRun) -> tuple[float | None, ...]:
    """A run's values in a published table's columns: each the macro over its task's subtasks (``macro:<task>``),
    closed tasks under the release's rule, × 100."""
    out: list[float | None] = []
    for col in table.columns:
        scores = _released(run) if col.variant else run.scores.scores
        value = macro(scores, str(col.metric), _subtypes(str(col.group).removeprefix("macro:")))
        out.append(None if value is None else value * col.scale)
    return tuple(out)


def write_rad3d_report(ctx: FamilyReport) -> None:
    """Write ``3d-rad_tables.md``."""
    runs = ctx.runs
    tasks = {lay.task for run in runs for lay in run.scores.layout}
    parts = ["# 3D-RAD", "",
             "Accuracy × 100. Macro = mean over subtasks (the paper's); micro = over items. Strict: one valid "
             "option letter, else invalid (wrong). As released: right when the output contains \"<gold>.\" "
             "(case-sensitive substring, `eval_3DRAD.py` line 123). The release scores Task 4 with text metrics "
             "(`evaluate_result.py` lines 131–142); it is scored here as accuracy, as the paper reports it, and "
             "what the release computes is shown after the closed tasks, labelled.", ""]
    if tasks & set(CLOSED_TASKS):
        parts += ["## Closed tasks (Tables 3–4)", "", closed_table(runs), ""]
        as_text = task4_text_table(runs) if "task4" in tasks else None
        if as_text:
            parts += ["### Task 4 as the released code computes it (not the paper's accuracy)", "",
                      "BLEU-1 and ROUGE-1 F × 100 of the raw output against the release's gold string "
                      "\"<letter>. <answer>\" (e.g. \"B. No\"); BERTScore left out.", "", as_text, ""]
        for task in CLOSED_TASKS:
            if task in tasks:
                parts += [f"### {TASKS[task][2]} per subtask (strict)", "", subtask_table(runs, task), ""]
    if tasks & set(OPEN_TASKS):
        parts += ["## Open tasks (Table 5)", "",
                  "Corpus BLEU-1, ROUGE-1 F, METEOR, BERTScore F1 × 100, macro over subtasks; an empty answer scores 0 "
                  "(the release drops it).", "", *(f"{n}\n" for m in OPEN_METRICS for n in unavailable_notes(runs, m)),
                  open_table(runs), ""]
    parts.append(published_section(TABLES, runs, values=published_values, cautions=lambda run: caution(
        run, lambda m: m.config.get("source") == "official", "the paper's released test CSVs")))
    ctx.write("tables.md", "\n".join(parts))
