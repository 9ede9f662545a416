"""The released MMXU file (``MMXU-test.jsonl``), read into Items and written back byte for byte.

One JSON object a line with the keys, in this order (FACTS §5.3; ``LinjieMu/MMXU`` at 4b77721):
``id`` (int), ``content_type`` (``no change``, ``worsen``, ``improved``), ``question``, ``options``
(``{"A": ..., "D": ...}``), ``answer`` (a letter), ``cur_image_path`` and ``prior_image_path``
(``files/p12/p12658542/s54062690/<dicom_id>.jpg``, relative to a MIMIC-CXR-JPG root). The release
writes ``json.dumps(record, ensure_ascii=False)`` (two questions hold a curly apostrophe), so
`write_release` gives a released file back byte for byte.

Each record becomes one `Item` of task `TASK`: the subtype is ``content_type`` as released (it names the
answer's category, so no prompt shows it); the images are the prior image, then the current image, as the
paper's case figure shows them (``imgs/case.png``: "(Prior Image)", "(Current Image)"), captioned
`PRIOR_LABEL` and `CURRENT_LABEL` in the style of TemMed-Bench's two-visit captions; ``meta`` keeps
``id`` and ``content_type``, the patient (from the paths: items are clustered by patient) and both study ids.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

from medtemporal.family import ImageRef, InvalidInputError, Item
from medtemporal.sources.release_schema import Field, Schema
from medtemporal.writes import replacing

BENCHMARK = "mmxu"
TASK = "change"
"""The one task: the change of a region between the prior and the current study."""
CONTENT_TYPES = ("no change", "worsen", "improved")
"""The released ``content_type`` values (1,000 items each in the test file)."""
PRIOR_LABEL = "Prior image:"
CURRENT_LABEL = "Current image:"
_PATH = re.compile(r"files/p\d\d/(p\d+)/(s\d+)/[^/]+\.jpg")
_IMAGE = {"pattern": _PATH.pattern, "like": "a MIMIC-CXR-JPG path like files/p12/p12658542/s5.../<dicom>.jpg"}
RECORD = Schema("an MMXU record", (
    Field("id", int), Field("content_type", choices=CONTENT_TYPES), Field("question", non_empty=True),
    Field("options", dict), Field("answer"), Field("cur_image_path", **_IMAGE), Field("prior_image_path", **_IMAGE),
), closed=True)
"""One line of the release, its keys in the release's order."""
KEYS = RECORD.names


def item_from_record(record: Any) -> Item:
    """One released record as an `Item`.

    Raises:
        ValueError: a key is missing or has the wrong shape (the message names it).
    """
    problem = RECORD.problem(record)
    if problem is not None:
        raise ValueError(problem)
    options = record["options"]
    if len(options) < 2 or any(not re.fullmatch(r"[A-Z]", k) or not isinstance(v, str) for k, v in options.items()):
        raise ValueError("key `options` must map letters to option texts")
    if record["answer"] not in options:
        raise ValueError(f"key `answer` {record['answer']!r} is not one of the options")
    prior, current = (cast(re.Match[str], _PATH.fullmatch(record[k]))  # both matched: RECORD checked them
                      for k in ("prior_image_path", "cur_image_path"))
    patient = current.group(1)
    if prior.group(1) != patient:
        raise ValueError("the prior and current images belong to different patients")
    images = (ImageRef(path=record["prior_image_path"], visit=1, role="historical", label=PRIOR_LABEL),
              ImageRef(path=record["cur_image_path"], visit=2, role="current", label=CURRENT_LABEL))
    return Item.create(
        benchmark=BENCHMARK, task=TASK, subtype=record["content_type"], images=images, question=record["question"],
        options=options, answer_type="choice", answer=record["answer"],
        meta={"id": record["id"], "content_type": record["content_type"], "patient_id": patient,
              "study_ids": [prior.group(2), current.group(2)]},
    )


def read_release(path: str | Path) -> list[Item]:
    """Items of a released ``MMXU-test.jsonl`` in file order, naming the line and key of any problem.

    Raises:
        InvalidInputError: the file is missing or empty, a line is not a release record, or an id repeats.
    """
    path = Path(path)
    what = "the released MMXU-test.jsonl"
    items: list[Item] = []
    seen: dict[int, int] = {}
    for lineno, record in RECORD.json_lines(path, what=what):
        try:
            item = item_from_record(record)
        except ValueError as exc:
            raise InvalidInputError(
                f"{path}, line {lineno} is not an MMXU record ({exc}); fix or remove that line."
            ) from None
        first = seen.setdefault(item.meta["id"], lineno)
        if first != lineno:
            raise InvalidInputError(
                f"{path}, line {lineno} repeats id {item.meta['id']} of line {first}; give each question its own id."
            )
        items.append(item)
    if not items:
        raise InvalidInputError(f"{path} holds no records; pass {what}.")
    return items


def release_record(item: Item) -> dict[str, Any]:
    """The released record of an item read by `item_from_record` (keys in the release's order).

    Raises:
        InvalidInputError: the item is not an MMXU item (no release id, or not a prior/current pair).
    """
    roles = {ref.role: ref.path for ref in item.images}
    if item.benchmark != BENCHMARK or "id" not in item.meta or set(roles) != {"historical", "current"}:
        raise InvalidInputError(f"Item {item.id} is not an MMXU question; the mmxu format holds MMXU items only.")
    return {"id": item.meta["id"], "content_type": item.subtype, "question": item.question,
            "options": dict(item.options), "answer": item.answer, "cur_image_path": roles["current"],
            "prior_image_path": roles["historical"]}


def release_line(record: dict[str, Any]) -> str:
    """One line of the release: ``json.dumps`` with its default spacing and UTF-8 text, as the authors wrote it."""
    return json.dumps(record, ensure_ascii=False) + "\n"


def write_release(items: Iterable[Item], path: str | Path) -> int:
    """Write ``items`` in the released layout (atomically); return how many lines were written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with replacing(path) as tmp, tmp.open("w", encoding="utf-8", newline="\n") as fh:
        for n, item in enumerate(items, 1):
            fh.write(release_line(release_record(item)))
    return n
