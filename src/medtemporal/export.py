"""Export a benchmark folder to other tools' formats: Parquet, VLMEvalKit TSV, and a family's own layouts.

* ``parquet`` — one row per item, readable by Hugging Face ``datasets``
  (``Dataset.from_parquet``) and pandas: ``id, benchmark, task, subtype,
  question, options`` (list of ``{label, text}``), ``answer_type, answer``
  (a list answer as JSON text), ``reference, images`` (list of ImageRef
  structs), ``image_paths`` (relative paths, no pixels) and ``meta`` (JSON
  text). The manifest rides along as schema metadata (``medtemporal.manifest``).
* ``vlmevalkit`` — VLMEvalKit's MCQ TSV: ``index, question, A … E, answer,
  image_path, category`` (the task), ``l2-category`` (the subtype), ``split``
  and ``id``; ``image_path`` is an absolute path, or for several images a
  Python list literal of them, as VLMEvalKit's ``toliststr`` reads it.
* a family's own formats, from its `BenchmarkSpec.exports` (e.g. the layout of
  the paper's released file), for benchmarks of that family.

Every writer writes to a temporary file and renames it, so a failed export
never leaves half a file where a good one was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from medtemporal.benchmark import Benchmark, spec
from medtemporal.errors import InvalidInputError

def _tmp(out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    return out.with_name(out.name + ".tmp")


def to_parquet(bench: Benchmark, out: str | Path) -> int:
    """Write ``bench`` as a Parquet table (image paths only); return the number of rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    image = pa.struct([
        ("path", pa.string()), ("visit", pa.int32()), ("timestamp", pa.string()), ("role", pa.string()),
        ("label", pa.string()), ("option", pa.string()), ("view", pa.string()),
    ])
    schema = pa.schema([
        ("id", pa.string()), ("benchmark", pa.string()), ("task", pa.string()), ("subtype", pa.string()),
        ("question", pa.string()),
        ("options", pa.list_(pa.struct([("label", pa.string()), ("text", pa.string())]))),
        ("answer_type", pa.string()), ("answer", pa.string()), ("reference", pa.string()),
        ("images", pa.list_(image)), ("image_paths", pa.list_(pa.string())), ("meta", pa.string()),
    ])
    rows = [
        {
            "id": it.id, "benchmark": it.benchmark, "task": it.task, "subtype": it.subtype, "question": it.question,
            "options": [{"label": k, "text": v} for k, v in it.options.items()],
            "answer_type": it.answer_type,
            "answer": it.answer if isinstance(it.answer, str) else json.dumps(it.answer, ensure_ascii=False),
            "reference": it.reference,
            "images": [ref.model_dump() for ref in it.images],
            "image_paths": [ref.path for ref in it.images],
            "meta": json.dumps(it.meta, ensure_ascii=False, sort_keys=True),
        }
        for it in bench.items
    ]
    manifest = bench.manifest.model_dump_json()
    table = pa.Table.from_pylist(rows, schema=schema.with_metadata({"medtemporal.manifest": manifest}))
    out = Path(out)
    tmp = _tmp(out)
    pq.write_table(table, tmp)
    tmp.replace(out)
    return table.num_rows


def to_vlmevalkit(bench: Benchmark, out: str | Path) -> int:
    """Write ``bench`` as a VLMEvalKit MCQ TSV with absolute image paths; return the number of rows."""
    import pandas as pd

    bad = next((it for it in bench.items if it.answer_type != "choice" or not isinstance(it.answer, str)), None)
    if bad is not None:
        raise InvalidInputError(
            f"Item {bad.id} ({bad.task}/{bad.subtype}) is not multiple choice; the vlmevalkit format holds "
            "only lettered questions, so export this benchmark as parquet."
        )
    letters = sorted({k for it in bench.items for k in it.options})
    root = bench.image_root
    rows = []
    for n, it in enumerate(bench.items):
        paths = [str(root / ref.path) for ref in it.images]
        rows.append({
            "index": n, "question": it.question, **{x: it.options.get(x, "") for x in letters},
            "answer": it.answer, "image_path": paths[0] if len(paths) == 1 else repr(paths),
            "category": it.task, "l2-category": it.subtype, "split": "test", "id": it.id,
        })
    columns = ["index", "question", *letters, "answer", "image_path", "category", "l2-category", "split", "id"]
    out = Path(out)
    tmp = _tmp(out)
    pd.DataFrame(rows, columns=columns).to_csv(tmp, sep="\t", index=False, lineterminator="\n")
    tmp.replace(out)
    return len(rows)


WRITERS: dict[str, Callable[[Benchmark, Path], int]] = {"parquet": to_parquet, "vlmevalkit": to_vlmevalkit}
"""Formats every benchmark exports to."""


def formats() -> tuple[str, ...]:
    """Every export format name: the common ones, then each registered family's own."""
    from medtemporal.registry import entries

    return tuple(dict.fromkeys([*WRITERS, *(f for e in entries("benchmark") for f in e.obj.exports)]))


def export(bench: Benchmark, fmt: str, out: str | Path) -> int:
    """Write ``bench`` to ``out`` in format ``fmt`` (see `formats`); return the number of items."""
    writer = WRITERS.get(fmt)
    if writer is not None:
        return writer(bench, Path(out))
    own = spec(bench.manifest.benchmark).exports
    writer = own.get(fmt)
    if writer is None:
        usable = [*WRITERS, *own]
        raise InvalidInputError(f"Unknown export format {fmt!r} for a {bench.manifest.benchmark} benchmark; "
                                f"use one of {', '.join(usable)}.")
    return writer(bench, Path(out))
