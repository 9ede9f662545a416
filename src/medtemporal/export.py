"""Export a benchmark folder to other tools' formats: Parquet, VLMEvalKit TSV, lmms-eval, a family's own layouts.

* ``parquet`` — one row per item that Hugging Face ``datasets.load_dataset("parquet", data_files=...)``
  loads with ``images`` as a sequence of ``Image`` features (in visit order; the files' paths,
  or their bytes with ``embed_images``), ``visit_labels`` / ``visits`` / ``timestamps`` beside them,
  ``patient_id`` as a column, and ``id, benchmark, task, subtype, question, options`` (list of
  ``{label, text}``), ``answer_type, answer`` (a list answer as JSON text), ``reference``,
  ``image_refs`` (the `ImageRef` records), ``image_paths`` (relative) and ``meta`` (JSON text).
  The ``datasets`` feature schema rides along as the ``huggingface`` schema metadata, the manifest as
  ``medtemporal.manifest``; `item_from_row` turns a row back into the `Item`.
* ``vlmevalkit`` — VLMEvalKit's TSV layouts by answer type: MCQ (``A`` … ``E`` columns), Y/N, and
  open questions (VQA layout), each with ``index, question, answer, image_path`` (or ``image``: base64,
  with ``embed_images``), ``category`` (task), ``l2-category`` (subtype), ``split``, ``id`` and a
  ``hint`` that keeps the visit framing (VLMEvalKit shows its images before the text, so the
  hint says which image is T1 … Tn). A benchmark with several layouts (TemMed) writes one file per
  layout, ``<out>_mcq.tsv``, ``<out>_yorn.tsv``, ``<out>_vqa.tsv``.
* ``lmms-eval`` — a task folder for the choice and yes/no families (see `medtemporal.interop.lmms_eval`).
* a family's own formats, from its `BenchmarkSpec.exports` (e.g. the layout of the paper's released file).

Every writer writes to a temporary file and renames it, so a failed export
never leaves half a file where a good one was.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, Callable

from medtemporal.benchmark import Benchmark, spec
from medtemporal.errors import InvalidInputError
from medtemporal.schema import ImageRef, Item
from medtemporal.writes import replacing

HF_FEATURES = {
    "id": {"dtype": "string", "_type": "Value"},
    "benchmark": {"dtype": "string", "_type": "Value"},
    "task": {"dtype": "string", "_type": "Value"},
    "subtype": {"dtype": "string", "_type": "Value"},
    "patient_id": {"dtype": "string", "_type": "Value"},
    "question": {"dtype": "string", "_type": "Value"},
    "options": {"feature": {"label": {"dtype": "string", "_type": "Value"},
                            "text": {"dtype": "string", "_type": "Value"}}, "_type": "Sequence"},
    "answer_type": {"dtype": "string", "_type": "Value"},
    "answer": {"dtype": "string", "_type": "Value"},
    "reference": {"dtype": "string", "_type": "Value"},
    "images": {"feature": {"_type": "Image"}, "_type": "Sequence"},
    "visit_labels": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "Sequence"},
    "visits": {"feature": {"dtype": "int32", "_type": "Value"}, "_type": "Sequence"},
    "timestamps": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "Sequence"},
    "image_refs": {"feature": {name: {"dtype": "int32" if name == "visit" else "string", "_type": "Value"}
                               for name in ImageRef.model_fields}, "_type": "Sequence"},
    "image_paths": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "Sequence"},
    "meta": {"dtype": "string", "_type": "Value"},
}
"""The ``datasets`` features of the Parquet export, as ``Features.to_dict`` writes them."""


def visit_label(ref: ImageRef, n: int) -> str:
    """The caption of the ``n``-th image (1-based): its label, else ``T<visit>``, else ``image n``."""
    if ref.label:
        return ref.label.rstrip(":")
    return f"T{ref.visit}" if ref.visit is not None else f"image {n}"


def visit_framing(item: Item) -> str:
    """Which image is which visit, for tools that show the images before the text.

    >>> from medtemporal.schema import ImageRef
    >>> item = Item.create(benchmark="b", task="t", subtype="s", question="?", answer_type="open", answer="x",
    ...                    images=[ImageRef(path="a.png", visit=1, label="T1", timestamp="2150-01-02")])
    >>> visit_framing(item)
    'The 1 image is shown in visit order: image 1 is T1 (2150-01-02).'
    """
    if not item.images:
        return ""
    parts = [f"image {n} is {visit_label(ref, n)}" + (f" ({ref.timestamp[:10]})" if ref.timestamp else "")
             for n, ref in enumerate(item.images, 1)]
    noun = "image is" if len(parts) == 1 else "images are"
    return f"The {len(parts)} {noun} shown in visit order: {', '.join(parts)}."


def _answer_text(item: Item) -> str:
    return item.answer if isinstance(item.answer, str) else json.dumps(item.answer, ensure_ascii=False)


def item_from_row(row: dict[str, Any]) -> Item:
    """The `Item` a Parquet export row was written from (the ``image_refs`` and ``meta`` columns kept it)."""
    answer = row["answer"]
    if row["answer_type"] == "ordering":
        answer = json.loads(answer)
    refs = [{k: v for k, v in ref.items() if v is not None} for ref in row["image_refs"]]
    return Item(
        id=row["id"], benchmark=row["benchmark"], task=row["task"], subtype=row["subtype"],
        images=tuple(ImageRef(**ref) for ref in refs), question=row["question"],
        options={o["label"]: o["text"] for o in row["options"]}, answer_type=row["answer_type"], answer=answer,
        reference=row["reference"], meta=json.loads(row["meta"]),
    )


def to_parquet(bench: Benchmark, out: str | Path, *, embed_images: bool = False) -> int:
    """Write ``bench`` as a ``datasets``-loadable Parquet table; return the number of rows.

    Args:
        bench: the benchmark.
        out: the ``.parquet`` file.
        embed_images: store each image's bytes (the file travels alone) instead of its absolute path.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    string = pa.string()
    ref_type = pa.struct([(name, pa.int32() if name == "visit" else string) for name in ImageRef.model_fields])
    schema = pa.schema([
        ("id", string), ("benchmark", string), ("task", string), ("subtype", string), ("patient_id", string),
        ("question", string), ("options", pa.list_(pa.struct([("label", string), ("text", string)]))),
        ("answer_type", string), ("answer", string), ("reference", string),
        ("images", pa.list_(pa.struct([("bytes", pa.binary()), ("path", string)]))),
        ("visit_labels", pa.list_(string)), ("visits", pa.list_(pa.int32())), ("timestamps", pa.list_(string)),
        ("image_refs", pa.list_(ref_type)), ("image_paths", pa.list_(string)), ("meta", string),
    ])
    root = bench.image_root

    def image(ref: ImageRef) -> dict[str, Any]:
        path = root / ref.path
        if not embed_images:
            return {"bytes": None, "path": str(path)}
        try:
            return {"bytes": path.read_bytes(), "path": ref.path}
        except OSError:
            raise InvalidInputError(
                f"Image {path} cannot be read for embedding; check the benchmark's image root, "
                "or export without --embed-images."
            ) from None

    rows = [
        {
            "id": it.id, "benchmark": it.benchmark, "task": it.task, "subtype": it.subtype,
            "patient_id": it.cluster, "question": it.question,
            "options": [{"label": k, "text": v} for k, v in it.options.items()],
            "answer_type": it.answer_type, "answer": _answer_text(it), "reference": it.reference,
            "images": [image(ref) for ref in it.images],
            "visit_labels": [visit_label(ref, n) for n, ref in enumerate(it.images, 1)],
            "visits": [ref.visit for ref in it.images], "timestamps": [ref.timestamp for ref in it.images],
            "image_refs": [ref.model_dump() for ref in it.images], "image_paths": [ref.path for ref in it.images],
            "meta": json.dumps(it.meta, ensure_ascii=False, sort_keys=True),
        }
        for it in bench.items
    ]
    metadata = {
        "huggingface": json.dumps({"info": {"features": HF_FEATURES}}),
        "medtemporal.manifest": bench.manifest.model_dump_json(),
    }
    table = pa.Table.from_pylist(rows, schema=schema.with_metadata(metadata))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with replacing(out) as tmp:
        pq.write_table(table, tmp)
    return table.num_rows


