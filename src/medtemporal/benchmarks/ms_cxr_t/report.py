"""MS-CXR-T tables and the headline figure (``ms-cxr-t_tables.md``, ``ms-cxr-t_findings.png``).

* The image task in the layout of the field's tables (BioViL-T and MedST: one column per finding and an
  average): for each finding, **accuracy** and **macro accuracy** (MedGemma's: mean per-class recall) of
  our prompt and strict letter rule, then the average over findings and all labels pooled, one row per
  run; then the same with the patient-clustered 95% intervals.
* CheXbench's accuracy (`chexbench`: its prompt, parse and plain accuracy) for runs of ``--protocol
  chexbench``, with the share of answers its random fallback decided.
* Beside the runs, what the text alone gives: "commonest label of the finding" (the accuracy of always
  answering the finding's most frequent label, from the benchmark's items; its macro accuracy is 1/3) and
  the blind-solvability audit of each finding (`medtemporal.audit`, from the manifest).
* The sentence task (paraphrase vs contradiction) per subset: a generative model's accuracy and macro
  accuracy (ours), and a text encoder's ROC-AUC and accuracy at MedST's threshold (`similarity`).
* Published rows (`published`): MedGemma 1.5's card, CPO's re-print and BioViL-T's card, with their provenance.
* The figure: accuracy and macro accuracy per finding for each run, with intervals, chance (1/3) and the
  commonest-label level.

Every model number comes from ``scores.json``.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np

from medtemporal.benchmarks.ms_cxr_t.chexbench import NAME as CHEXBENCH
from medtemporal.benchmarks.ms_cxr_t.published import TABLES
from medtemporal.benchmarks.ms_cxr_t.release import FINDINGS
from medtemporal.benchmarks.ms_cxr_t.similarity import NAME as EMBEDDING
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
from medtemporal.schema import Item

PAIR = (("Acc", "accuracy", "mscxrt_accuracy_mean"), ("Macro", "mscxrt_macro_accuracy", "mscxrt_macro_accuracy_mean"))
"""(column, metric per finding and pooled, metric of the average over findings)."""


def _name(finding: str) -> str:
    return finding.replace("_", " ").capitalize()


def _columns(run: ReportRun) -> list[tuple[str, str, str]]:
    """(header, group, metric) of the image table, findings present first."""
    present = [f for f in FINDINGS if any(s.group == f"subtype:{f}" for s in run.scores.scores)]
    cols = [(f"{_name(f)} {label}", f"subtype:{f}", metric) for f in present for label, metric, _ in PAIR]
    cols += [(f"Average {label}", "task:progression", mean) for label, _, mean in PAIR]
    cols += [(f"All labels {label}", "task:progression", metric) for label, metric, _ in PAIR]
    return cols


def image_table(runs: Sequence[ReportRun], floors: dict[str, float], *, ci: bool = False) -> str:
    """The per-finding table, one row per run, then the commonest-label row (without intervals)."""
    columns = _columns(runs[0])
    rows = []
    for run in runs:
        invalid = run.scores.score("task:progression", "accuracy")
        rows.append([run.label, *(cell(run.scores.score(g, m), ci=ci) for _, g, m in columns),
                     str(invalid.invalid) if invalid else DASH])
    if floors and not ci:
        values = []
        for header, group, _ in columns:
            finding = group.removeprefix("subtype:")
            if header.endswith("Macro"):
                values.append(cell(1 / 3))
            elif finding in floors:
                values.append(cell(floors[finding]))
            elif header.startswith("Average"):
                values.append(cell(float(np.mean([v for k, v in floors.items() if k != "all"]))))
            else:
                values.append(cell(floors.get("all")))
        rows.append(["Commonest label of the finding (text only)", *values, DASH])
    return markdown_table(["Run", *(h for h, _, _ in columns), "Invalid"], rows)


def commonest_label_floor(items: Sequence[Item]) -> dict[str, float]:
    """Per finding (and ``all``): the accuracy of always answering the finding's most frequent label."""
    labels = [(it.subtype, it.meta["progression"]) for it in items if it.task == "progression"]
    out = {}
    for finding in dict.fromkeys(f for f, _ in labels):
        counts = Counter(p for f, p in labels if f == finding)
        out[finding] = max(counts.values()) / sum(counts.values())
    if labels:
        out["all"] = sum(max(Counter(p for f, p in labels if f == g).values()) for g in out) / len(labels)
    return out


def chexbench_table(runs: Sequence[ReportRun]) -> str:
    """CheXbench's accuracy per finding, averaged and pooled, and the share its random fallback decided."""
    present = [f for f in FINDINGS if any(r.scores.score(f"subtype:{f}", "accuracy") for r in runs)]
    columns = [(_name(f), f"subtype:{f}", "accuracy") for f in present]
    columns += [("Average over findings (ours)", "task:progression", "mscxrt_accuracy_mean"),
                ("All labels", "task:progression", "accuracy"),
                ("Random fallback (share)", "task:progression", "mscxrt_chexbench_guessed")]
    rows = [[run.label, *(cell(run.scores.score(g, m)) for _, g, m in columns)] for run in runs]
    return markdown_table(["Run", *(h for h, _, _ in columns)], rows)


def _subsets(runs: Sequence[ReportRun]) -> list[tuple[str, str]]:
    subsets = [c.label for run in runs for t in run.scores.layout if t.task == "sentence_similarity"
               for c in t.columns]
    return [(s, f"subtype:{s}") for s in dict.fromkeys(subsets)] + [("All pairs", "task:sentence_similarity")]


