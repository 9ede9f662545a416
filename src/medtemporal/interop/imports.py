"""Predictions made with other tools, brought into a medtemporal run folder and scored here.

A user who already ran a model with VLMEvalKit, lmms-eval or inspect_ai on our exported
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
- inspect_ai logs (``.eval`` or ``.json``, one per task, read with inspect_ai's own ``read_eval_log``): the output
  is each sample's ``output.completion``, matched by the sample id (our item id); a sample that ended in an error
  has no prediction.

Items without a prediction are counted (`ImportSummary.missing`) and score as missing; when more than half of
the benchmark's items have none (result files left out, a tool whose run stopped), the import is refused before
anything is written unless ``allow_missing``.

The run folder gets ``config.json`` (model ``imported:<tool>:<name>``, protocol
``imported-<tool>``, the source files and their sha256; generation settings unknown),
``predictions.jsonl`` (raw output, extracted answer and rule per item) and ``scores.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from medtemporal import __version__
from medtemporal.benchmark import Benchmark
from medtemporal.checksums import sha256_file
from medtemporal.errors import InvalidInputError, require
from medtemporal.interop.parquet import answer_text
from medtemporal.interop.vlmevalkit import LAYOUTS
from medtemporal.runs import BenchmarkRef, ModelRef, ProtocolRef, RunConfig, RunFolder
from medtemporal.schema import Item, Prediction, content_hash
from medtemporal.sources.release_files import read_jsonl, read_table, read_text

TOOLS = ("vlmevalkit", "lmms-eval", "inspect")
WHERE = {
    "vlmevalkit": "one per exported layout, all under WORK_DIR/MODEL/T<date>-<time>/, where run.py writes them; it "
                  "links only those whose evaluation finished up into WORK_DIR/MODEL/",
    "lmms-eval": "one *_samples_<task>.jsonl per task, under OUTPUT_PATH/<model>/",
    "inspect": "one log per task, under the --log-dir",
}
"""Where each tool writes the files an import needs, for the refusal of an import that leaves most items out."""


@dataclass
class ImportSummary:
    """What `import_predictions` read and wrote."""

    run_dir: Path
    imported: int
    unknown: int
    """Rows whose item is not in the benchmark (skipped)."""
    duplicates: int
    """Rows for an item already read (the last one wins)."""
    conflicting: list[str] = field(default_factory=list)
    """Items whose repeated rows give different outputs (the last one is kept)."""
    missing: int = 0
    """Items of the benchmark with no prediction (scored as missing)."""

    def __str__(self) -> str:
        text = (f"{self.run_dir}: imported {self.imported} predictions ({self.unknown} rows for unknown items "
                f"skipped, {self.duplicates} repeated rows superseded).")
        if self.missing:
            text += (f" {self.missing} of {self.imported + self.missing} items have no prediction and score as "
                     "missing.")
        if self.conflicting:
            text += (f" {len(self.conflicting)} item(s) had repeated rows with different outputs, the last one kept "
                     f"(first: {self.conflicting[0]}); check the result files.")
        return text


@dataclass(frozen=True)
class Row:
    """One prediction row of a tool's file."""

    item_id: str | None
    output: str
    where: str
    """``"FILE, line N"``, for messages."""
    answer: str | None = None
    """The answer the tool's file gives the row (its ``answer`` or ``target`` column), to check the matching."""


def _vlmevalkit_rows(path: Path, bench: Benchmark) -> Iterator[Row]:
    what = "the result file VLMEvalKit wrote ({model}_{dataset}.xlsx, or a .tsv / .csv)"
    table = read_table(path, what=what)
    frame = table.frame
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
    answers = list(frame["answer"]) if "answer" in frame.columns else [None] * len(frame)
    for k, (item_id, output, answer) in enumerate(zip(ids, frame["prediction"], answers, strict=True)):
        yield Row(item_id, output, table.where(k), answer)


def _by_order(items: list[Item], position: Any, path: Path) -> str | None:
    try:
        n = int(position)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{path} has a row index {position!r} that is not a number.") from None
    return items[n].id if 0 <= n < len(items) else None


