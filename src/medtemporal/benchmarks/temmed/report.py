"""TemMed-Bench reports in the paper's layout: Table 3 (closed-book), Table 4 (RAG gains), Figure 3 (top-k),
Tables 5/10 (retriever ablation and every other retrieval run) and Table 8 (the top-1 retrieval hack).

Rows come from scored runs of the ``temmed`` benchmark: protocol ``direct`` is
closed-book, ``rag-text`` text-only RAG, ``rag-multimodal`` multi-modal RAG and
``retrieval-top1`` the top-1 retrieval hack (appendix C.1). A run's ``k``
(references per item) and ``retriever`` are its protocol options as
``scores.json`` records them (``k`` defaults to the RAG protocols' 1); a run
with a chosen retriever has it named beside its setting. A task whose items a
run left all unanswered (missing) shows "–".

Columns: VQA Acc and F1, report BLEU, ROUGE-L, METEOR and Avg., image-pair Acc,
all × 100. The "Random guess" row shows, in brackets, the chance levels that
``scores.json`` records. Table 4 shows each RAG row's gain over the same
model's closed-book row (k = 1 rows with each item's own retriever); every
other retrieval run (other k, a chosen retriever) is listed in the ablation
table and drawn in the top-k plot, whose error bars are the runs' 95%
intervals clustered by patient. Every RAG and top-1 row says what retrieved
its references ("Retrieved by": the retriever and the encoder the benchmark
was built with, from its manifest, or the release's own references), and the
header states the deviation: the paper's learned encoders are unnamed, and
the phantom default ``pixel`` is a grey thumbnail, not a learned encoder. A
metric that could not be computed shows "unavailable", with its reason in the
header. Nothing is computed here that ``scores.json`` or the manifest does not hold (a run scored
before the report metrics were named ``temmed_*`` is read under its old names, `metrics.LEGACY_NAMES`).

``medtemporal report`` writes ``temmed_tables.md`` and ``temmed_topk.png``
beside the common report when every run is of ``temmed`` (`BenchmarkSpec.report`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from medtemporal.errors import InvalidInputError
from medtemporal.benchmarks.temmed.metrics import LEGACY_NAMES
from medtemporal.benchmarks.temmed.rag import DEFAULT_K
from medtemporal.benchmarks.temmed.refs import describe_encoder
from medtemporal.benchmarks.temmed.published import TABLES
from medtemporal.report.family import (
    FamilyReport, ReportRun, caution, cell, figure_png, legend_columns, markdown_table, published_section, pyplot,
    unavailable_notes,
)

COLUMNS: tuple[tuple[str, str, str, str], ...] = (
    ("VQA", "Acc", "task:vqa", "accuracy"),
    ("VQA", "F1", "task:vqa", "yesno_macro_f1"),
    ("Report Generation", "BLEU", "task:report", "temmed_bleu_1"),
    ("Report Generation", "ROUGE-L", "task:report", "temmed_rouge_l"),
    ("Report Generation", "METEOR", "task:report", "temmed_meteor"),
    ("Report Generation", "Avg.", "task:report", "temmed_report_avg"),
    ("Image-pair Selection", "Acc", "task:image_pair", "accuracy"),
)
"""(task title, column, score group, metric) in the paper's order."""
SETTINGS = {"direct": "closed-book", "rag-text": "+ Text-only RAG", "rag-multimodal": "+ Multi-Modal RAG",
            "retrieval-top1": "Top-1 retrieval hack"}
"""Protocol → its row label in Table 4, in the table's order."""
RAG = ("rag-text", "rag-multimodal")
RETRIEVING = (*RAG, "retrieval-top1")


