"""MS-CXR-T tables and the headline figure (``ms-cxr-t_tables.md``, ``mscxrt_findings.png``).

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
* The figure: accuracy and macro accuracy per finding for each run, with intervals, chance (1/3) and the
  commonest-label level.

Every model number comes from ``scores.json``.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from medtemporal.benchmarks.ms_cxr_t.chexbench import NAME as CHEXBENCH
from medtemporal.benchmarks.ms_cxr_t.release import FINDINGS
from medtemporal.benchmarks.ms_cxr_t.similarity import NAME as EMBEDDING
from medtemporal.report import load_runs
from medtemporal.report.audit import HEADER, audit_rows
from medtemporal.report.plots import FONT_PT, MAX_WIDTH_IN, figure_png, legend_columns, pyplot
from medtemporal.report.tables import DASH, ReportRun, markdown_table, variant_runs
from medtemporal.schema import Item, Score
from medtemporal.scoring.runs import load_outcomes
from medtemporal.writes import write_atomic

TABLES = "ms-cxr-t_tables.md"
FIGURE = "mscxrt_findings.png"
PAIR = (("Acc", "accuracy", "mscxrt_accuracy_mean"), ("Macro", "mscxrt_macro_accuracy", "mscxrt_macro_accuracy_mean"))
"""(column, metric per finding and pooled, metric of the average over findings)."""


def _name(finding: str) -> str:
    return finding.replace("_", " ").capitalize()


def _cell(score: Score | None, ci: bool = False) -> str:
    if score is None or score.value is None or math.isnan(score.value):
        return DASH
    text = f"{100 * score.value:.1f}"
    if ci and score.ci_low is not None and score.ci_high is not None:
        text += f" [{100 * score.ci_low:.1f}, {100 * score.ci_high:.1f}]"
    return text


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
        rows.append([run.label, *(_cell(run.scores.score(g, m), ci) for _, g, m in columns),
                     str(invalid.invalid) if invalid else DASH])
    if floors and not ci:
        values = []
        for header, group, _ in columns:
            finding = group.removeprefix("subtype:")
            if header.endswith("Macro"):
                values.append("33.3")
            elif finding in floors:
                values.append(f"{100 * floors[finding]:.1f}")
            elif header.startswith("Average"):
                values.append(f"{100 * np.mean([v for k, v in floors.items() if k != 'all']):.1f}")
            else:
                values.append(f"{100 * floors['all']:.1f}" if "all" in floors else DASH)
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


def audit_table(audit: dict[str, Any] | None) -> str:
    """The manifest's blind-solvability audit of the image task, one row per finding, as `medtemporal audit` shows
    it (every reader with its interval, the best, and the flag: BY DESIGN where the spec's note applies)."""
    rows = [[_name(r[1]), r[2], *r[4:]] for r in audit_rows(audit or {}) if r[0] == "progression"]
    if not rows:
        return "No audit in the benchmark's manifest (built with --no-audit)."
    return markdown_table(["Finding", "n", "Chance", *HEADER[5:]], rows)


def chexbench_table(runs: Sequence[ReportRun]) -> str:
    """CheXbench's accuracy per finding, averaged and pooled, and the share its random fallback decided."""
    present = [f for f in FINDINGS if any(r.scores.score(f"subtype:{f}", "accuracy") for r in runs)]
    columns = [(_name(f), f"subtype:{f}", "accuracy") for f in present]
    columns += [("Average", "task:progression", "mscxrt_accuracy_mean"), ("All labels", "task:progression", "accuracy"),
                ("Random fallback (share)", "task:progression", "mscxrt_chexbench_guessed")]
    rows = [[run.label, *(_cell(run.scores.score(g, m)) for _, g, m in columns)] for run in runs]
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
    rows = [[run.label, *(_cell(run.scores.score(g, metric)) for _, g in groups
                          for metric in ("accuracy", "mscxrt_macro_accuracy"))] for run in runs]
    return markdown_table(header, rows)


def embedding_table(runs: Sequence[ReportRun]) -> str:
    """Text encoders: ROC-AUC and accuracy at MedST's threshold per subset and over all pairs."""
    groups = _subsets(runs)
    header = ["Run", *(f"{label} {m}" for label, _ in groups for m in ("ROC-AUC", "Acc"))]
    rows = []
    for run in runs:
        cells = []
        for _, g in groups:
            auc = run.scores.score(g, "mscxrt_similarity_auc")
            cells += [DASH if auc is None or math.isnan(auc.value) else f"{auc.value:.3f}",
                      _cell(run.scores.score(g, "mscxrt_similarity_accuracy"))]
        rows.append([run.label, *cells])
    return markdown_table(header, rows)


def findings_png(runs: Sequence[ReportRun], floors: dict[str, float]) -> bytes:
    """Accuracy and macro accuracy per finding (and the average) for each run, with intervals."""
    findings = [f for f in FINDINGS if any(r.scores.score(f"subtype:{f}", "accuracy") for r in runs)]
    labels = [_name(f) for f in findings] + ["Average"]
    fig, axes = pyplot().subplots(1, 2, figsize=(MAX_WIDTH_IN, 4.2), layout="constrained", sharey=True)
    width = 0.8 / max(1, len(runs))
    x = np.arange(len(labels))
    for ax, (title, metric, mean) in zip(axes, (("Accuracy", "accuracy", "mscxrt_accuracy_mean"),
                                                ("Macro accuracy", "mscxrt_macro_accuracy",
                                                 "mscxrt_macro_accuracy_mean"))):
        for k, run in enumerate(runs):
            scores = [run.scores.score(f"subtype:{f}", metric) for f in findings]
            scores.append(run.scores.score("task:progression", mean))
            values = np.array([100 * s.value if s and not math.isnan(s.value) else np.nan for s in scores])
            low = np.array([100 * s.ci_low if s and s.ci_low is not None else np.nan for s in scores])
            high = np.array([100 * s.ci_high if s and s.ci_high is not None else np.nan for s in scores])
            err = np.nan_to_num(np.vstack([values - low, high - values]))
            ax.bar(x + (k - (len(runs) - 1) / 2) * width, values, width, yerr=err, capsize=2, label=run.label)
        ax.axhline(100 / 3, color="grey", linestyle="--", linewidth=1, label="chance (1/3)")
        if metric == "accuracy" and floors:
            level = [100 * floors.get(f, np.nan) for f in findings] + [100 * np.mean([floors[f] for f in findings])]
            ax.scatter(x, level, marker="_", s=400, color="black", zorder=3, label="commonest label (text only)")
        ax.set_xticks(x, labels, rotation=20)
        ax.set_title(title)
        ax.set_ylim(0, 100)
    axes[0].set_ylabel("%")
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, fontsize=FONT_PT, loc="outside upper center", ncol=legend_columns(names, MAX_WIDTH_IN),
               frameon=False)
    return figure_png(fig)


