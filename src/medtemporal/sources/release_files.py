"""The one reader of released files: CSV / TSV (also gzipped), Excel sheets, JSON and JSON Lines.

Every family reads its release through these functions, so every released file is checked the same way
and every problem is one sentence naming the file and the line (`medtemporal.errors.InvalidInputError`):

- a missing file, one that is not UTF-8, a gzip stream or zip sheet that is damaged or cut short;
- a file that **ends in the middle of a record**: a CSV whose last line has no line break or fewer fields
  than its header, or that ends inside a quoted field; a JSON document or JSON Lines record cut short.
  Released files end with a line break (all 44 of ``../shared/official`` do), so a file without one was cut;
- a CSV row with more fields than its header, and a header that lacks a column the caller needs.

A file cut exactly at a line break is well formed and can only be told by its checksum (the families'
``known_releases.py``) or by what it lacks (a builder counts what it excludes). `deduplicate` drops records repeated
verbatim (`first_of_each`, `Table.repeats`), for the caller to count, and refuses an id given to two
different records.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "q.csv"
>>> _ = path.write_text("id,answer\\n1,yes\\n2,no\\n")
>>> table = read_table(path, columns=("id", "answer"), what="the released q.csv")
>>> table.records()[1], table.where(1)
({'id': '2', 'answer': 'no'}, 'q.csv, line 3')
>>> _ = path.write_text("id,answer\\n1,yes\\n2,n")
>>> read_table(path, what="the released q.csv")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
medtemporal.errors.InvalidInputError: ...q.csv ends in the middle of line 3 (no line break after it), so it is cut short; download the released q.csv again.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import zipfile
import zlib
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from medtemporal.errors import InvalidInputError

if TYPE_CHECKING:
    import pandas as pd

T = TypeVar("T")
_INTEGER_ID = re.compile(r"\d+(\.0+)?")
SHEETS = (".xlsx", ".xlsm")
"""Excel workbooks (VLMEvalKit's result files), read with ``openpyxl``."""


@dataclass
class Table:
    """A CSV, TSV or sheet as read: every cell a string (``""`` when empty), and where each row came from.

    Attributes:
        path: the file.
        frame: the rows, columns as in the header, every value a ``str``.
        name: how messages name the file (default: its name; e.g. ``Task5_Static_Temporal_Diagnosis/d.csv`` where
            several files share a name).
    """

    path: Path
    frame: pd.DataFrame
    name: str = ""
    _text: str | None = field(default=None, repr=False)
    _sep: str = field(default=",", repr=False)
    _lines: list[int] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.name = self.name or self.path.name

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.frame.columns]

    def records(self) -> list[dict[str, str]]:
        """The rows as dicts (column → cell), in file order."""
        return self.frame.to_dict("records")

    def line(self, row: int) -> int:
        """The line of the file (1-based, the header is line 1) where data row ``row`` (0-based) starts; a quoted
        cell may span lines, so this is counted, not computed. Sheets count rows (the header is row 1)."""
        if self._lines is None:
            self._lines = _row_lines(self._text, self._sep) if self._text is not None else []
        return self._lines[row] if row < len(self._lines) else row + 2

    def where(self, row: int) -> str:
        """``"NAME, line N"`` for data row ``row``: the start of an error message about it."""
        return f"{self.name}, {'row' if self.path.suffix.lower() in SHEETS else 'line'} {self.line(row)}"

    def integers(self, columns: Sequence[str], fix: str) -> None:
        """Turn ``columns`` of the frame into integers, in place.

        Raises:
            InvalidInputError: a cell is not a whole number (naming its line, and ``fix``: how to mend it).
        """
        for column in columns:
            bad = ~self.frame[column].str.fullmatch(r"\d+")
            if bad.any():
                row = int(bad.to_numpy().nonzero()[0][0])
                raise InvalidInputError(f"{self.where(row)}: {column} {self.frame[column].iat[row]!r} is not an "
                                        f"integer; {fix}.")
            self.frame[column] = self.frame[column].astype("int64")

    def repeats(self, column: str) -> list[int]:
        """The rows that repeat an earlier row verbatim (for the caller to skip, stating how many).

        Raises:
            InvalidInputError: two different rows share a ``column`` value (naming both lines).
        """
        import numpy as np

        verbatim = self.frame.duplicated(keep="first").to_numpy()
        keys = self.frame[column]
        clash = np.flatnonzero(keys.duplicated(keep="first").to_numpy() & ~verbatim)
        if len(clash):
            k = int(clash[0])
            first = int(np.flatnonzero((keys == keys.iat[k]).to_numpy())[0])
            raise InvalidInputError(f"{self.where(k)} gives {column} {keys.iat[k]!r} to another record than "
                                    f"{self.where(first)}; give each record its own {column}, or remove one of them.")
        return [int(k) for k in np.flatnonzero(verbatim)]