@dataclass(frozen=True)
class TemmedRun:
    """One scored run: its model, protocol, k and the seven values (× 100, None if not scored, NaN if the
    metric could not be computed).

    ``retriever`` is the retriever option (None: each item's own); ``chance`` the seven chance
    levels (× 100, None where the metric has none), empty when unknown; ``retrieved_by`` what retrieved a
    retrieval run's references (``pairwise · pixel``), empty for other runs.
    """

    model: str
    protocol: str
    k: int
    values: tuple[float | None, ...]
    retriever: str | None = None
    chance: tuple[float | None, ...] = ()
    ci: tuple[tuple[float | None, float | None], ...] = ()
    """The seven 95% intervals (× 100; None where undefined), empty when unknown."""
    retrieved_by: str = ""

    @property
    def setting(self) -> str:
        """The Table 4 row label: ``+ Text-only RAG``, with ``(image)`` for a chosen retriever."""
        label = SETTINGS.get(self.protocol, self.protocol)
        return f"{label} ({self.retriever})" if self.retriever else label


def _manifest_config(run: ReportRun) -> dict[str, Any]:
    """The ``config`` of the run's benchmark manifest (empty when the folder is gone)."""
    manifest = run.folder.benchmark_manifest(run.config)
    return manifest.config if manifest is not None else {}


def retrieved_by(config: dict[str, Any], retriever: str | None) -> str:
    """``pairwise · pixel``: the retriever whose references a run showed (VQA and report items; image pairs
    always use TF-IDF) and the encoder behind it, from the benchmark manifest's ``config``."""
    name = retriever or ("official" if config.get("source") == "official" else "pairwise")
    if name == "official":
        return "the release's references"
    if name == "tfidf":
        return "TF-IDF"
    return f"{name} · {config.get('embedder') or 'unknown encoder'}"


def _temmed_run(run: ReportRun) -> TemmedRun:
    """The seven values, chance levels and protocol options of one scored run."""
    options = run.scores.run.protocol_options
    try:
        k = int(options.get("k", DEFAULT_K))
    except (TypeError, ValueError):
        raise InvalidInputError(f"{run.path}: protocol option k={options['k']!r} is not a number; re-run with k=1 to 5.") from None
    values, chance, ci = [], [], []
    for _, _, group, metric in COLUMNS:
        score = run.scores.score(group, metric) or run.scores.score(group, LEGACY_NAMES.get(metric, metric))
        answered = score is not None and score.missing < score.n  # a task the run did not answer shows "–"
        values.append(100.0 * score.value if answered else None)  # NaN when unavailable
        chance.append(100.0 * score.chance if score is not None and score.chance is not None else None)
        has_ci = answered and score.ci_low is not None and score.ci_high is not None  # type: ignore[union-attr]
        ci.append((100.0 * score.ci_low, 100.0 * score.ci_high) if has_ci else (None, None))  # type: ignore[union-attr,operator]
    retriever = options.get("retriever")
    protocol = str(run.scores.run.protocol)
    by = retrieved_by(_manifest_config(run), str(retriever) if retriever else None) if protocol in RETRIEVING else ""
    return TemmedRun(str(run.scores.run.model), protocol, k, tuple(values),
                     str(retriever) if retriever else None, tuple(chance), tuple(ci), by)


def temmed_runs(reports: Sequence[ReportRun]) -> list[TemmedRun]:
    """The TemMed runs of a report, in order.

    Raises:
        InvalidInputError: a run is not of the ``temmed`` benchmark.
    """
    for run in reports:
        if run.scores.run.benchmark != "temmed":
            raise InvalidInputError(f"{run.path} is a run of {run.scores.run.benchmark!r}, not temmed; leave it out.")
    return [_temmed_run(run) for run in reports]


def _fmt(value: float | None, base: float | None = None) -> str:
    """``61.20``, or ``61.20 (+3.10)`` with the gain over ``base`` (values × 100; `cell`'s rule: NaN, a metric that
    could not be computed, is "unavailable")."""
    text = cell(value, scale=1.0, digits=2, unavailable=value is not None and math.isnan(value))
    if value is None or math.isnan(value) or base is None or math.isnan(base):
        return text
    return f"{text} ({value - base:+.2f})"


def _header() -> list[str]:
    return ["Model", "Setting", *(f"{task} {col}" for task, col, _, _ in COLUMNS)]