LAYOUTS = {"choice": "mcq", "yesno": "yorn", "open": "vqa", "ordering": "vqa"}
"""VLMEvalKit layout of each answer type (ordering answers go in the open layout as JSON lists)."""


def _b64(path: Path) -> str:
    try:
        return base64.b64encode(path.read_bytes()).decode("ascii")
    except OSError:
        raise InvalidInputError(
            f"Image {path} cannot be read for embedding; check the benchmark's image root, "
            "or export without --embed-images."
        ) from None


def _vlmevalkit_frame(items: list[Item], layout: str, root: Path, embed_images: bool) -> Any:
    import pandas as pd

    letters = sorted({k for it in items for k in it.options}) if layout == "mcq" else []
    rows = []
    for n, it in enumerate(items):
        paths = [root / ref.path for ref in it.images]
        if embed_images:
            encoded = [_b64(p) for p in paths]
            media = {"image": encoded[0] if len(encoded) == 1 else repr(encoded)}
        else:
            media = {"image_path": str(paths[0]) if len(paths) == 1 else repr([str(p) for p in paths])}
        rows.append({
            "index": n, "question": it.question, **{x: it.options.get(x, "") for x in letters},
            "answer": _answer_text(it), **media, "hint": visit_framing(it),
            "category": it.task, "l2-category": it.subtype, "split": "test", "id": it.id,
        })
    columns = ["index", "question", *letters, "answer", "image" if embed_images else "image_path", "hint",
               "category", "l2-category", "split", "id"]
    return pd.DataFrame(rows, columns=columns)


