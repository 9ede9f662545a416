"""The released MI-CXR file format (``micxr_test.jsonl``), read into Items and written from them.

One JSON object per line with the keys, in this order, ``q_id`` (int),
``group_type`` (TEL, ICR, GTS), ``qtype`` (``single_emergence`` …),
``images`` (``{"T1": "files/p14/p14993854/s52186348/<dicom_id>.jpg", …}``,
paths relative to a MIMIC-CXR-JPG root), ``question``, ``choices``
(``{"A": …, "E": …}``) and ``answer`` (a letter). The writer uses Python's
default ``json.dumps`` spacing and ASCII escapes, as the released file does,
so reading and writing a released file gives it back byte for byte.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable

from medtemporal.family import ImageRef, InvalidInputError, Item
from medtemporal.sources.release_files import first_of_each
from medtemporal.sources.release_schema import Field, Schema
from medtemporal.writes import replacing

BENCHMARK = "mi-cxr"
RECORD = Schema("an MI-CXR record", (
    Field("q_id", int), Field("group_type"), Field("qtype"), Field("images", dict), Field("question"),
    Field("choices", dict), Field("answer"),
))
"""One line of the release, its keys in the release's order."""
_STUDY_PATH = re.compile(r"(?:^|/)files/p\d+/(p\d+)/(s\d+)/")


def item_from_official(record: dict[str, Any]) -> Item:
    """One released record as an `Item` (`meta` keeps ``q_id``, patient and study ids).

    Raises:
        ValueError: a key is missing or has the wrong shape (the message names it).
    """
    problem = RECORD.problem(record)
    if problem is not None:
        raise ValueError(problem)
    images, choices = record["images"], record["choices"]
    if not images:
        raise ValueError("key `images` must map T1…T5 to image paths")
    order = sorted(images, key=lambda k: int(k[1:]) if re.fullmatch(r"T\d+", k) else -1)
    if any(not re.fullmatch(r"T\d+", k) for k in order) or [int(k[1:]) for k in order] != list(
        range(1, len(order) + 1)
    ):
        raise ValueError(f"key `images` must be T1…T{len(order)}, not {', '.join(images)}")
    if record["answer"] not in choices:
        raise ValueError(f"key `answer` {record['answer']!r} is not one of the choices")
    refs = [ImageRef(path=images[k], visit=int(k[1:]), role="visit", label=k) for k in order]
    meta: dict[str, Any] = {"q_id": record["q_id"]}
    ids = [_STUDY_PATH.search(r.path) for r in refs]
    if all(ids):
        meta["patient_id"] = ids[0].group(1)  # type: ignore[union-attr]
        meta["study_ids"] = [m.group(2) for m in ids]  # type: ignore[union-attr]
    return Item.create(
        benchmark=BENCHMARK,
        task=record["group_type"],
        subtype=record["qtype"],
        images=refs,
        question=record["question"],
        options=choices,
        answer_type="choice",
        answer=record["answer"],
        meta=meta,
    )


def read_official(path: str | Path) -> tuple[list[Item], int]:
    """Items from a released ``micxr_test.jsonl`` in file order, and how many lines repeated an earlier one
    verbatim (left out).

    Raises:
        InvalidInputError: the file is missing, cut short or holds no records, a line is not a release record
            (naming the line and key), or two different records share a ``q_id``.
    """
    path = Path(path)
    what = "the released micxr_test.jsonl"
    lines, records, items = [], [], []
    for lineno, record in RECORD.json_lines(path, what=what):
        try:
            items.append(item_from_official(record))
        except (ValueError, TypeError, AttributeError) as exc:
            reason = exc.errors()[0]["msg"] if hasattr(exc, "errors") else str(exc)
            raise InvalidInputError(
                f"{path}, line {lineno} is not an MI-CXR record ({reason}); fix or remove that line."
            ) from None
        lines.append(lineno)
        records.append(record)
    if not items:
        raise InvalidInputError(f"{path} holds no records; pass {what}.")
    kept = first_of_each(records, lambda r: r["q_id"], where=lambda k: f"{path}, line {lines[k]}", name="q_id")
    return [items[k] for k in kept], len(items) - len(kept)


def official_record(item: Item, q_id: int) -> dict[str, Any]:
    """The released-format record of ``item``; ``q_id`` is used when the item has none."""
    if item.answer_type != "choice" or not isinstance(item.answer, str):
        raise InvalidInputError(
            f"Item {item.id} ({item.task}/{item.subtype}) is not a multiple-choice item; "
            "the micxr format holds only lettered questions."
        )
    images = {ref.label or f"T{ref.visit or n}": ref.path for n, ref in enumerate(item.images, 1)}
    return {
        "q_id": item.meta.get("q_id", q_id),
        "group_type": item.task,
        "qtype": item.subtype,
        "images": images,
        "question": item.question,
        "choices": dict(item.options),
        "answer": item.answer,
    }


def write_official(items: Iterable[Item], path: str | Path) -> int:
    """Write ``items`` in the released format (atomically); return how many were written."""
    n = 0
    with replacing(path) as tmp, tmp.open("w", encoding="utf-8", newline="\n") as fh:
        for n, item in enumerate(items, 1):
            fh.write(json.dumps(official_record(item, n - 1)) + "\n")
    return n