def table3(runs: Sequence[TemmedRun]) -> str:
    """Closed-book results (the paper's Table 3): one row per closed-book run, then the chance row."""
    rows = [[r.model, "closed-book", *(_fmt(v) for v in r.values)] for r in runs if r.protocol == "direct"]
    chance = [next((r.chance[i] for r in runs if len(r.chance) > i and r.chance[i] is not None), None)
              for i in range(len(COLUMNS))]
    rows.append(["Random guess", "", *("" if c is None else f"[{c:.3g}]" for c in chance)])
    return markdown_table(_header(), rows)


def table4(runs: Sequence[TemmedRun]) -> str:
    """Closed-book and k=1 RAG rows per model with gains over closed-book (the paper's Table 4)."""
    order = list(SETTINGS)
    rows = []
    for model in dict.fromkeys(r.model for r in runs):
        mine = [r for r in runs if r.model == model and r.protocol in SETTINGS and (r.protocol == "direct" or r.k == 1)]
        base = next((r for r in mine if r.protocol == "direct"), None)
        for run in sorted(mine, key=lambda r: order.index(r.protocol)):
            gains = run.protocol != "direct" and base is not None
            cells = [_fmt(v, base.values[i] if gains else None) for i, v in enumerate(run.values)]
            rows.append([model, run.setting, *cells, run.retrieved_by])
    return markdown_table([*_header(), "Retrieved by"], rows)


def ablation_table(runs: Sequence[TemmedRun]) -> str | None:
    """Every retrieval run by model, setting, retriever and k (Tables 5/10 and the rows behind Figure 3),
    VQA accuracy with its 95% interval; None without retrieval runs."""
    rag = sorted((r for r in runs if r.protocol in RAG),
                 key=lambda r: (r.model, list(SETTINGS).index(r.protocol), r.retriever or "", r.k))
    if not rag:
        return None
    rows = []
    for r in rag:
        low, high = r.ci[0] if r.ci else (None, None)
        acc = _fmt(r.values[0]) + (f" [{low:.2f}, {high:.2f}]" if low is not None and high is not None else "")
        rows.append([r.model, SETTINGS[r.protocol], r.retriever or "each item's own", str(r.k), acc,
                     *(_fmt(v) for v in r.values[1:]), r.retrieved_by])
    header = ["Model", "Setting", "Retriever", "k", "VQA Acc [95% CI]",
              *(f"{task} {col}" for task, col, _, _ in COLUMNS[1:]), "Retrieved by"]
    return markdown_table(header, rows)


def hack_table(runs: Sequence[TemmedRun]) -> str | None:
    """Table 8: report generation of the top-1 retrieval hack beside each model's top-1 text-only RAG run;
    None without a hack run."""
    hacks = [r for r in runs if r.protocol == "retrieval-top1"]
    if not hacks:
        return None
    report = [i for i, (task, _, _, _) in enumerate(COLUMNS) if task == "Report Generation"]
    rows = [[r.model, SETTINGS[r.protocol] if r.protocol != "rag-text" else f"{SETTINGS[r.protocol]} (k={r.k})",
             *(_fmt(r.values[i]) for i in report), r.retrieved_by]
            for r in runs if r.protocol == "rag-text" and r.k == 1 and r.values[report[-1]] is not None]
    rows += [["(retrieved report as the answer)", SETTINGS["retrieval-top1"], *(_fmt(r.values[i]) for i in report),
              r.retrieved_by] for r in hacks]
    return markdown_table(["Model", "Setting", *(COLUMNS[i][1] for i in report), "Retrieved by"], rows)


