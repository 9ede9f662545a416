"""Reader of 3D-RAD's released test split: 41 CSVs under ``3DRAD/test/<TaskN_Name>/<subtask>.csv``.

Every CSV has the header `HEADER`. Tasks 1–3 are open (``QuestionType=Open``,
choices ``-``), Tasks 4–6 closed. Differences from the released loader
(``M3D/Bench/dataset/multi_dataset.py``), each in ``docs/3d-rad.md``:

- open questions get no options (the loader appends ``Choices: A. - B. - C. - D. -``);
- Task 4's ``C = D = "-"`` are not options (the loader shows them);
- volume names ``test_N_x_k`` are mapped to CT-RATE ``valid_N_x_k`` (the paper builds the
  benchmark from CT-RATE's validation patients; no released file states the mapping):
  ``volume_prefix`` overrides the prefix, and a ``VolumeName,Path`` CSV (the authors'
  ``valid_path.csv`` layout) maps each name to any file, such as the preprocessed ``.npy``
  volumes (1×32×256×256 in [0, 1]).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from medtemporal.benchmarks.rad3d.labels import (
    BENCHMARK,
    EXISTENCE_OPTIONS,
    EXISTENCE_ORDER,
    LETTERS_BH,
    OPEN_SUBTASKS,
    TASKS,
    TEMPORAL_LABELS,
    TEMPORAL_OPTIONS,
    find_label,
    temporal_subtype,
)
from medtemporal.family import ImageRef, InvalidInputError, Item
from medtemporal.sources.ct_rate import parse_volume_name, volume_path
from medtemporal.sources.release_files import Table, read_table
from medtemporal.sources.release_schema import Field, Schema

ROW = Schema("a 3D-RAD question", (
    Field("Task", int), Field("Subtask", int, empty=True), Field("VolumeName", strip=False),
    Field("Question", strip=False), Field("Answer", strip=False),
    Field("QuestionType", choices=("Open", "Close"), strip=False), Field("AnswerChoice", strip=False),
    *(Field(f"Choice {k}", strip=False) for k in "ABCD"),
))
"""A row of every released CSV (their shared header); texts are kept as released."""
HEADER = ROW.names
ROWS = 33_910
"""Rows of the released split (the paper's count)."""
_HISTORY = re.compile(r"\[([01](?:\s*,\s*[01])*)\]")


def find_test_folder(folder: Path) -> Path:
    """The folder holding the six ``TaskN_*`` folders: ``folder`` itself, or its ``3DRAD/test``."""
    for candidate in (folder, folder / "test", folder / "3DRAD" / "test"):
        if all((candidate / name).is_dir() for _, name, _ in TASKS.values()):
            return candidate
    raise InvalidInputError(
        f"{folder} does not hold the six released task folders (Task1_Image_Observation … "
        "Task6_Longitudinal_Temporal_Diagnosis); pass --official DIR/3DRAD/test."
    )


def _layout(test: Path) -> list[tuple[str, str, Path]]:
    """(task id, subtask name, path) of the 41 CSVs of the released layout under ``test``, in release order."""
    files = []
    for task, (_, folder, _) in TASKS.items():
        if task in OPEN_SUBTASKS:
            names = OPEN_SUBTASKS[task]
        elif task == "task4":
            names = EXISTENCE_ORDER
        else:
            names = LETTERS_BH
        files += [(task, name, test / folder / f"{name}.csv") for name in names]
    return files


def csv_files(test: Path) -> list[tuple[str, str, Path]]:
    """(task id, subtask name, path) of every released CSV, in release order; all 41 must exist."""
    files = _layout(test)
    for _, _, path in files:
        if not path.is_file():
            raise InvalidInputError(f"{path} does not exist; the released split has 41 CSVs: download it whole.")
    return files


def read_csv(path: Path, name: str = "") -> Table:
    """One released CSV checked whole (`medtemporal.sources.release_files.read_table`), cells as strings."""
    return read_table(path, columns=HEADER, what="the released 3D-RAD CSV (41 of them under 3DRAD/test)", name=name)


def parse_history(question: str) -> list[int] | None:
    """The bracketed 0/1 history of a Task 6 question, or None.

    >>> parse_history("Prior cardiomegaly timeline: [0, 1]. (Note: ...)")
    [0, 1]
    """
    m = _HISTORY.search(question)
    return [int(v) for v in m.group(1).split(",")] if m else None


@dataclass(frozen=True)
class VolumeMap:
    """How a released ``VolumeName`` becomes a path under the image root."""

    prefix: str = "valid"
    """CT-RATE split prefix that replaces ``test`` (``test_N_x_k`` → ``valid_N_x_k``)."""
    paths: dict[str, str] | None = None
    """Released name → relative path (a ``VolumeName,Path`` CSV), overriding the prefix rule."""

    def path(self, name: str) -> str:
        if self.paths is not None:
            if name not in self.paths:
                raise InvalidInputError(f"The volume map has no row for {name}; add it or drop --volume-map.")
            return self.paths[name]
        v = parse_volume_name(name)
        return volume_path(f"{self.prefix}_{v.patient}_{v.letter}_{v.reconstruction}.nii.gz")


def read_volume_map(path: Path, root: Path | None) -> dict[str, str]:
    """A ``VolumeName,Path`` CSV (the authors' ``valid_path.csv`` layout): paths relative to ``root``."""
    table = read_table(path, columns=("VolumeName", "Path"), what="a --volume-map CSV with columns VolumeName and Path "
                       "(UTF-8, one row per volume)")
    table.repeats("VolumeName")  # a name given two paths is refused; verbatim repeats map it once
    df = table.frame
    out = {}
    for name, raw in zip(df["VolumeName"], df["Path"]):
        p = Path(raw)
        if p.is_absolute():
            if root is None or not p.is_relative_to(root):
                raise InvalidInputError(f"--volume-map: {raw} is not under the image root {root}; use relative paths.")
            p = p.relative_to(root)
        if ".." in p.parts:  # a volume read from outside the image root would escape its licence check
            raise InvalidInputError(f"--volume-map: {raw} climbs out of the image root with '..'; use paths under it.")
        out[name] = p.as_posix()
    return out


def _item(task: str, subtask: str, row: dict[str, Any], where: str, volumes: VolumeMap) -> Item:
    name = row["VolumeName"]
    v = parse_volume_name(name)
    meta = {"patient_id": f"{v.split}_{v.patient}", "volume": name, "letter": v.letter,
            "reconstruction": v.reconstruction, "source": where, "subtask_number": row["Subtask"] or 0}
    image = ImageRef(path=volumes.path(name), role="volume", label="CT volume")
    common = dict(benchmark=BENCHMARK, task=task, images=[image], question=row["Question"])
    if task in OPEN_SUBTASKS:
        if row["QuestionType"] != "Open":
            raise InvalidInputError(f"{where}: QuestionType {row['QuestionType']!r} in an open task; is it the released file?")
        return Item.create(**common, subtype=subtask, answer_type="open", answer=row["Answer"],
                           reference=row["Answer"], meta=meta)
    options = EXISTENCE_OPTIONS if task == "task4" else TEMPORAL_OPTIONS
    letter = row["AnswerChoice"]
    given = {k: row[f"Choice {k}"] for k in "ABCD" if row[f"Choice {k}"] not in ("", "-")}
    if given != options or letter not in options or options[letter] != row["Answer"]:
        raise InvalidInputError(f"{where}: choices or answer differ from the release's fixed ones; is it the released file?")
    if task == "task4":
        meta["label"] = subtask
        return Item.create(**common, subtype=subtask, options=options, answer_type="choice", answer=letter, meta=meta)
    label = find_label(row["Question"], TEMPORAL_LABELS)
    if label is None:
        raise InvalidInputError(f"{where}: the question names none of the 17 temporal labels; is it the released file?")
    meta["label"] = label
    if task == "task6":
        history = parse_history(row["Question"])
        if history is None:
            raise InvalidInputError(f"{where}: the Task 6 question has no [0/1, ...] history; is it the released file?")
        meta["history"] = history
    return Item.create(**common, subtype=temporal_subtype(task, subtask), options=options, answer_type="choice",
                       answer=letter, meta=meta)


def read_official(folder: Path, volumes: VolumeMap = VolumeMap()) -> tuple[list[Item], dict[str, Path]]:
    """Items of all six tasks from the released CSVs under ``folder``, and the files read (name → path).

    Raises:
        InvalidInputError: a file is missing or is not in the released format (one sentence naming it).
    """
    test = find_test_folder(folder)
    items: list[Item] = []
    files: dict[str, Path] = {}
    for task, subtask, path in csv_files(test):
        rel = f"{path.parent.name}/{path.name}"
        table = read_csv(path, rel)
        files[rel] = path
        for index, row in ROW.rows(table):
            items.append(_item(task, subtask, row, table.where(index), volumes))
    return items, files


def _row(item: Item) -> dict[str, str]:
    number, _, _ = TASKS[item.task]
    options = item.options
    choices = {k: options.get(k, "-") for k in "ABCD"}
    if not options:
        choices = dict.fromkeys("ABCD", "-")
    if item.task in OPEN_SUBTASKS:
        sub = OPEN_SUBTASKS[item.task].index(item.subtype) + 1
    elif item.task == "task4":
        sub = EXISTENCE_ORDER.index(item.subtype) + 1
    else:
        sub = LETTERS_BH.index(item.subtype.rsplit("_", 1)[1]) + 1
    volume = item.meta.get("volume") or Path(item.images[0].path).name
    answer = str(item.answer) if item.answer_type == "open" else options[str(item.answer)]
    return {"Task": str(number), "Subtask": str(sub), "VolumeName": volume, "Question": item.question, "Answer": answer,
            "QuestionType": "Open" if item.answer_type == "open" else "Close",
            "AnswerChoice": "-" if item.answer_type == "open" else str(item.answer),
            **{f"Choice {k}": v for k, v in choices.items()}}


def write_official(items: Sequence[Item], out: Path) -> int:
    """Write ``items`` in the release's layout, ``out/<TaskN_Name>/<subtask>.csv``; returns the rows written.

    All 41 CSVs are written (a subtask without items gets the header alone), so the folder reads back with
    ``medtemporal build 3d-rad --official OUT``. Volume names are the released ones for imported items, else
    the CT-RATE names.
    """
    import pandas as pd

    groups: dict[tuple[str, str], list[dict[str, str]]] = {
        (path.parent.name, path.stem): [] for _, _, path in _layout(out)
    }
    for item in items:
        folder = TASKS[item.task][1]
        name = item.subtype.rsplit("_", 1)[1] if item.task in ("task5", "task6") else item.subtype
        groups[(folder, name)].append(_row(item))
    for (folder, name), rows in groups.items():
        (out / folder).mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows, columns=list(HEADER)).to_csv(out / folder / f"{name}.csv", index=False)
    return sum(len(rows) for rows in groups.values())