def _lmms_records(path: Path) -> list[tuple[int, Any]]:
    """``(line, record)`` of a sample log: a JSON list, ``{"logs": [...]}``, or JSON Lines."""
    what = "the samples file lmms-eval wrote with --log_samples"
    text = read_text(path, what=what)
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("logs"), list):
        whole = whole["logs"]
    if isinstance(whole, list):
        return [(k + 1, record) for k, record in enumerate(whole)]
    return list(read_jsonl(path, what=what))


def _first_text(value: Any, key: Any = None) -> str | None:
    """The first text in a response: a string, a list's first element, or a dict's entry for ``key`` (the record's
    filter; else its only or first value), as lmms-eval versions log ``resps`` and ``filtered_resps``."""
    while isinstance(value, (list, dict)) and value:
        if isinstance(value, dict):
            value = value[key] if key in value else next(iter(value.values()))
        else:
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


def _lmms_rows(path: Path, bench: Benchmark) -> Iterator[Row]:
    ordered = _task_items(path, bench)
    for line, record in _lmms_records(path):
        where = f"{path.name}, {'line' if path.suffix == '.jsonl' else 'record'} {line}"
        if not isinstance(record, dict) or "doc_id" not in record:
            raise InvalidInputError(f"{where} is a record without doc_id; pass the samples file lmms-eval wrote "
                                    "with --log_samples.")
        flt = record.get("filter")
        output = _first_text(record.get("filtered_resps"), flt) or _first_text(record.get("resps"), flt) or ""
        target = record.get("target")
        target = target if isinstance(target, str) else None
        doc = record.get("doc")
        ours = [v["id"] for v in record.values() if isinstance(v, dict) and "metric" in v and v.get("id")]
        if isinstance(doc, dict) and doc.get("id"):
            yield Row(str(doc["id"]), output, where, target)
        elif ours:  # the per-metric payload our export's process_results writes names the item
            yield Row(str(ours[0]), output, where, target)
        elif ordered is not None:
            yield Row(_by_order(ordered, record["doc_id"], path), output, where, target)
        else:
            raise InvalidInputError(f"{path} keeps neither the documents nor a task name of {bench.path} in its file "
                                    "name; pass the *_samples_<task>.jsonl files lmms-eval wrote.")


