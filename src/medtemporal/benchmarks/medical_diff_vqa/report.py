"""Medical-Diff-VQA tables in the layout of EKAID's evaluation and the headline figure.

``medical-diff-vqa_tables.md`` (every table names each run's test set, `release.SPLITS`):

* the text metrics over all questions (EKAID ``evaluate_score.py`` ``caption_metric``): BLEU-1…4, METEOR,
  ROUGE-L, CIDEr, as pycocoevalcap prints them (fractions; CIDEr up to 10), one row per run;
* the same per ``question_type`` (``caption_metric_by_question_type``), ``difference`` on its own row;
* accuracy as EKAID's ``acc`` (exact match, difference questions left out): total, open, closed and per
  type, each run beside what the text alone answers (the manifest's audit: its best reader per question
  type) and the audit's table;
* the same tables as EKAID scores the run (the ``EKAID`` variant, `ekaid`): text metrics over all questions
  and per type on each type's questions alone, accuracy total / open / closed on the raw outputs;
* the overall values again with their patient-clustered 95% intervals;
* published rows (`published`): EKAID's and later tables, secondary transcriptions, labelled so.

``medical-diff-vqa_types.png``: accuracy and BLEU-1 per question type for each run, with intervals and the
text-only level. Model numbers come from ``scores.json``; the text-only level from the benchmark's audit.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Sequence

from medtemporal.benchmarks.medical_diff_vqa.ekaid import NAME as EKAID
from medtemporal.benchmarks.medical_diff_vqa.published import TABLES
from medtemporal.benchmarks.medical_diff_vqa.release import TYPES, split_label
from medtemporal.report.family import (
    DASH,
    FamilyReport,
    Level,
    Panel,
    ReportRun,
    cell,
    grouped_bars,
    markdown_table,
    published_section,
    variant_runs,
)

TEXT_METRICS = (("BLEU-1", "diffvqa_bleu_1"), ("BLEU-2", "diffvqa_bleu_2"), ("BLEU-3", "diffvqa_bleu_3"),
                ("BLEU-4", "diffvqa_bleu_4"), ("METEOR", "diffvqa_meteor"), ("ROUGE-L", "diffvqa_rouge_l"),
                ("CIDEr", "diffvqa_cider"))
BY_TYPE = (*TEXT_METRICS[:-1], ("CIDEr", "diffvqa_cider_by_type"))
"""Per question type as EKAID computes it: CIDEr's document frequencies from the type's own questions."""
BLIND_ROW = "Text alone (the audit's best reader)"
TEST_SET = "Test set"
FRACTION = {"scale": 1.0, "digits": 3}
"""The text metrics as pycocoevalcap prints them: fractions to three decimals."""


def _types(runs: Sequence[ReportRun]) -> list[str]:
    return [t for t in TYPES if any(r.scores.score(f"subtype:{t}", "diffvqa_bleu_1") or
                                    r.scores.score(f"subtype:{t}", "accuracy") for r in runs)]


def test_sets(runs: Sequence[ReportRun]) -> dict[Path, str]:
    """Each run's test set (`release.split_label` of its benchmark's manifest)."""
    return {run.path: split_label(run.benchmark.manifest.config) for run in runs}


def text_table(runs: Sequence[ReportRun], group: str, sets: Mapping[Path, str], *, ci: bool = False) -> str:
    """The seven text metrics of ``group``, one row per run with its test set."""
    rows = []
    for run in runs:
        first = run.scores.score(group, "diffvqa_bleu_1")
        rows.append([run.label, *(cell(run.scores.score(group, m), ci=ci, **FRACTION) for _, m in TEXT_METRICS),
                     str(first.n) if first else DASH, sets.get(run.path, DASH)])
    return markdown_table(["Run", *(label for label, _ in TEXT_METRICS), "n", TEST_SET], rows)


def type_table(run: ReportRun, types: Sequence[str], metrics: Sequence[tuple[str, str]] = TEXT_METRICS) -> str:
    """One run's text metrics per question type."""
    rows = [[t, *(cell(run.scores.score(f"subtype:{t}", m), **FRACTION) for _, m in metrics)] for t in types]
    return markdown_table(["Question type", *(label for label, _ in metrics)], rows)