def read_table(path: str | Path, *, columns: Sequence[str] = (), what: str, sep: str | None = None,
               usecols: Sequence[str] | None = None, name: str = "") -> Table:
    """A released table checked whole (module doc): ``.csv``, ``.tsv``, either gzipped (``.gz``), or ``.xlsx``.

    Args:
        path: the file.
        columns: columns the file must have (others may be there too).
        what: what the file should be, as a noun phrase ending a sentence ("the released mimic_all.csv").
        sep: the field separator (default: a tab for ``.tsv``, else a comma).
        usecols: read only these columns (all must exist); the whole file is still checked.
        name: how messages about its rows name it (`Table.name`).

    Raises:
        InvalidInputError: the file is missing, unreadable, cut short, or lacks one of ``columns``.
    """
    import pandas as pd

    path = Path(path)
    needed = list(dict.fromkeys([*columns, *(usecols or ())]))
    if path.suffix.lower() in SHEETS:
        return _sheet(path, needed, what, name)
    text = read_text(path, what=what)
    sep = sep or ("\t" if _plain_suffix(path) == ".tsv" else ",")
    if not text.strip():
        raise InvalidInputError(f"{path} is empty; pass {what}.")
    try:
        header = next(_csv_rows(text, sep))
        missing = [c for c in needed if c not in header]
        if missing:
            raise InvalidInputError(f"{path} lacks the column(s) {', '.join(missing)}; pass {what}.")
        frame = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_filter=False,
                            usecols=list(usecols) if usecols is not None else None)
        _check_end(path, text, sep, what)
    except pd.errors.ParserError as exc:
        raise InvalidInputError(f"{path} {_parser_problem(str(exc), text, sep, what)}.") from None
    except csv.Error as exc:
        raise InvalidInputError(f"{path} is not a readable table ({exc}); pass {what}.") from None
    return Table(path, frame, name, text, sep)


def integer_id(value: object, where: str, column: str) -> int:
    """A cell holding an integer id (``123``, or ``123.0`` as a float column writes it), with one sentence naming
    the row when it holds none.

    >>> integer_id(" 42 ", "q.csv, line 2", "study_id"), integer_id("42.0", "q.csv, line 3", "study_id")
    (42, 42)
    """
    text = "" if value is None or (isinstance(value, float) and value != value) else str(value).strip()
    if not _INTEGER_ID.fullmatch(text):
        raise InvalidInputError(f"{where}: {column} {value!r} is not an integer id; fix that row.")
    return int(float(text))


