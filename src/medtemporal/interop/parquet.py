"""Parquet that Hugging Face ``datasets`` loads and decodes: one row per item, images in the item's order.

Columns: ``id, benchmark, task, subtype, patient_id, question, options`` (list of ``{label, text}``),
``answer_type, answer`` (a list answer as JSON text), ``reference``, ``images`` (the 2-D images as a
list of ``datasets.Image``, in the item's order: visits T1 … Tn, a pair's last then current visit,
frames as presented), ``volumes`` (CT volumes as a list of ``datasets.Nifti``; only in benchmarks
that have volumes), ``visit_labels`` / ``visits`` / ``timestamps`` (one per image reference),
``image_refs`` (the `ImageRef` records, so `item_from_row` gives the `Item` back), ``image_paths``
(relative), ``sent_images`` (which of them the benchmark's default protocol sends, in the order it sends them:
positions in ``image_refs``, `medtemporal.interop.views.sent_images`; longitudinal-rrg's ``views=maira2`` sends two
or three of four; the protocol is named in the file's ``medtemporal.protocol`` metadata) and ``meta`` (JSON text). The schema is `features`, a ``datasets.Features``; it rides along
as the file's ``huggingface`` metadata, the manifest as ``medtemporal.manifest``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from medtemporal.benchmark import Benchmark
from medtemporal.errors import InvalidInputError, require
from medtemporal.schema import ImageRef, Item
from medtemporal.writes import replacing

NIFTI_SUFFIXES = (".nii", ".nii.gz")


def is_volume(ref: ImageRef) -> bool:
    """Whether ``ref`` is a 3-D volume (stored in the ``volumes`` column) rather than a 2-D image."""
    return ref.role == "volume"


def caption(ref: ImageRef, n: int) -> str:
    """The caption of the ``n``-th image (1-based): its label, else ``T<visit>``, else ``image n``."""
    if ref.label:
        return " ".join(ref.label.split()).rstrip(":")
    return f"T{ref.visit}" if ref.visit is not None else f"image {n}"


def features(with_volumes: bool) -> Any:
    """The ``datasets.Features`` of the export (``volumes`` only when ``with_volumes``)."""
    datasets = require("datasets", "interop")
    from datasets import Features, List, Value

    text = Value("string")
    columns: dict[str, Any] = {
        "id": text, "benchmark": text, "task": text, "subtype": text, "patient_id": text, "question": text,
        "options": List({"label": text, "text": text}), "answer_type": text, "answer": text, "reference": text,
        "images": List(datasets.Image()),
    }
    if with_volumes:
        columns["volumes"] = List(datasets.Nifti())
    columns.update({
        "visit_labels": List(text), "visits": List(Value("int32")), "timestamps": List(text),
        "image_refs": List({name: Value("int32") if name == "visit" else text for name in ImageRef.model_fields}),
        "image_paths": List(text), "sent_images": List(Value("int32")), "meta": text,
    })
    return Features(columns)


def has_volumes(bench: Benchmark) -> bool:
    """Whether any item of ``bench`` shows a volume; refuses volumes ``datasets`` cannot decode."""
    found = False
    for item in bench.items:
        for ref in item.images:
            if is_volume(ref):
                if not ref.path.endswith(NIFTI_SUFFIXES):
                    raise InvalidInputError(
                        f"Volume {ref.path} of item {item.id} is not NIfTI; the Parquet export types volumes as "
                        "datasets' Nifti feature, so build the benchmark on the NIfTI volumes (CT-RATE) to export it."
                    )
                found = True
    return found


def answer_text(item: Item) -> str:
    """The answer as one string (an ordering as its JSON list)."""
    return item.answer if isinstance(item.answer, str) else json.dumps(item.answer, ensure_ascii=False)


def read_bytes(path: Path) -> bytes:
    """The bytes of an image to embed, or one sentence saying which image cannot be read."""
    try:
        return path.read_bytes()
    except OSError:
        raise InvalidInputError(
            f"Image {path} cannot be read for embedding; check the benchmark's image root, "
            "or export without --embed-images."
        ) from None


def row(item: Item, root: Path, with_volumes: bool, embed: bool, sent: list[int]) -> dict[str, Any]:
    """The export row of ``item`` (images by absolute path, or their bytes with ``embed``); ``sent``: the positions
    of the images its default protocol sends."""

    def media(ref: ImageRef) -> dict[str, Any]:
        path = root / ref.path
        return {"bytes": read_bytes(path), "path": ref.path} if embed else {"bytes": None, "path": str(path)}

    out: dict[str, Any] = {
        "id": item.id, "benchmark": item.benchmark, "task": item.task, "subtype": item.subtype,
        "patient_id": item.cluster, "question": item.question,
        "options": [{"label": k, "text": v} for k, v in item.options.items()],
        "answer_type": item.answer_type, "answer": answer_text(item), "reference": item.reference,
        "images": [media(ref) for ref in item.images if not is_volume(ref)],
    }
    if with_volumes:
        out["volumes"] = [media(ref) for ref in item.images if is_volume(ref)]
    out.update({
        "visit_labels": [caption(ref, n) for n, ref in enumerate(item.images, 1)],
        "visits": [ref.visit for ref in item.images], "timestamps": [ref.timestamp for ref in item.images],
        "image_refs": [ref.model_dump() for ref in item.images], "image_paths": [ref.path for ref in item.images],
        "sent_images": sent, "meta": json.dumps(item.meta, ensure_ascii=False, sort_keys=True),
    })
    return out


def rows(bench: Benchmark, with_volumes: bool, embed: bool) -> list[dict[str, Any]]:
    """The export rows of every item of ``bench``, with the images its default protocol sends (`sent_images`)."""
    from medtemporal.interop.views import requests, sent_images

    root = bench.image_root
    return [row(item, root, with_volumes, embed, sent_images(item, request, root))
            for item, request in requests(bench)]


def metadata(bench: Benchmark) -> dict[str, str]:
    """The file metadata of an export: the manifest, and the protocol whose images ``sent_images`` marks."""
    from medtemporal.interop.views import protocol_name

    return {"medtemporal.manifest": bench.manifest.model_dump_json(), "medtemporal.protocol": protocol_name(bench)}


def item_from_row(row: dict[str, Any]) -> Item:
    """The `Item` an export row was written from (the ``image_refs`` and ``meta`` columns kept it)."""
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


def write_table(rows: list[dict[str, Any]], schema_features: Any, out: Path, metadata: dict[str, str]) -> int:
    """Encode ``rows`` with ``schema_features`` and write them to ``out`` (its folder made if missing), with extra
    ``metadata``; return the table's size in memory (bytes), as ``datasets`` reports a split's ``num_bytes``.

    The folder exports call it inside their temporary folder; `to_parquet` wraps it in `replacing`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = schema_features.arrow_schema
    schema = schema.with_metadata({**(schema.metadata or {}), **{k.encode(): v.encode() for k, v in metadata.items()}})
    table = pa.Table.from_pylist([schema_features.encode_example(r) for r in rows], schema=schema)
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, out)
    return table.nbytes


def to_parquet(bench: Benchmark, out: str | Path, *, embed_images: bool = False) -> int:
    """Write ``bench`` as a ``datasets``-loadable Parquet file; return the number of rows.

    Args:
        bench: the benchmark.
        out: the ``.parquet`` file.
        embed_images: store each image's (and volume's) bytes, so the file travels alone, instead of its
            absolute path.
    """
    with_volumes = has_volumes(bench)
    table = rows(bench, with_volumes, embed_images)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with replacing(out) as tmp:
        write_table(table, features(with_volumes), tmp, metadata(bench))
    return len(table)