def accuracy_table(runs: Sequence[ReportRun], types: Sequence[str], blind: Mapping[str, tuple[int, float]],
                   sets: Mapping[Path, str], metric: str = "accuracy") -> str:
    """EKAID's ``acc`` layout: total, open, closed and per non-difference type, each run with its test set; the
    text-alone row last."""
    columns = [("Total", "overall"), ("Open", "task:open"), ("Closed", "task:closed"),
               *((t, f"subtype:{t}") for t in types if t != "difference")]
    rows = []
    for run in runs:
        total = run.scores.score("overall", metric)
        rows.append([run.label, *(cell(run.scores.score(g, metric)) for _, g in columns),
                     str(total.invalid) if total else DASH, sets.get(run.path, DASH)])
    if blind:
        rows.append([BLIND_ROW, *(cell(blind[g][1] if g in blind else None) for _, g in columns), DASH, DASH])
    return markdown_table(["Run", *(label for label, _ in columns), "Invalid", TEST_SET], rows)


def text_levels(audit: Mapping[str, Any] | None) -> dict[str, tuple[int, float]]:
    """Group → (questions, accuracy of the audit's best blind reader) from the manifest's audit rows: each
    question type over its closed and open rows, each task, and ``overall`` (closed and open, as accuracy),
    weighted by the rows' questions."""
    parts: dict[str, list[tuple[int, float]]] = {}
    for row in (audit or {}).get("subtypes", []):
        value = (row["n"], row[row["best"]]["accuracy"])
        for group in (f"subtype:{row['subtype']}", f"task:{row['task']}",
                      *(("overall",) if row["task"] != "difference" else ())):
            parts.setdefault(group, []).append(value)
    return {g: (sum(n for n, _ in v), sum(n * a for n, a in v) / sum(n for n, _ in v)) for g, v in parts.items()}


def types_png(runs: Sequence[ReportRun], types: Sequence[str], blind: Mapping[str, tuple[int, float]]) -> bytes:
    """Accuracy (difference excluded) and BLEU-1 per question type, bars per run with intervals."""
    closed = [t for t in types if t != "difference"]
    levels = [Level(BLIND_ROW, [blind[f"subtype:{t}"][1] if f"subtype:{t}" in blind else None for t in closed],
                    dashed=False)] if blind else []
    return grouped_bars(runs, [
        Panel(closed, [[run.scores.score(f"subtype:{t}", "accuracy") for t in closed] for run in runs],
              "accuracy (%)", title="Accuracy (%)", levels=levels),
        Panel(list(types), [[run.scores.score(f"subtype:{t}", "diffvqa_bleu_1") for t in types] for run in runs],
              "BLEU-1", percent=False, title="BLEU-1"),
    ])


def ekaid_section(runs: Sequence[ReportRun], types: Sequence[str], sets: Mapping[Path, str]) -> list[str]:
    """The tables as EKAID scores the runs (their ``EKAID`` variant); none for runs scored before it existed."""
    if not runs:
        return []
    parts = [f"## As EKAID scores it (variant `{EKAID}`)", "",
             "The raw output of every question against the released answer, as EKAID's `model/evaluate_score.py` "
             "scores its results file: accuracy is exact string equality (surrounding space stripped, nothing "
             "else: \"Yes.\" is not \"yes\"), closed questions are those answered yes or no, questions containing "
             "\"what has changed\" are left out (`acc`); the text metrics score the raw output, per question type on "
             "that type's questions alone, CIDEr's document frequencies included (`caption_metric_by_question_type`). "
             "The paper's numbers are on EKAID's test set (`--split ekaid`).", "",
             "### All questions (`caption_metric`)", "", text_table(runs, "overall", sets), "",
             "### Accuracy (`acc`)", "", accuracy_table(runs, types, {}, sets, "diffvqa_ekaid_accuracy"), ""]
    for run in runs:
        parts += [f"### Per question type: {run.label} (test set: {sets[run.path]})", "",
                  type_table(run, types, BY_TYPE), ""]
    return parts


