"""Predictions made with other tools, brought into a medtemporal run folder and scored here.

A user who already ran a model with VLMEvalKit or lmms-eval on our exported
benchmark gets medtemporal's extraction (the benchmark's released rules),
patient-clustered confidence intervals and paper tables without running it again:

- VLMEvalKit result files (``{model}_{dataset}.xlsx``, which needs ``openpyxl`` from the ``interop``
  extra, or ``.tsv`` / ``.csv``), one per exported layout: the exported columns plus ``prediction``;
  rows are matched by the ``id`` column our export writes (or by ``index``, the item order, for a
  benchmark exported as one file).
- lmms-eval sample logs (``--log_samples``: ``*_samples_<task>.jsonl``, one per task, or older ``.json``
  files holding a list or ``{"logs": [...]}``): the output is ``filtered_resps[0]`` (else
  ``resps[0]``); rows are matched by ``doc["id"]`` when the log keeps the document, else by the item id
  our export's ``process_results`` puts in each metric's entry (lmms-eval's command line drops the
  document), else by ``doc_id``, the item order within the task the file name ends in.

The run folder gets ``config.json`` (model ``imported:<tool>:<name>``, protocol
``imported-<tool>``, the source files and their sha256; generation settings unknown),
``predictions.jsonl`` (raw output, extracted answer and rule per item) and ``scores.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from medtemporal import __version__
from medtemporal.benchmark import Benchmark
from medtemporal.checksums import sha256_file
from medtemporal.errors import InvalidInputError
from medtemporal.interop.vlmevalkit import LAYOUTS
from medtemporal.runs import BenchmarkRef, ModelRef, ProtocolRef, RunConfig, RunFolder
from medtemporal.schema import Item, Prediction, content_hash

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


def _read_table(path: Path) -> Any:
    import pandas as pd

    try:
        if path.suffix.lower() in (".xlsx", ".xls"):
            return pd.read_excel(path, dtype=str, keep_default_na=False)
        return pd.read_csv(path, sep="\t" if path.suffix.lower() == ".tsv" else ",", dtype=str, keep_default_na=False)
    except ImportError:
        raise InvalidInputError(f"Reading {path} needs openpyxl; install it with `pip install 'medtemporal[interop]'` "
                                "(or `pip install openpyxl`), or save the sheet as .tsv.") from None
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{path} is not UTF-8 text (byte {exc.start}); pass the file VLMEvalKit wrote.") from None
    except (ValueError, OSError) as exc:
        raise InvalidInputError(f"{path} is not a VLMEvalKit result table ({exc}); pass the file it wrote.") from None


def _vlmevalkit_rows(path: Path, bench: Benchmark) -> Iterator[tuple[str | None, str]]:
    frame = _read_table(path)
    if "prediction" not in frame.columns:
        raise InvalidInputError(f"{path} has no 'prediction' column; pass the result file VLMEvalKit wrote "
                                "({model}_{dataset}.xlsx), not the benchmark TSV.")
    if "id" in frame.columns:
        ids: list[str | None] = list(frame["id"])
    elif "index" in frame.columns and len({LAYOUTS[it.answer_type] for it in bench.items}) == 1:
        ids = [_by_order(bench.items, x, path) for x in frame["index"]]
    else:
        raise InvalidInputError(f"{path} has no 'id' column to match rows to items; export the benchmark with "
                                "`medtemporal export --format vlmevalkit` and run VLMEvalKit on those files.")
    yield from zip(ids, frame["prediction"], strict=True)


def _by_order(items: list[Item], position: Any, path: Path) -> str | None:
    try:
        n = int(position)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{path} has a row index {position!r} that is not a number.") from None
    return items[n].id if 0 <= n < len(items) else None


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


def _task_items(path: Path, bench: Benchmark) -> list[Item] | None:
    """The items a sample log's ``doc_id`` counts over: its task's (named in the file name), or all of a
    one-task benchmark's; None when neither tells."""
    from medtemporal.interop.lmms_eval import task_name

    tasks = list(dict.fromkeys(item.task for item in bench.items))
    named = [t for t in tasks if path.stem.endswith(task_name(bench, t))]
    if named:
        task = max(named, key=len)
        return [item for item in bench.items if item.task == task]
    return bench.items if len(tasks) == 1 else None