def _inspect_rows(path: Path, bench: Benchmark) -> Iterator[Row]:
    log_module = require("inspect_ai.log", "interop")
    try:
        log = log_module.read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001  (inspect_ai's reader raises many kinds for a file that is not a log)
        raise InvalidInputError(f"{path} is not an inspect_ai log ({type(exc).__name__}: {str(exc)[:200]}); pass the "
                                ".eval or .json files `inspect eval` wrote under its --log-dir.") from None
    for sample in log.samples or []:
        if sample.error is not None or sample.output is None:
            continue  # it never answered: missing, as for a tool that did not write the row
        target = sample.target if isinstance(sample.target, str) else None
        yield Row(str(sample.id), sample.output.completion, f"{path.name}, sample {sample.id}", target)


READERS = {"vlmevalkit": _vlmevalkit_rows, "lmms-eval": _lmms_rows, "inspect": _inspect_rows}
"""The row reader of each tool's result files."""


def _check_aligned(row: Row, item: Item, bench: Benchmark) -> None:
    """Refuse a row whose own answer column disagrees with the item it was matched to: the rows are misaligned
    (a shifted index, another benchmark or build), and every score would be wrong."""
    if row.answer is None or row.answer.strip() == answer_text(item).strip():
        return
    raise InvalidInputError(
        f"{row.where} gives the answer {row.answer[:40]!r} but was matched to item {item.id}, whose answer is "
        f"{answer_text(item)[:40]!r}, so the file's rows do not line up with the items of {bench.path}; pass the "
        "files the tool wrote for this benchmark as exported (with their id column)."
    )


def import_predictions(bench: Benchmark, sources: str | Path | Sequence[str | Path], out: str | Path, *, tool: str,
                       model: str | None = None, allow_missing: bool = False) -> ImportSummary:
    """Read ``sources`` (``tool`` result files) into run folder ``out`` for ``bench``, then score it.

    Args:
        bench: the benchmark the predictions answer (the one exported to the tool).
        sources: VLMEvalKit result tables (one per exported layout), lmms-eval sample logs (one per task) or
            inspect_ai logs (one per task).
        out: a new run folder.
        tool: ``vlmevalkit``, ``lmms-eval`` or ``inspect``.
        model: the model's name (default: the first source file's name).
        allow_missing: score even when more than half of the items have no prediction (they score as missing).

    Raises:
        InvalidInputError: unknown tool, unreadable source, a folder that already holds predictions,
            sources none of whose rows match the benchmark's items, or (without ``allow_missing``) sources that
            leave more than half of the items without a prediction.
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
    folder = RunFolder(out)
    files = [{"path": str(p.resolve()), "sha256": sha256_file(p)} for p in paths]
    _check_out(folder, bench, tool, files)
    read = READERS[tool]
    items = {item.id: item for item in bench.items}
    uri = f"imported:{tool}:{model or paths[0].stem}"
    protocol = f"imported-{tool}"
    latest: dict[str, Prediction] = {}
    conflicting: list[str] = []
    unknown = duplicates = 0
    for source in paths:
        for row in read(source, bench):
            item = items.get(row.item_id) if row.item_id is not None else None
            if item is None:
                unknown += 1
                continue
            _check_aligned(row, item, bench)
            if item.id in latest:
                duplicates += 1
                if latest[item.id].raw_output != row.output and item.id not in conflicting:
                    conflicting.append(item.id)
            extraction = extract(item, row.output)
            latest[item.id] = Prediction(
                item_id=item.id, model=uri, protocol=protocol, request_hash=content_hash([item.id, row.output]),
                raw_output=row.output, answer=extraction.answer, extraction=extraction.rule,
            )
    if not latest:
        names = ", ".join(map(str, paths))
        raise InvalidInputError(
            f"No row of {names} matches an item of {bench.path}; pass the benchmark that was exported to {tool}."
        )
    missing = len(bench.items) - len(latest)
    if missing * 2 > len(bench.items) and not allow_missing:
        raise InvalidInputError(
            f"Only {len(latest)} of the {len(bench.items)} items of {bench.path} have a prediction in "
            f"{', '.join(p.name for p in paths)}; pass every result file {tool} wrote ({WHERE[tool]}), or "
            "--allow-missing to score the rest as missing."
        )
    m = bench.manifest
    config = RunConfig(
        benchmark=BenchmarkRef(path=str(bench.path), name=m.benchmark, version=m.version,
                               manifest_sha256=bench.manifest_hash, items_sha256=m.items_sha256, licence=m.licence),
        model=ModelRef(uri=uri, identity={"uri": uri}),
        protocol=ProtocolRef(name=protocol),
        imported_from={"tool": tool, "files": files},
        medtemporal_version=__version__, started_at=now(), finished_at=now(), packages=package_versions(),
    )
    with folder.writer():  # the config first: a killed import is known by it, and finished by the same command
        folder.write_config(config)
        folder.write_predictions(latest[item.id] for item in bench.items if item.id in latest)
    score_run(out)
    return ImportSummary(out, len(latest), unknown, duplicates, conflicting, missing)


def _check_out(folder: RunFolder, bench: Benchmark, tool: str, files: list[dict[str, str]]) -> None:
    """Refuse an ``--out`` that holds another run; the same import (benchmark, tool and files), killed or done,
    is done again."""
    old = folder.read_config()
    if old is None and not folder.has_predictions():
        return
    same = (old is not None and (old.model_extra or {}).get("imported_from") == {"tool": tool, "files": files}
            and old.benchmark.items_sha256 == bench.manifest.items_sha256)
    if not same:
        raise InvalidInputError(f"{folder.path} already holds another run; import into a new --out folder.")
