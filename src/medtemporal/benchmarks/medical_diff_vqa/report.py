"""Medical-Diff-VQA tables in the layout of EKAID's evaluation and the headline figure.

``medical-diff-vqa_tables.md``:

* the text metrics over all questions (EKAID ``evaluate_score.py`` ``caption_metric``): BLEU-1…4, METEOR,
  ROUGE-L, CIDEr, as pycocoevalcap prints them (fractions; CIDEr up to 10), one row per run;
* the same per ``question_type`` (``caption_metric_by_question_type``), ``difference`` on its own row;
* accuracy as EKAID's ``acc`` (exact match, difference questions left out): total, open, closed and per
  type, each run beside what the question text alone answers (`blind`, ours) and the shared audit of the
  closed questions (from the manifest);
* the overall values again with their patient-clustered 95% intervals.

``medical-diff-vqa_types.png``: accuracy and BLEU-1 per question type for each run, with intervals and the
question-text level. Model numbers come from ``scores.json``; the text-only level from the benchmark.
"""

from __future__ import annotations

from typing import Sequence

from medtemporal.benchmarks.medical_diff_vqa.blind import blind_accuracy
from medtemporal.benchmarks.medical_diff_vqa.release import TYPES
from medtemporal.report.family import DASH, FamilyReport, Level, Panel, ReportRun, cell, grouped_bars, markdown_table

TEXT_METRICS = (("BLEU-1", "diffvqa_bleu_1"), ("BLEU-2", "diffvqa_bleu_2"), ("BLEU-3", "diffvqa_bleu_3"),
                ("BLEU-4", "diffvqa_bleu_4"), ("METEOR", "diffvqa_meteor"), ("ROUGE-L", "diffvqa_rouge_l"),
                ("CIDEr", "diffvqa_cider"))
BLIND_ROW = "Question text alone (ours)"
FRACTION = {"scale": 1.0, "digits": 3}
"""The text metrics as pycocoevalcap prints them: fractions to three decimals."""


def _types(runs: Sequence[ReportRun]) -> list[str]:
    return [t for t in TYPES if any(r.scores.score(f"subtype:{t}", "diffvqa_bleu_1") or
                                    r.scores.score(f"subtype:{t}", "accuracy") for r in runs)]


def text_table(runs: Sequence[ReportRun], group: str, *, ci: bool = False) -> str:
    """The seven text metrics of ``group``, one row per run."""
    rows = []
    for run in runs:
        first = run.scores.score(group, "diffvqa_bleu_1")
        rows.append([run.label, *(cell(run.scores.score(group, m), ci=ci, **FRACTION) for _, m in TEXT_METRICS),
                     str(first.n) if first else DASH])
    return markdown_table(["Run", *(label for label, _ in TEXT_METRICS), "n"], rows)


def type_table(run: ReportRun, types: Sequence[str]) -> str:
    """One run's text metrics per question type."""
    rows = [[t, *(cell(run.scores.score(f"subtype:{t}", m), **FRACTION) for _, m in TEXT_METRICS)] for t in types]
    return markdown_table(["Question type", *(label for label, _ in TEXT_METRICS)], rows)


def accuracy_table(runs: Sequence[ReportRun], types: Sequence[str], blind: dict[str, tuple[int, float]]) -> str:
    """EKAID's ``acc``: total, open, closed and per non-difference type; the question-text row last."""
    columns = [("Total", "overall"), ("Open", "task:open"), ("Closed", "task:closed"),
               *((t, f"subtype:{t}") for t in types if t != "difference")]
    rows = []
    for run in runs:
        total = run.scores.score("overall", "accuracy")
        rows.append([run.label, *(cell(run.scores.score(g, "accuracy")) for _, g in columns),
                     str(total.invalid) if total else DASH])
    if blind:
        rows.append([BLIND_ROW, *(cell(blind[g][1] if g in blind else None) for _, g in columns), DASH])
    return markdown_table(["Run", *(label for label, _ in columns), "Invalid"], rows)


def types_png(runs: Sequence[ReportRun], types: Sequence[str], blind: dict[str, tuple[int, float]]) -> bytes:
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


def _java_note(runs: Sequence[ReportRun]) -> list[str]:
    java = str((runs[0].scores.metrics.get("diffvqa_bleu_1", {}).get("settings") or {}).get("java", ""))
    return [f"**The text metrics are unavailable** ({java.removeprefix('unavailable: ')}); accuracy is not "
            "affected.", ""] if java.startswith("unavailable") else []


def write_medical_diff_vqa_report(ctx: FamilyReport) -> None:
    """Write ``medical-diff-vqa_tables.md`` and ``medical-diff-vqa_types.png`` for the runs."""
    runs = ctx.runs
    blind = blind_accuracy(ctx.benchmark.items)
    types = _types(runs)
    figure = ctx.write("types.png", types_png(runs, types, blind))
    parts = ["# Medical-Diff-VQA", "",
             "Text metrics by pycocoevalcap on PTB tokens, one reference per question, as EKAID's "
             "`model/evaluation.py` (fractions, as it prints them; CIDEr runs to 10). Accuracy × 100: exact match "
             "of the extracted answer (Yes/No for closed questions, the whole answer for open ones), difference "
             "questions left out, as EKAID's `acc`.", "", *_java_note(runs),
             "## All questions (EKAID `caption_metric`)", "", text_table(runs, "overall"), "",
             "## Difference questions, on their own", "", text_table(runs, "task:difference"), ""]
    parts += ["## Per question type (EKAID `caption_metric_by_question_type`)", "",
              "CIDEr's document frequencies come from all questions of the run; EKAID recomputes them per type, so "
              "per-type CIDEr can differ from its script (the other metrics equal the library's on each type).", ""]
    for run in runs:
        parts += [f"### {run.label}", "", type_table(run, types), ""]
    parts += ["## Accuracy (EKAID `acc`; difference questions excluded)", "", accuracy_table(runs, types, blind), "",
              f"{BLIND_ROW}: every question answered with the commonest answer its text had among other patients "
              "(cross-validated by patient). A type where it is high is answerable without the images; compare "
              "models with that row, not with zero.", "",
              "### Audit of the closed questions (shared audit: text only, cross-validated by patient)", "",
              ctx.audit_table(first="Question type (closed)") or "No audited subtype in the benchmark's manifest "
              "(too few closed questions, or built with --no-audit).", "",
              "## With patient-clustered 95% intervals", "", text_table(runs, "overall", ci=True), "",
              markdown_table(["Run", "Accuracy total", "Open", "Closed"],
                             [[r.label, *(cell(r.scores.score(g, "accuracy"), ci=True)
                                          for g in ("overall", "task:open", "task:closed"))] for r in runs]), "",
              f"![accuracy and BLEU-1 per question type]({figure.name})", ""]
    ctx.write("tables.md", "\n".join(parts))