def _java_note(runs: Sequence[ReportRun]) -> list[str]:
    java = str((runs[0].scores.metrics.get("diffvqa_bleu_1", {}).get("settings") or {}).get("java", ""))
    return [f"**The text metrics are unavailable** ({java.removeprefix('unavailable: ')}); accuracy is not "
            "affected.", ""] if java.startswith("unavailable") else []


def write_medical_diff_vqa_report(ctx: FamilyReport) -> None:
    """Write ``medical-diff-vqa_tables.md`` and ``medical-diff-vqa_types.png`` for the runs."""
    runs = ctx.runs
    blind = text_levels(ctx.audit)
    types = _types(runs)
    sets = test_sets(runs)
    figure = ctx.write("types.png", types_png(runs, types, blind))
    parts = ["# Medical-Diff-VQA", "",
             "Text metrics by pycocoevalcap on PTB tokens, one reference per question, as EKAID's "
             "`model/evaluation.py` (fractions, as it prints them; CIDEr runs to 10). Accuracy × 100: exact match "
             "of the extracted answer (Yes/No for closed questions, the whole answer for open ones), difference "
             "questions left out, as EKAID's `acc`. The tables up to the EKAID section are ours; that section "
             "scores the same outputs as EKAID's `evaluate_score.py` does. Test sets: the release's test split "
             "(`build --split release`, the default) or EKAID's, the last 10% of the file's rows "
             "(`--split ekaid`), on which the paper reports.", "", *_java_note(runs),
             "## All questions (EKAID `caption_metric`)", "", text_table(runs, "overall", sets), "",
             "## Difference questions, on their own", "", text_table(runs, "task:difference", sets), ""]
    parts += ["## Per question type (EKAID `caption_metric_by_question_type`)", "",
              "CIDEr's document frequencies come from all questions of the run; EKAID recomputes them per type, so "
              "per-type CIDEr can differ from its script (the EKAID section below computes it that way; the other "
              "metrics equal the library's on each type).", ""]
    for run in runs:
        parts += [f"### {run.label} (test set: {sets[run.path]})", "", type_table(run, types), ""]
    parts += ["## Accuracy (EKAID `acc`; difference questions excluded)", "",
              accuracy_table(runs, types, blind, sets), "",
              f"{BLIND_ROW}: the accuracy of the blind-solvability audit's best reader of each question type (text "
              "only, fitted on other patients): for open questions the commonest answer of the same question text. "
              "A type where it is high is answerable without the images; compare models with that row, not with "
              "zero.", "",
              "### Audit (shared audit: text only, cross-validated by patient)", "",
              ctx.audit_table(first="Question type", with_task=True) or "No audited question type in the benchmark's manifest (too "
              "few questions, or built with --no-audit).", ""]
    parts += ekaid_section(variant_runs(runs, EKAID), types, sets)
    parts += ["## With patient-clustered 95% intervals", "", text_table(runs, "overall", sets, ci=True), "",
              markdown_table(["Run", "Accuracy total", "Open", "Closed", TEST_SET],
                             [[r.label, *(cell(r.scores.score(g, "accuracy"), ci=True)
                                          for g in ("overall", "task:open", "task:closed")), sets[r.path]]
                              for r in runs]), "",
              f"![accuracy and BLEU-1 per question type]({figure.name})", "",
              published_section(TABLES, runs)]
    ctx.write("tables.md", "\n".join(parts))
