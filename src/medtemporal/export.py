"""Export a benchmark folder to other tools' formats; the writers live in `medtemporal.interop`.

* ``parquet`` — one row per item that Hugging Face ``datasets.load_dataset("parquet", data_files=...)``
  loads and decodes: images as ``datasets.Image`` in the item's order, CT volumes as ``datasets.Nifti``
  (`medtemporal.interop.parquet`); paths, or bytes with ``embed_images``.
* ``hf`` — a folder to ``push_to_hub``: that Parquet with everything embedded under ``data/`` and a dataset
  card (``README.md``: licence, counts, audit, citation); refused for ``credentialed`` benchmarks
  (`medtemporal.interop.hf_dataset`).
* ``vlmevalkit`` — VLMEvalKit TSVs, one per layout (MCQ, Y/N, VQA), whose questions carry our instruction and
  visit framing (`medtemporal.interop.vlmevalkit`).
* ``lmms-eval`` — a task folder, one task per benchmark task with the family's metrics
  (`medtemporal.interop.lmms_eval`).
* a family's own formats, from its `Published.exports` (e.g. the layout of the paper's released file).

Nothing existing is replaced without ``overwrite``, and every writer writes to a temporary file or folder
and renames it, so a failed or killed export never leaves half a file where a good one was.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from medtemporal.benchmark import Benchmark
from medtemporal.contract import spec
from medtemporal.errors import InvalidInputError
from medtemporal.interop.files import refuse_existing
from medtemporal.writes import disk_error


@dataclass(frozen=True)
class Exported:
    """What an export wrote."""

    format: str
    items: int
    paths: tuple[Path, ...]
    """The files or folders written (VLMEvalKit: one TSV per layout)."""

    def __str__(self) -> str:
        return f"Wrote {self.items} items to {', '.join(map(str, self.paths))} ({self.format})."


def _parquet(bench: Benchmark, out: Path, embed_images: bool, overwrite: bool) -> list[Path]:
    from medtemporal.interop.parquet import to_parquet

    refuse_existing([out], overwrite)
    to_parquet(bench, out, embed_images=embed_images)
    return [out]


def _hf(bench: Benchmark, out: Path, embed_images: bool, overwrite: bool) -> list[Path]:
    from medtemporal.interop.hf_dataset import to_hf

    return to_hf(bench, out, overwrite=overwrite)  # always embedded: the Hub cannot read the image root


def _vlmevalkit(bench: Benchmark, out: Path, embed_images: bool, overwrite: bool) -> list[Path]:
    from medtemporal.interop.vlmevalkit import to_vlmevalkit

    return to_vlmevalkit(bench, out, embed_images=embed_images, overwrite=overwrite)


def _lmms_eval(bench: Benchmark, out: Path, embed_images: bool, overwrite: bool) -> list[Path]:
    from medtemporal.interop.lmms_eval import write_task

    return write_task(bench, out, embed_images=embed_images, overwrite=overwrite)


WRITERS: dict[str, Callable[[Benchmark, Path, bool, bool], list[Path]]] = {
    "parquet": _parquet, "hf": _hf, "vlmevalkit": _vlmevalkit, "lmms-eval": _lmms_eval,
}
"""Formats every benchmark exports to: ``(bench, out, embed_images, overwrite) -> paths written``."""

FOLDER_FORMATS = frozenset({"hf", "lmms-eval"})
"""Common formats written as a folder rather than one file."""


def formats() -> tuple[str, ...]:
    """Every export format name: the common ones, then each registered family's own."""
    from medtemporal.registry import entries

    return tuple(dict.fromkeys([*WRITERS, *(f for e in entries("benchmark") for f in e.obj.published.exports)]))


def export(bench: Benchmark, fmt: str, out: str | Path, *, embed_images: bool = False,
           overwrite: bool = False) -> Exported:
    """Write ``bench`` to ``out`` in format ``fmt`` (see `formats`).

    Raises:
        InvalidInputError: an unknown format, ``out`` (or a file the format would write) exists without
            ``overwrite``, a folder where a file is written, or the format refuses the benchmark.
    """
    out = Path(out)
    try:
        return _export(bench, fmt, out, embed_images, overwrite)
    except OSError as exc:  # a full or read-only disk: one sentence naming where (what was written before stays)
        raise disk_error(exc, out) or exc from None


def _export(bench: Benchmark, fmt: str, out: Path, embed_images: bool, overwrite: bool) -> Exported:
    writer = WRITERS.get(fmt)
    if writer is not None:
        if fmt not in FOLDER_FORMATS and out.is_dir():
            raise InvalidInputError(f"--out {out} is a folder; pass a file name, e.g. {out / ('items.' + fmt)}.")
        return Exported(fmt, len(bench.items), tuple(writer(bench, out, embed_images, overwrite)))
    own = spec(bench.manifest.benchmark).published.exports
    family_writer = own.get(fmt)
    if family_writer is None:
        raise InvalidInputError(f"Unknown export format {fmt!r} for a {bench.manifest.benchmark} benchmark; "
                                f"use one of {', '.join([*WRITERS, *own])}.")
    if embed_images:
        raise InvalidInputError(f"--embed-images applies to parquet, vlmevalkit and lmms-eval, not {fmt!r}.")
    refuse_existing([out], overwrite)
    return Exported(fmt, family_writer(bench, out), (out,))
