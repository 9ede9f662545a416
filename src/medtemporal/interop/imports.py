"""Predictions made with other tools, brought into a medtemporal run folder and scored here.

A user who already ran a model with VLMEvalKit or lmms-eval on our exported
benchmark gets medtemporal's extraction (the benchmark's released rules),
patient-clustered confidence intervals and paper tables without running it again:

- VLMEvalKit result files (``{model}_{dataset}.xlsx``, or ``.tsv`` / ``.csv``): the exported
  columns plus ``prediction``; rows are matched by the ``id`` column our export writes (or by
  ``index``, the item order, for a benchmark exported as one file).
- lmms-eval sample logs (``--log_samples``: ``*_samples_<task>.jsonl``, or older ``.json``
  files holding a list or ``{"logs": [...]}``): the output is ``filtered_resps[0]`` (else
  ``resps[0]``); rows are matched by ``doc["id"]`` when the log keeps the document, else by
  ``doc_id``, the item order of the lmms-eval export.

The run folder gets ``config.json`` (model ``imported:<tool>:<name>``, protocol
``imported-<tool>``, the source file and its sha256; generation settings unknown),
``predictions.jsonl`` (raw output, extracted answer and rule per item) and ``scores.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from medtemporal import __version__
from medtemporal.benchmark import Benchmark
from medtemporal.checksums import sha256_file
from medtemporal.errors import InvalidInputError
from medtemporal.runs import PREDICTIONS, BenchmarkRef, ModelRef, ProtocolRef, RunConfig, RunFolder
from medtemporal.schema import Prediction, content_hash, write_jsonl

TOOLS = ("vlmevalkit", "lmms-eval")


@dataclass
class ImportSummary:
    """What `import_predictions` read and wrote."""

    run_dir: Path
    imported: int
    unknown: int
    """Rows whose item is not in the benchmark (skipped)."""
    duplicates: int
    """Rows for an item already read (the last one wins)."""

    def __str__(self) -> str:
        return (f"{self.run_dir}: imported {self.imported} predictions ({self.unknown} rows for unknown items "
                f"skipped, {self.duplicates} repeated rows superseded).")


def _vlmevalkit_rows(path: Path, bench: Benchmark) -> Iterator[tuple[str | None, str]]:
    import pandas as pd

    try:
        if path.suffix.lower() in (".xlsx", ".xls"):
            frame = pd.read_excel(path, keep_default_na=False)
        else:
            frame = pd.read_csv(path, sep="\t" if path.suffix.lower() == ".tsv" else ",", keep_default_na=False)
    except ImportError as exc:
        raise InvalidInputError(f"Reading {path} needs {exc.name}; pip install openpyxl, or save it as .tsv.") from None
    except (ValueError, OSError) as exc:
        raise InvalidInputError(f"{path} is not a VLMEvalKit result table ({exc}); pass the file it wrote.") from None
    if "prediction" not in frame.columns:
        raise InvalidInputError(f"{path} has no 'prediction' column; pass the result file VLMEvalKit wrote "
                                "({model}_{dataset}.xlsx), not the benchmark TSV.")
    if "id" in frame.columns:
        ids: list[str | None] = [str(x) for x in frame["id"]]
    elif "index" in frame.columns:
        ids = [_by_order(bench, x, path) for x in frame["index"]]
    else:
        raise InvalidInputError(f"{path} has neither an 'id' nor an 'index' column; export the benchmark with "
                                "`medtemporal export --format vlmevalkit` and run VLMEvalKit on that file.")
    yield from zip(ids, (str(x) for x in frame["prediction"]), strict=True)


def _by_order(bench: Benchmark, position: Any, path: Path) -> str | None:
    try:
        n = int(position)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{path} has a row index {position!r} that is not a number.") from None
    return bench.items[n].id if 0 <= n < len(bench.items) else None


def _lmms_records(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{path} is not UTF-8 text (byte {exc.start}); pass the JSON or JSONL samples file "
                                "lmms-eval wrote with --log_samples.") from None
    except OSError as exc:
        raise InvalidInputError(f"{path} cannot be read ({exc.strerror}); pass the samples file lmms-eval wrote "
                                "with --log_samples.") from None
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("logs"), list):
        return whole["logs"]
    if isinstance(whole, list):
        return whole
    records = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except ValueError:
                raise InvalidInputError(f"{path} line {n} is not JSON; pass the samples file lmms-eval "
                                        "wrote with --log_samples.") from None
    return records


def _first_text(value: Any) -> str | None:
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def _lmms_rows(path: Path, bench: Benchmark) -> Iterator[tuple[str | None, str]]:
    for record in _lmms_records(path):
        if not isinstance(record, dict) or "doc_id" not in record:
            raise InvalidInputError(f"{path} holds a record without doc_id; pass the samples file lmms-eval "
                                    "wrote with --log_samples.")
        output = _first_text(record.get("filtered_resps")) or _first_text(record.get("resps")) or ""
        doc = record.get("doc")
        item_id = doc.get("id") if isinstance(doc, dict) and doc.get("id") else _by_order(bench, record["doc_id"], path)
        yield item_id, output


def import_predictions(bench: Benchmark, source: str | Path, out: str | Path, *, tool: str,
                       model: str | None = None) -> ImportSummary:
    """Read ``source`` (a ``tool`` result file) into run folder ``out`` for ``bench``, then score it.

    Args:
        bench: the benchmark the predictions answer (the one exported to the tool).
        source: VLMEvalKit result table or lmms-eval samples log.
        out: a new run folder.
        tool: ``vlmevalkit`` or ``lmms-eval``.
        model: the model's name (default: the source file's name).

    Raises:
        InvalidInputError: unknown tool, unreadable source, a folder that already holds predictions,
            or a source none of whose rows match the benchmark's items.
    """
    from medtemporal.runner.config import now, package_versions
    from medtemporal.scoring import extract, score_run

    source, out = Path(source), Path(out)
    if tool not in TOOLS:
        raise InvalidInputError(f"Unknown tool {tool!r}; import from one of {', '.join(TOOLS)}.")
    if not source.is_file():
        raise InvalidInputError(f"{source} does not exist; pass the result file {tool} wrote.")
    if (out / PREDICTIONS).exists():
        raise InvalidInputError(f"{out} already holds predictions; import into a new --out folder.")
    rows = _vlmevalkit_rows(source, bench) if tool == "vlmevalkit" else _lmms_rows(source, bench)
    items = {item.id: item for item in bench.items}
    uri = f"imported:{tool}:{model or source.stem}"
    protocol = f"imported-{tool}"
    latest: dict[str, Prediction] = {}
    unknown = duplicates = 0
    for item_id, output in rows:
        item = items.get(item_id) if item_id is not None else None
        if item is None:
            unknown += 1
            continue
        duplicates += item.id in latest
        extraction = extract(item, output)
        latest[item.id] = Prediction(
            item_id=item.id, model=uri, protocol=protocol, request_hash=content_hash([item.id, output]),
            raw_output=output, answer=extraction.answer, extraction=extraction.rule,
        )
    if not latest:
        raise InvalidInputError(
            f"No row of {source} matches an item of {bench.path}; pass the benchmark that was exported to {tool}."
        )
    m = bench.manifest
    folder = RunFolder(out)
    config = RunConfig(
        benchmark=BenchmarkRef(path=str(bench.path), name=m.benchmark, version=m.version,
                               manifest_sha256=bench.manifest_hash, items_sha256=m.items_sha256, licence=m.licence),
        model=ModelRef(uri=uri, identity={"uri": uri}),
        protocol=ProtocolRef(name=protocol),
        imported_from={"tool": tool, "path": str(source.resolve()), "sha256": sha256_file(source)},
        medtemporal_version=__version__, started_at=now(), finished_at=now(), packages=package_versions(),
    )
    with folder.writer():
        folder.write_config(config)
        write_jsonl(folder.file(PREDICTIONS), [latest[item.id] for item in bench.items if item.id in latest])
    score_run(out)
    return ImportSummary(out, len(latest), unknown, duplicates)
