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
* ``inspect`` — an inspect_ai task module, one ``@task`` per benchmark task, whose samples are our requests and
  whose scorer our extraction and metrics (`medtemporal.interop.inspect_task`).
* a family's own formats, from its `Published.exports` (e.g. the layout of the paper's released file).

The data is judged as it is, not by the label written at build time (`data_licence`): ``hf`` re-verifies a
phantom root (images replaced since the build are not called synthetic), and ``lmms-eval`` and ``vlmevalkit``
of credentialed data need ``allow_remote_data``, as a remote model does, since the data-use guard does not
travel with their files.

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
from medtemporal.provenance import run_licence
from medtemporal.schema import Licence
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


def _inspect(bench: Benchmark, out: Path, embed_images: bool, overwrite: bool) -> list[Path]:
    from medtemporal.interop.inspect_task import write_task

    return write_task(bench, out, embed_images=embed_images, overwrite=overwrite)


WRITERS: dict[str, Callable[[Benchmark, Path, bool, bool], list[Path]]] = {
    "parquet": _parquet, "hf": _hf, "vlmevalkit": _vlmevalkit, "lmms-eval": _lmms_eval, "inspect": _inspect,
}
"""Formats every benchmark exports to: ``(bench, out, embed_images, overwrite) -> paths written``."""

FOLDER_FORMATS = frozenset({"hf", "lmms-eval", "inspect"})
"""Common formats written as a folder rather than one file."""


def formats() -> tuple[str, ...]:
    """Every export format name: the common ones, then each registered family's own."""
    from medtemporal.registry import entries

    return tuple(dict.fromkeys([*WRITERS, *(f for e in entries("benchmark") for f in e.obj.published.exports)]))


GUARDED_FORMATS = frozenset({"lmms-eval", "vlmevalkit"})
"""Formats whose tools send the items to whatever model they run, hosted ones included."""


def data_licence(bench: Benchmark) -> Licence:
    """The licence of ``bench``'s data as it is now: the manifest's, where its images still lie in the verified
    phantom they were built from (`medtemporal.provenance.run_licence`), else ``credentialed``."""
    return run_licence(bench.manifest, None, [r.path for item in bench.items for r in item.images],
                       folder=bench.path)


def check_data_use(bench: Benchmark, fmt: str, allow_remote_data: bool) -> None:
    """Refuse, in one sentence, an export that would carry credentialed data where the guard cannot follow:
    ``hf`` of a phantom whose images no longer verify, and ``lmms-eval`` / ``vlmevalkit`` without
    ``allow_remote_data``."""
    if fmt == "hf" and bench.manifest.licence == "synthetic" and data_licence(bench) != "synthetic":
        raise InvalidInputError(
            f"The images of {bench.path} under {bench.image_root} no longer match the phantom they were built from "
            f"(a file was replaced, added or removed since), so they cannot be exported for the Hub as "
            "synthetic data; build the benchmark again from a freshly generated phantom."
        )
    if fmt in GUARDED_FORMATS and not allow_remote_data and data_licence(bench) == "credentialed":
        raise InvalidInputError(
            f"{bench.path} holds credentialed data and the data-use guard does not travel with {fmt} files (the "
            "tool sends the items to whatever model it runs, hosted ones included), so pass --allow-remote-data, "
            "as for a remote model, if your data-use agreement permits that."
        )


def export(bench: Benchmark, fmt: str, out: str | Path, *, embed_images: bool = False,
           overwrite: bool = False, allow_remote_data: bool = False) -> Exported:
    """Write ``bench`` to ``out`` in format ``fmt`` (see `formats`).

    Raises:
        InvalidInputError: an unknown format, ``out`` (or a file the format would write) exists without
            ``overwrite``, a folder where a file is written, the format refuses the benchmark, or the data is not
            what its label says or may not leave with the files (`check_data_use`).
    """
    out = Path(out)
    check_data_use(bench, fmt, allow_remote_data)
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
        raise InvalidInputError(f"--embed-images applies to parquet, vlmevalkit, lmms-eval and inspect, not {fmt!r}.")
    refuse_existing([out], overwrite)
    return Exported(fmt, family_writer(bench, out), (out,))
