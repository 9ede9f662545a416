"""Released question files declared, not checked by hand: each field's name, type and allowed values.

A family declares the records of its released file once, as a `Schema` of `Field`s; reading the file through it
(`Schema.json_lines`, `Schema.json_list`, `Schema.rows` for a table read with
`medtemporal.sources.release_files.read_table`) refuses the first record that breaks the declaration in one
sentence naming the file, the line (or record) and the field, and gives the family each record with its cells
typed. What is left to the family is what relates fields to each other and what it counts.

>>> schema = Schema("a question record", (Field("id", int), Field("answer", choices=("A", "B"))), closed=True)
>>> schema.problem({"id": 1, "answer": "C"})
"key `answer` must be one of A, B, not 'C'"
>>> schema.problem({"id": "1", "answer": "A"}), schema.problem({"id": 1, "answer": "A", "note": ""})
('key `id` must be an integer', "key `note` is not one of the release's (id, answer)")
>>> schema.cell("id", " 12 ", "q.csv, line 2"), schema.cell("answer", "C", "q.csv, line 3")
Traceback (most recent call last):
...
medtemporal.errors.InvalidInputError: q.csv, line 3: answer 'C' is none of A, B; fix that row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medtemporal.errors import InvalidInputError
from medtemporal.sources.release_files import Table, integer_id, read_json, read_jsonl

_TYPES = {int: "an integer", str: "a string", dict: "a JSON object", list: "a JSON list", float: "a number"}
ANY = object
"""The ``type`` of a JSON field whose value the family reads itself (an index given as text, a nullable text)."""


@dataclass(frozen=True)
class Field:
    """One field of a released record (a JSON key, or a table column).

    Attributes:
        name: the key or column as released.
        type: what its value must be: in JSON, the value's type (``int`` excludes booleans); in a table, ``int``
            reads the cell as an integer id (`medtemporal.sources.release_files.integer_id`), ``float`` as a number,
            ``str`` keeps it.
        choices: the values it may take (after ``fold``), when they are few.
        pattern: a regular expression its text must match whole.
        like: how a good value looks, ending the message when ``pattern`` fails ("a MIMIC-CXR-JPG path like ...").
        fold: applied to a table cell before ``choices`` are compared (e.g. ``str.lower``); the folded text is kept.
        empty: a table cell may be empty (read as None), not checked further.
        non_empty: a JSON string (a table cell) must hold more than spaces.
        strip: a table cell is read without its surrounding spaces (off: exactly as released).
    """

    name: str
    type: type = str
    choices: tuple[str, ...] = ()
    pattern: str | None = None
    like: str = ""
    fold: Callable[[str], str] | None = None
    empty: bool = False
    non_empty: bool = False
    strip: bool = True

    def problem(self, value: Any) -> str | None:
        """What is wrong with a JSON ``value`` of this key, in words; None when nothing is."""
        key = f"key `{self.name}`"
        if not isinstance(value, self.type) or (self.type is int and isinstance(value, bool)):
            return f"{key} must be {_TYPES.get(self.type, self.type.__name__)}"
        if self.non_empty and not str(value).strip():
            return f"{key} must be a non-empty string"
        if self.choices and value not in self.choices:
            return f"{key} must be one of {', '.join(self.choices)}, not {value!r}"
        if self.pattern is not None and not re.fullmatch(self.pattern, str(value)):
            return f"{key} must be {self.like or f'text matching {self.pattern}'}"
        return None


@dataclass(frozen=True)
class Schema:
    """The records of one released file: ``fields`` in the release's order.

    Attributes:
        record: what one record is, for messages ("an MMXU record").
        fields: the declared fields.
        closed: a JSON record may hold no other key.
    """

    record: str
    fields: tuple[Field, ...]
    closed: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def field(self, name: str) -> Field:
        return next(f for f in self.fields if f.name == name)

    def problem(self, record: Any) -> str | None:
        """The first way a JSON ``record`` breaks the declaration, in words (missing keys first, in the release's
        order); None when it keeps it."""
        if not isinstance(record, dict):
            return "it is not a JSON object"
        missing = [f.name for f in self.fields if f.name not in record]
        if missing:
            return f"key `{missing[0]}` is missing"
        if self.closed:
            extra = [k for k in record if k not in self.names]
            if extra:
                return f"key `{extra[0]}` is not one of the release's ({', '.join(self.names)})"
        return next((p for f in self.fields if (p := f.problem(record[f.name])) is not None), None)

    def json_lines(self, path: str | Path, *, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
        """``(line, record)`` of each record of a JSON Lines file, every one checked.

        Raises:
            InvalidInputError: the file cannot be read (`read_jsonl`), or a line breaks the declaration (naming
                the file, the line and the key).
        """
        for line, record in read_jsonl(path, what=what):
            problem = self.problem(record)
            if problem is not None:
                raise InvalidInputError(f"{path}, line {line} is not {self.record} ({problem}); fix or remove that "
                                        "line.")
            yield line, record

    def json_list(self, path: str | Path, *, what: str) -> list[dict[str, Any]]:
        """The records of a JSON document holding one list, every one checked.

        Raises:
            InvalidInputError: the file cannot be read (`read_json`), is not a list, or a record breaks the
                declaration (naming the file, the record's index and the key).
        """
        data = read_json(path, what=what)
        if not isinstance(data, list):
            raise InvalidInputError(f"{path} must hold a JSON list of records, as {what} does.")
        for index, record in enumerate(data):
            problem = self.problem(record)
            if problem is not None:
                raise InvalidInputError(f"{path}, record {index} is not {self.record} ({problem}); fix or remove it.")
        return data

    def cell(self, name: str, value: str, where: str) -> Any:
        """A table cell of column ``name`` as declared: an integer for ``int`` (a number for ``float``), None for an
        empty cell of an ``empty`` column, else its text (stripped unless ``strip`` is off, then folded).

        Raises:
            InvalidInputError: the cell breaks the declaration (``where`` starts the sentence: file and line).
        """
        column = self.field(name)
        text = value.strip()
        if column.empty and not text:
            return None
        problem = None
        if column.type in (int, float):
            try:
                return integer_id(value, where, name) if column.type is int else float(text)
            except (InvalidInputError, ValueError):
                problem = f"{name} {value!r} is not {'an integer' if column.type is int else 'a number'}"
        elif column.non_empty and not text:
            problem = f"{name} is empty"
        elif column.choices and (column.fold(text) if column.fold else text) not in column.choices:
            problem = f"{name} {value!r} is none of {', '.join(column.choices)}"
        elif column.pattern is not None and not re.fullmatch(column.pattern, text):
            problem = f"{name} {value!r} is not {column.like or f'text matching {column.pattern}'}"
        if problem is not None:
            raise InvalidInputError(f"{where}: {problem}; fix that row.")
        text = text if column.strip else value
        return column.fold(text) if column.fold else text

    def rows(self, table: Table, positions: Iterable[int] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
        """``(row, cells)`` of the data rows of ``table`` at ``positions`` (default: all, in file order), every
        declared column read with `cell`.

        Raises:
            InvalidInputError: a cell breaks the declaration (naming the file, the line and the column).
        """
        columns = [table.frame[name].tolist() for name in self.names]
        for row in range(len(table)) if positions is None else positions:
            values = [column[row] for column in columns]
            where = table.where(row)
            yield row, {name: self.cell(name, value, where) for name, value in zip(self.names, values)}