def sentence_table(runs: Sequence[ReportRun]) -> str:
    """Sentence similarity answered by generative models: accuracy and macro accuracy per subset and over all
    pairs (runs of the text-embedding protocol are in `embedding_table`)."""
    groups = _subsets(runs)
    header = ["Run", *(f"{label} {m}" for label, _ in groups for m in ("Acc", "Macro"))]
    rows = [[run.label, *(cell(run.scores.score(g, metric)) for _, g in groups
                          for metric in ("accuracy", "mscxrt_macro_accuracy"))] for run in runs]
    return markdown_table(header, rows)


def embedding_table(runs: Sequence[ReportRun]) -> str:
    """Text encoders: ROC-AUC and accuracy at MedST's threshold per subset and over all pairs (there each pair
    decided at its own subset's threshold, as `mscxrt_similarity_accuracy` does; MedST reports subsets only)."""
    groups = _subsets(runs)
    header = ["Run", *(f"{label} {m}" for label, g in groups for m in (
        "ROC-AUC", "Acc" if g.startswith("subtype:") else "Acc (each subset's threshold)"))]
    rows = [[run.label, *(c for _, g in groups for c in (
        cell(run.scores.score(g, "mscxrt_similarity_auc"), scale=1.0, digits=3),
        cell(run.scores.score(g, "mscxrt_similarity_accuracy"))))] for run in runs]
    return markdown_table(header, rows)


def findings_png(runs: Sequence[ReportRun], floors: dict[str, float]) -> bytes:
    """Accuracy and macro accuracy per finding (and the average) for each run, with intervals, chance (1/3) and
    the commonest-label level."""
    findings = [f for f in FINDINGS if any(r.scores.score(f"subtype:{f}", "accuracy") for r in runs)]
    groups = [_name(f) for f in findings] + ["Average"]
    chance = Level("chance (1/3)", [1 / 3] * len(groups))
    panels = []
    for title, metric, mean in (("Accuracy", "accuracy", "mscxrt_accuracy_mean"),
                                ("Macro accuracy", "mscxrt_macro_accuracy", "mscxrt_macro_accuracy_mean")):
        scores = [[*(run.scores.score(f"subtype:{f}", metric) for f in findings),
                   run.scores.score("task:progression", mean)] for run in runs]
        levels = [chance]
        if metric == "accuracy" and floors:
            levels.append(Level("commonest label (text only)", [*(floors.get(f) for f in findings),
                                                                  float(np.mean([floors[f] for f in findings]))],
                                dashed=False))
        panels.append(Panel(groups, scores, "%", title=title, levels=levels))
    return grouped_bars(runs, panels)


def write_ms_cxr_t_report(ctx: FamilyReport) -> None:
    """Write ``ms-cxr-t_tables.md`` and ``ms-cxr-t_findings.png`` for the runs."""
    runs = ctx.runs
    floors = commonest_label_floor(ctx.benchmark.items)
    tasks = {t.task for run in runs for t in run.scores.layout}
    parts = ["# MS-CXR-T", "",
             "Accuracy × 100: the share of labels answered right, with our prompt (CheXinstruct's template) and "
             "the strict letter rule (ours). Macro: macro accuracy × 100, the mean over the true classes improving "
             "/ stable / worsening of the share answered right (MedGemma 1.5; scikit-learn's balanced accuracy). "
             "Average: each finding's value averaged over the findings (MedST). All labels: pooled over every "
             "label. Invalid answers count as wrong. CheXbench's own accuracy (its prompt and parse) is its own "
             "table, for runs of `--protocol chexbench`.", ""]
    if "progression" in tasks:
        figure = ctx.write("findings.png", findings_png(runs, floors))
        audit = ctx.audit_table("progression", "Finding", _name)
        parts += ["## Temporal image classification", "", image_table(runs, floors), "",
                  "The last row is what the finding's name alone gives: always its commonest label. Compare "
                  "accuracy against it, not against 33.3; macro accuracy gives any constant answer 33.3.", "",
                  "### With patient-clustered 95% intervals", "", image_table(runs, floors, ci=True), "",
                  "### Blind-solvability audit of the benchmark (text only, cross-validated by patient)", "",
                  audit or "No audit in the benchmark's manifest (built with --no-audit).", "",
                  f"![accuracy and macro accuracy per finding]({figure.name})", ""]
        chexbench = variant_runs(runs, CHEXBENCH)
        if chexbench:
            parts += ["### As CheXbench scores it (`--protocol chexbench`)", "",
                      "CheXbench's prompt, its parse (the first \"(X)\" of the output, else a random letter: here "
                      "drawn from the item's id, so a run scores the same every time) and plain accuracy "
                      "(`evaluation_chexbench/`, Stanford-AIMI/CheXagent). The last column is the share of answers "
                      "the random letter decided.", "", chexbench_table(chexbench), ""]
    if "sentence_similarity" in tasks:
        encoders = variant_runs(runs, EMBEDDING)
        generative = [r for r in runs if r.path not in {e.path for e in encoders}]
        parts += ["## Temporal sentence similarity", ""]
        if generative:
            parts += ["Generative models answering paraphrase or contradiction (two options; ours).", "",
                      sentence_table(generative), ""]
        if encoders:
            parts += ["Text encoders (`--protocol text-embedding`), as the field scores embedding models (MedST "
                      "`temporal_test.py`): ROC-AUC of the cosine similarity against paraphrase, and accuracy × 100 "
                      "of \"similarity above the threshold means paraphrase\" at MedST's ten-fold threshold; MedST "
                      "reports the RadGraph subset.", "", embedding_table(encoders), ""]
    parts.append(published_section(TABLES, runs))
    ctx.write("tables.md", "\n".join(parts))