def read_text(path: str | Path, *, what: str) -> str:
    """The file's text (UTF-8, a byte-order mark dropped; ``.gz`` files decompressed), one sentence naming the
    line when it is not UTF-8, and the file when it is missing, unreadable or a gzip stream cut short."""
    path = Path(path)
    if not path.exists():
        raise InvalidInputError(f"{path} does not exist; pass {what}.")
    if path.is_dir():
        raise InvalidInputError(f"{path} is a folder; pass {what}, a file.")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidInputError(f"{path} cannot be read ({exc.strerror or exc}); pass {what}.") from None
    if path.suffix.lower() == ".gz":
        try:
            raw = gzip.decompress(raw)
        except EOFError:
            raise InvalidInputError(f"{path} ends before its gzip stream does, so it is cut short; download {what} "
                                    "again.") from None
        except (OSError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
            raise InvalidInputError(f"{path} is not a readable gzip file ({exc}); pass {what}.") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InvalidInputError(f"{path}, line {line} is not UTF-8 text (byte {exc.start}); pass {what} as "
                                "UTF-8.") from None


def read_json(path: str | Path, *, what: str) -> Any:
    """The JSON document in ``path`` (``.gz`` too); one sentence naming the line where it breaks off or is not JSON.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "test.json"
    >>> _ = path.write_text('[{"a": 1},\\n {"a": 2')
    >>> read_json(path, what="the released test.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    medtemporal.errors.InvalidInputError: ...test.json ends in the middle of a record (line 2), so it is cut short; download the released test.json again.
    """
    path = Path(path)
    text = read_text(path, what=what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if _at_end(exc, text):
            line = text.rstrip().count("\n") + 1
            raise InvalidInputError(f"{path} ends in the middle of a record (line {line}), so it is cut short; "
                                    f"download {what} again.") from None
        raise InvalidInputError(f"{path}, line {exc.lineno}, column {exc.colno} is not JSON ({exc.msg}); fix it, or "
                                f"pass {what}.") from None


def read_jsonl(path: str | Path, *, what: str) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line of a JSON Lines file (``.gz`` too), in order.

    Raises:
        InvalidInputError: the file is missing or unreadable, its last line breaks off, or a line is not JSON.
    """
    path = Path(path)
    text = read_text(path, what=what)
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            if number == len(lines) and not text.endswith("\n") and _at_end(exc, line):
                raise InvalidInputError(f"{path} ends in the middle of line {number}, so it is cut short; download "
                                        f"{what} again.") from None
            raise InvalidInputError(f"{path}, line {number} is not a JSON record ({exc.msg}, column {exc.colno}); "
                                    f"fix that line, or pass {what}.") from None
        yield number, value


def first_of_each(records: Sequence[Any], key: Callable[[Any], Hashable], *, where: Callable[[int], str],
                  name: str = "id") -> list[int]:
    """The positions of ``records`` to keep: all but the verbatim repeats of an earlier record (the caller
    states how many it left out: ``len(records) - len(kept)``).

    Args:
        records: in file order.
        key: a record's id.
        where: the start of an error message about record ``k`` (``"FILE, line N"``).
        name: what the id is called in the file.

    Raises:
        InvalidInputError: two different records share an id (naming both).

    >>> first_of_each([{"id": 1}, {"id": 2}, {"id": 1}], lambda r: r["id"], where=lambda k: f"line {k + 1}")
    [0, 1]
    """
    first: dict[Hashable, int] = {}
    kept: list[int] = []
    for k, record in enumerate(records):
        at = first.setdefault(key(record), k)
        if at == k:
            kept.append(k)
        elif records[at] != record:
            raise InvalidInputError(f"{where(k)} gives {name} {key(record)!r} to another record than {where(at)}; "
                                    f"give each record its own {name}, or remove one of them.")
    return kept


def _at_end(exc: json.JSONDecodeError, text: str) -> bool:
    """Whether a JSON error is the text breaking off: at its end, or in a string never closed (a string cannot
    span lines, so one that is not closed runs to the end)."""
    return exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")


def _plain_suffix(path: Path) -> str:
    """The suffix that says the format (``.csv`` of ``x.csv.gz``)."""
    suffixes = [s.lower() for s in path.suffixes]
    return suffixes[-2] if suffixes and suffixes[-1] == ".gz" and len(suffixes) > 1 else (suffixes or [""])[-1]


def _check_end(path: Path, text: str, sep: str, what: str) -> None:
    """Refuse a table whose last record breaks off: no line break after it, or fewer fields than the header (pandas
    has refused an open quote at the end). Only the last record is parsed: a quoted cell may span lines, so
    lines are added until the quotes after the record's start pair up (else the last line is taken)."""
    if not text.endswith(("\n", "\r")):
        lines = text.count("\n") + 1
        raise InvalidInputError(f"{path} ends in the middle of line {lines} (no line break after it), so it is cut "
                                f"short; download {what} again.")
    body = text.rstrip("\r\n")
    last_line = start = body.rfind("\n")
    while start >= 0 and body.count('"', start + 1) % 2:
        start = body.rfind("\n", 0, start)
    if start < 0:
        start = last_line
    if start < 0:
        return  # the header alone
    header = next(_csv_rows(text, sep))
    fields = next(_csv_rows(body[start + 1:], sep), [])
    if len(fields) < len(header):
        line = body.count("\n", 0, start) + 2
        raise InvalidInputError(f"{path} ends in the middle of a record: its last one (line {line}) has {len(fields)} "
                                f"of the header's {len(header)} fields, so it is cut short; download {what} again.")


def _parser_problem(message: str, text: str, sep: str, what: str) -> str:
    """What pandas' parser found and the fix, as the end of a sentence naming the line."""
    import re

    fields = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", message)
    if fields:
        return (f"line {fields[2]} has {fields[3]} fields where the header has {fields[1]}; fix that line, or pass "
                f"{what}")
    if "EOF inside string" in message:
        lines = _row_lines(text, sep)
        return (f"ends inside a quoted field of the record on line {lines[-1] if lines else 1}, so it is cut short; "
                f"download {what} again")
    return f"cannot be read as a table ({message.strip().splitlines()[-1][:200]}); pass {what}"


def _csv_rows(text: str, sep: str) -> Iterator[list[str]]:
    """A `csv.reader` over ``text`` whose field limit (131,072 characters by default) is at least the text's
    length, so that a long report or an embedded document in one cell reads as pandas reads it (the limit is only
    ever raised, and kept within a C ``long`` on every platform)."""
    needed = min(len(text) + 1, 2**31 - 1)
    if csv.field_size_limit() < needed:
        csv.field_size_limit(needed)
    return csv.reader(io.StringIO(text, newline=""), delimiter=sep)


def _row_lines(text: str, sep: str) -> list[int]:
    """The line each data row starts on (blank lines skipped, as pandas skips them)."""
    reader = _csv_rows(text, sep)
    next(reader, None)
    lines, start = [], reader.line_num + 1
    for row in reader:
        if row:
            lines.append(start)
        start = reader.line_num + 1
    return lines


def _sheet(path: Path, needed: list[str], what: str, name: str) -> Table:
    """An Excel sheet as a `Table` (every cell a string)."""
    import pandas as pd

    if not path.is_file():
        raise InvalidInputError(f"{path} does not exist; pass {what}.")
    try:
        frame = pd.read_excel(path, dtype=str, keep_default_na=False, na_filter=False, engine="openpyxl")
    except ImportError:
        raise InvalidInputError(f"Reading {path} needs openpyxl; install it with `pip install 'medtemporal[interop]'` "
                                "(or `pip install openpyxl`), or save the sheet as .tsv.") from None
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, EOFError) as exc:
        raise InvalidInputError(f"{path} is not a readable Excel workbook ({type(exc).__name__}: {str(exc)[:120]}); "
                                f"pass {what}, or save it as .tsv.") from None
    frame = frame.astype(str)
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise InvalidInputError(f"{path} lacks the column(s) {', '.join(missing)}; pass {what}.")
    return Table(path, frame, name)