def topk_plot(runs: Sequence[TemmedRun], column: int = 0) -> bytes | None:
    """PNG of a metric (default VQA accuracy) against k for text-only and multi-modal RAG (Figure 3), with
    the runs' 95% intervals as error bars; None when no RAG run has a value."""
    series: dict[tuple[str, str, str], dict[int, float]] = {}
    bars: dict[tuple[str, str, str], dict[int, tuple[float, float]]] = {}
    for r in runs:
        if r.protocol in RAG and r.values[column] is not None and not math.isnan(r.values[column]):
            key = (r.model, r.protocol, r.retriever or "")
            series.setdefault(key, {})[r.k] = r.values[column]
            low, high = r.ci[column] if r.ci else (None, None)
            if low is not None and high is not None:
                bars.setdefault(key, {})[r.k] = (r.values[column] - low, high - r.values[column])
    if not series:
        return None
    fig, ax = pyplot().subplots(figsize=(7.0, 3.8), layout="constrained")
    for (model, protocol, retriever), points in sorted(series.items()):
        ks = sorted(points)
        label = f"{model}: {SETTINGS[protocol][2:]}" + (f" ({retriever})" if retriever else "")
        multimodal = protocol == "rag-multimodal"
        err = bars.get((model, protocol, retriever), {})
        yerr = [[err.get(k, (0.0, 0.0))[0] for k in ks], [err.get(k, (0.0, 0.0))[1] for k in ks]]
        ax.errorbar(ks, [points[k] for k in ks], yerr=yerr, capsize=3, marker="o" if multimodal else "s",
                    linestyle="-" if multimodal else "--", label=label)
    task, col, _, _ = COLUMNS[column]
    ax.set_xlabel("top-k retrieved instances")
    ax.set_ylabel(f"{task} {col} (%)")
    ax.set_xticks(range(1, 6))
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=legend_columns(labels, 7.0), frameon=False, fontsize=9)
    return figure_png(fig)


def retrieval_note(runs: Sequence[TemmedRun]) -> str | None:
    """The header paragraph on what retrieved the RAG references (None without retrieval runs)."""
    encoders = sorted({r.retrieved_by.split(" · ", 1)[-1] for r in runs if " · " in r.retrieved_by})
    if not any(r.protocol in RETRIEVING for r in runs):
        return None
    text = ("Retrieval: every RAG and top-1 row names what retrieved its references (\"Retrieved by\": the "
            "retriever, pairwise (eq. 2) unless the run chose another, and the encoder the benchmark was built "
            "with; image-pair items always by TF-IDF, as in the paper's appendix B.2). The paper's image and text "
            "encoders are learned but not named (its eq. 1–2), so retrieval-based numbers depend on ours and are not "
            "the "
            "paper's setting.")
    if encoders:
        text += " Encoders here: " + "; ".join(f"`{e}` ({describe_encoder(e)})" for e in encoders) + "."
    return text


def write_temmed_report(ctx: FamilyReport) -> None:
    """Write ``temmed_tables.md`` (Tables 3 and 4) and, with RAG runs, ``temmed_topk.png``."""
    runs = temmed_runs(ctx.runs)
    notes = [n for _, _, _, metric in COLUMNS for n in unavailable_notes(ctx.runs, metric)]
    header = "\n\n".join(["Values × 100; gains over the same model's closed-book run in brackets.",
                           *filter(None, [retrieval_note(runs)]), *dict.fromkeys(notes)])
    text = (
        f"# TemMed-Bench\n\n{header}\n\n"
        f"## Closed-book (Table 3 layout)\n\n{table3(runs)}\n\n"
        f"## Retrieval augmentation, top-1 (Table 4 layout)\n\n{table4(runs)}\n"
    )
    for title, table in (("Every retrieval run: retrievers and k (Tables 5/10 layout)", ablation_table(runs)),
                         ("Top-1 retrieval hack (Table 8 layout)", hack_table(runs))):
        if table is not None:
            text += f"\n## {title}\n\n{table}\n"
    text += "\n" + published_section(TABLES, ctx.runs, cautions=lambda run: caution(
        run, lambda m: m.config.get("source") == "official", "the paper's released test set"))
    ctx.write("tables.md", text)
    png = topk_plot(runs)
    if png is not None:
        ctx.write("topk.png", png)