def to_vlmevalkit(bench: Benchmark, out: str | Path, *, embed_images: bool = False) -> int:
    """Write ``bench`` as VLMEvalKit TSV (one file per layout when it has several); return the number of rows.

    Args:
        bench: the benchmark.
        out: the ``.tsv`` file (for several layouts: ``<stem>_<layout>.tsv`` beside it).
        embed_images: base64 images in an ``image`` column (the file travels alone) instead of absolute paths.
    """
    out = Path(out)
    by_layout: dict[str, list[Item]] = {}
    for it in bench.items:
        by_layout.setdefault(LAYOUTS[it.answer_type], []).append(it)
    for layout, items in by_layout.items():
        target = out if len(by_layout) == 1 else out.with_name(f"{out.stem}_{layout}{out.suffix or '.tsv'}")
        frame = _vlmevalkit_frame(items, layout, bench.image_root, embed_images)
        target.parent.mkdir(parents=True, exist_ok=True)
        with replacing(target) as tmp:
            frame.to_csv(tmp, sep="\t", index=False, lineterminator="\n")
    return len(bench.items)


def to_lmms_eval(bench: Benchmark, out: str | Path, *, embed_images: bool = False) -> int:
    """Write an lmms-eval task folder for ``bench`` (see `medtemporal.interop.lmms_eval`)."""
    from medtemporal.interop.lmms_eval import write_task

    return write_task(bench, Path(out), embed_images=embed_images)


WRITERS: dict[str, Callable[..., int]] = {"parquet": to_parquet, "vlmevalkit": to_vlmevalkit,
                                          "lmms-eval": to_lmms_eval}
"""Formats every benchmark exports to; each takes ``embed_images``."""

FOLDER_FORMATS = frozenset({"lmms-eval"})
"""Formats written as a folder rather than one file."""


def formats() -> tuple[str, ...]:
    """Every export format name: the common ones, then each registered family's own."""
    from medtemporal.registry import entries

    return tuple(dict.fromkeys([*WRITERS, *(f for e in entries("benchmark") for f in e.obj.exports)]))


def export(bench: Benchmark, fmt: str, out: str | Path, *, embed_images: bool = False) -> int:
    """Write ``bench`` to ``out`` in format ``fmt`` (see `formats`); return the number of items."""
    writer = WRITERS.get(fmt)
    if writer is not None:
        return writer(bench, Path(out), embed_images=embed_images)
    own = spec(bench.manifest.benchmark).exports
    writer = own.get(fmt)
    if writer is None:
        usable = [*WRITERS, *own]
        raise InvalidInputError(f"Unknown export format {fmt!r} for a {bench.manifest.benchmark} benchmark; "
                                f"use one of {', '.join(usable)}.")
    if embed_images:
        raise InvalidInputError(f"--embed-images applies to parquet, vlmevalkit and lmms-eval, not {fmt!r}.")
    return writer(bench, Path(out))