def _bench_items(runs: Sequence[ReportRun]) -> tuple[list[Item], dict[str, Any] | None]:
    """The items and audit of the first run's benchmark, read through its run folder."""
    bench = load_outcomes(runs[0].path).bench
    return bench.items, bench.manifest.audit


def write_mscxrt_report(run_dirs: Sequence[Path], out: Path) -> list[Path]:
    """Write ``ms-cxr-t_tables.md`` and ``mscxrt_findings.png`` for the runs into ``out``."""
    runs = load_runs(run_dirs)
    items, audit = _bench_items(runs)
    floors = commonest_label_floor(items)
    tasks = {t.task for run in runs for t in run.scores.layout}
    parts = ["# MS-CXR-T", "",
             "Accuracy × 100: the share of labels answered right, with our prompt (CheXinstruct's template) and "
             "the strict letter rule (ours). Macro: macro accuracy × 100, the mean over the true classes improving "
             "/ stable / worsening of the share answered right (MedGemma 1.5; scikit-learn's balanced accuracy). "
             "Average: each finding's value averaged over the findings (MedST). All labels: pooled over every "
             "label. Invalid answers count as wrong. CheXbench's own accuracy (its prompt and parse) is its own "
             "table, for runs of `--protocol chexbench`.", ""]
    written = []
    out.mkdir(parents=True, exist_ok=True)
    if "progression" in tasks:
        parts += ["## Temporal image classification", "", image_table(runs, floors), "",
                  "The last row is what the finding's name alone gives: always its commonest label. Compare "
                  "accuracy against it, not against 33.3; macro accuracy gives any constant answer 33.3.", "",
                  "### With patient-clustered 95% intervals", "", image_table(runs, floors, ci=True), "",
                  "### Blind-solvability audit of the benchmark (text only, cross-validated by patient)", "",
                  audit_table(audit), "", f"![accuracy and macro accuracy per finding]({FIGURE})", ""]
        chexbench = variant_runs(runs, CHEXBENCH)
        if chexbench:
            parts += ["### As CheXbench scores it (`--protocol chexbench`)", "",
                      "CheXbench's prompt, its parse (the first \"(X)\" of the output, else a random letter: here "
                      "drawn from the item's id, so a run scores the same every time) and plain accuracy "
                      "(`evaluation_chexbench/`, Stanford-AIMI/CheXagent). The last column is the share of answers "
                      "the random letter decided.", "", chexbench_table(chexbench), ""]
        figure = out / FIGURE
        write_atomic(figure, findings_png(runs, floors))
        written.append(figure)
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
    path = out / TABLES
    write_atomic(path, "\n".join(parts))
    return [path, *written]
