"""The TemMed-Bench part of ``medtemporal demo``: phantoms → build → baseline runs → scores → tables.

Everything is offline: a phantom CheXpert Plus folder, the benchmark built
from it with the offline VQA templates and pixel retrieval, ``baseline:random``
under closed-book, text-only and multi-modal RAG, and the top-1 retrieval
hack for report generation. (The random baseline answers image-pair items with
a bare letter, which the released rule reads as invalid.)
"""

from __future__ import annotations

from pathlib import Path

from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.phantoms.chexpert_plus import write_chexpert_plus
from medtemporal.report.temmed import write_temmed_report

PROTOCOLS = ("direct", "rag-text", "rag-multimodal", "retrieval-top1")


def temmed_demo(out: str | Path, *, patients: int = 150, seed: int = 0, model: str = "baseline:random") -> list[Path]:
    """Run the TemMed demo into ``out``; return the report files written.

    Layout: ``out/chexpert-plus`` (phantom data), ``out/temmed`` (benchmark),
    ``out/runs/<protocol>`` (runs), ``out/report`` (``temmed_tables.md``, ``temmed_topk.png``).
    """
    out = Path(out)
    data = out / "chexpert-plus"
    if not (data / "phantom.json").is_file():
        write_chexpert_plus(data, patients=patients, seed=seed, image_size=128)
    bench = out / "temmed"
    steps = [["build", "temmed", "--chexpert-plus", str(data), "--out", str(bench), "--seed", str(seed),
              "--test-size", str(max(10, patients // 3)), "--vqa-items", "100", "--overwrite"]]
    runs = [out / "runs" / p for p in PROTOCOLS]
    steps += [["run", str(bench), "--model", model, "--protocol", p, "--out", str(r), "--no-progress"]
              for p, r in zip(PROTOCOLS, runs)]
    for argv in steps:
        if main(argv) != 0:
            raise InvalidInputError(f"The TemMed demo step `medtemporal {' '.join(argv[:2])}` failed; see the message above.")
    return write_temmed_report(runs, out / "report")
