"""TemMed-Bench reports in the paper's layout: Table 3 (closed-book), Table 4 (RAG gains), Figure 3 (top-k).

Rows come from scored runs of the ``temmed`` benchmark: protocol ``direct`` is
closed-book, ``rag-text`` text-only RAG, ``rag-multimodal`` multi-modal RAG;
``retrieval-top1`` is the top-1 retrieval hack (appendix C.1); the number of
references ``k`` of a RAG run is its protocol option, read from its ``config.json``. A task whose items
a run left all unanswered (missing) shows "–".
Columns: VQA Acc and F1, report BLEU, ROUGE-L, METEOR and Avg., image-pair Acc,
all × 100. Table 4 shows each RAG row's gain over the same model's closed-book
row (k = 1 rows; other k go to the plot). Nothing is computed here that
``scores.json`` does not hold.

``medtemporal report`` writes ``temmed_tables.md`` and ``temmed_topk.png``
beside the common report when every run is of ``temmed``.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from medtemporal.errors import InvalidInputError
from medtemporal.report import load_runs
from medtemporal.report.tables import DASH, markdown_table

COLUMNS: tuple[tuple[str, str, str, str], ...] = (
    ("VQA", "Acc", "task:vqa", "accuracy"),
    ("VQA", "F1", "task:vqa", "yesno_macro_f1"),
    ("Report Generation", "BLEU", "task:report", "bleu_1"),
    ("Report Generation", "ROUGE-L", "task:report", "rouge_l"),
    ("Report Generation", "METEOR", "task:report", "meteor"),
    ("Report Generation", "Avg.", "task:report", "report_avg"),
    ("Image-pair Selection", "Acc", "task:image_pair", "accuracy"),
)
"""(task title, column, score group, metric) in the paper's order."""
CHANCE = ("[50]", "[50]", "", "", "", "", "[33.3]")
SETTINGS = {"direct": "closed-book", "rag-text": "+ Text-only RAG", "rag-multimodal": "+ Multi-Modal RAG",
            "retrieval-top1": "Top-1 retrieval hack"}


@dataclass(frozen=True)
class TemmedRun:
    """One scored run: its model, setting, k and the seven values (× 100, None if not scored)."""

    model: str
    protocol: str
    k: int
    values: tuple[float | None, ...]


def _k(run_dir: Path) -> int:
    """References per item of a RAG run: its ``k`` protocol option in ``config.json`` (default 1)."""
    config = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
    return int(config.get("protocol", {}).get("options", {}).get("k", 1))


def temmed_runs(run_dirs: Sequence[str | Path]) -> list[TemmedRun]:
    """The TemMed runs among ``run_dirs`` (scored first where needed)."""
    out = []
    for run in load_runs(run_dirs):
        if run.scores.run.get("benchmark") != "temmed":
            raise InvalidInputError(f"{run.path} is a run of {run.scores.run.get('benchmark')!r}, not temmed; leave it out.")
        values = []
        for _, _, group, metric in COLUMNS:
            score = run.scores.score(group, metric)
            answered = score is not None and score.missing < score.n  # a task the run did not answer shows "–"
            values.append(100.0 * score.value if answered else None)
        out.append(TemmedRun(str(run.scores.run.get("model")), str(run.scores.run.get("protocol")), _k(run.path),
                             tuple(values)))
    return out


def _fmt(value: float | None, base: float | None = None) -> str:
    if value is None:
        return DASH
    if base is None:
        return f"{value:.2f}"
    return f"{value:.2f} ({value - base:+.2f})"


def _header() -> list[str]:
    return ["Model", "Setting", *(f"{task} {col}" for task, col, _, _ in COLUMNS)]


def table3(runs: Sequence[TemmedRun]) -> str:
    """Closed-book results (the paper's Table 3): one row per model, then the chance row."""
    rows = [[r.model, "closed-book", *(_fmt(v) for v in r.values)] for r in runs if r.protocol == "direct"]
    rows.append(["Random guess", "", *CHANCE])
    return markdown_table(_header(), rows)


def table4(runs: Sequence[TemmedRun]) -> str:
    """Closed-book and k=1 RAG rows per model with gains over closed-book (the paper's Table 4)."""
    rows = []
    for model in dict.fromkeys(r.model for r in runs):
        mine = {r.protocol: r for r in runs if r.model == model and (r.protocol == "direct" or r.k == 1)}
        base = mine.get("direct")
        for protocol, setting in SETTINGS.items():
            run = mine.get(protocol)
            if run is None:
                continue
            cells = [_fmt(v, None if protocol == "direct" or base is None or base.values[i] is None else base.values[i])
                     for i, v in enumerate(run.values)]
            rows.append([model, setting, *cells])
    return markdown_table(_header(), rows)


def topk_plot(runs: Sequence[TemmedRun], column: int = 0) -> bytes | None:
    """PNG of a metric (default VQA accuracy) against k for text-only and multi-modal RAG (Figure 3);
    None when no RAG run has a value."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[tuple[str, str], dict[int, float]] = {}
    for r in runs:
        if r.protocol in ("rag-text", "rag-multimodal") and r.values[column] is not None:
            series.setdefault((r.model, r.protocol), {})[r.k] = r.values[column]
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(5.5, 3.6), dpi=120)
    for (model, protocol), points in sorted(series.items()):
        ks = sorted(points)
        ax.plot(ks, [points[k] for k in ks], marker="o" if protocol == "rag-multimodal" else "s",
                linestyle="-" if protocol == "rag-multimodal" else "--", label=f"{model}: {SETTINGS[protocol][2:]}")
    task, col, _, _ = COLUMNS[column]
    ax.set_xlabel("top-k retrieved instances")
    ax.set_ylabel(f"{task} {col} (%)")
    ax.set_xticks(range(1, 6))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def write_temmed_report(run_dirs: Sequence[str | Path], out: str | Path) -> list[Path]:
    """Write ``temmed_tables.md`` (Tables 3 and 4) and, with RAG runs, ``temmed_topk.png`` into ``out``."""
    runs = temmed_runs(run_dirs)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    text = (
        "# TemMed-Bench\n\nValues × 100; gains over the same model's closed-book run in brackets.\n\n"
        f"## Closed-book (Table 3 layout)\n\n{table3(runs)}\n\n"
        f"## Retrieval augmentation, top-1 (Table 4 layout)\n\n{table4(runs)}\n"
    )
    written = [out / "temmed_tables.md"]
    written[0].write_text(text, encoding="utf-8")
    png = topk_plot(runs)
    if png is not None:
        (out / "temmed_topk.png").write_bytes(png)
        written.append(out / "temmed_topk.png")
    return written