def _lmms_rows(path: Path, bench: Benchmark) -> Iterator[tuple[str | None, str]]:
    ordered = _task_items(path, bench)
    for record in _lmms_records(path):
        if not isinstance(record, dict) or "doc_id" not in record:
            raise InvalidInputError(f"{path} holds a record without doc_id; pass the samples file lmms-eval "
                                    "wrote with --log_samples.")
        output = _first_text(record.get("filtered_resps")) or _first_text(record.get("resps")) or ""
        doc = record.get("doc")
        ours = [v["id"] for v in record.values() if isinstance(v, dict) and "metric" in v and v.get("id")]
        if isinstance(doc, dict) and doc.get("id"):
            yield str(doc["id"]), output
        elif ours:  # the per-metric payload our export's process_results writes names the item
            yield str(ours[0]), output
        elif ordered is not None:
            yield _by_order(ordered, record["doc_id"], path), output
        else:
            raise InvalidInputError(f"{path} keeps neither the documents nor a task name of {bench.path} in its file "
                                    "name; pass the *_samples_<task>.jsonl files lmms-eval wrote.")


def import_predictions(bench: Benchmark, sources: str | Path | Sequence[str | Path], out: str | Path, *, tool: str,
                       model: str | None = None) -> ImportSummary:
    """Read ``sources`` (``tool`` result files) into run folder ``out`` for ``bench``, then score it.

    Args:
        bench: the benchmark the predictions answer (the one exported to the tool).
        sources: VLMEvalKit result tables (one per exported layout) or lmms-eval sample logs (one per task).
        out: a new run folder.
        tool: ``vlmevalkit`` or ``lmms-eval``.
        model: the model's name (default: the first source file's name).

    Raises:
        InvalidInputError: unknown tool, unreadable source, a folder that already holds predictions,
            or sources none of whose rows match the benchmark's items.
    """
    from medtemporal.runner.config import now, package_versions
    from medtemporal.scoring import extract, score_run

    paths = [Path(sources)] if isinstance(sources, (str, Path)) else [Path(s) for s in sources]
    out = Path(out)
    if tool not in TOOLS:
        raise InvalidInputError(f"Unknown tool {tool!r}; import from one of {', '.join(TOOLS)}.")
    for source in paths:
        if not source.is_file():
            raise InvalidInputError(f"{source} does not exist; pass the result file {tool} wrote.")
    if not paths:
        raise InvalidInputError(f"No result file given; pass the files {tool} wrote.")
    if RunFolder(out).has_predictions():
        raise InvalidInputError(f"{out} already holds predictions; import into a new --out folder.")
    read = _vlmevalkit_rows if tool == "vlmevalkit" else _lmms_rows
    items = {item.id: item for item in bench.items}
    uri = f"imported:{tool}:{model or paths[0].stem}"
    protocol = f"imported-{tool}"
    latest: dict[str, Prediction] = {}
    unknown = duplicates = 0
    for source in paths:
        for item_id, output in read(source, bench):
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
        names = ", ".join(map(str, paths))
        raise InvalidInputError(
            f"No row of {names} matches an item of {bench.path}; pass the benchmark that was exported to {tool}."
        )
    m = bench.manifest
    folder = RunFolder(out)
    config = RunConfig(
        benchmark=BenchmarkRef(path=str(bench.path), name=m.benchmark, version=m.version,
                               manifest_sha256=bench.manifest_hash, items_sha256=m.items_sha256, licence=m.licence),
        model=ModelRef(uri=uri, identity={"uri": uri}),
        protocol=ProtocolRef(name=protocol),
        imported_from={"tool": tool, "files": [{"path": str(p.resolve()), "sha256": sha256_file(p)} for p in paths]},
        medtemporal_version=__version__, started_at=now(), finished_at=now(), packages=package_versions(),
    )
    with folder.writer():
        folder.write_config(config)
        folder.write_predictions(latest[item.id] for item in bench.items if item.id in latest)
    score_run(out)
    return ImportSummary(out, len(latest), unknown, duplicates)
