"""An append-only JSON Lines log that survives kills and power cuts: a run's predictions and judgements.

`medtemporal.runs.RunFolder` opens one per log file of a run folder; nothing else writes them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from medtemporal.errors import InvalidInputError
from medtemporal.schema import Record, describe_validation_error, dumps, iter_jsonl
from medtemporal.writes import disk_error, replacing

SYNC_INTERVAL_S = 0.1
"""How long an appended line may wait for its ``fsync`` (seconds)."""
R = TypeVar("R", bound=Record)


class AppendLog(Generic[R]):
    """An append-only JSON Lines file of ``record`` lines: predictions, judgements.

    Each line goes to the operating system with one ``write`` the moment it is appended, so it survives
    the process being killed; a background thread ``fsync``s the file at most every `SYNC_INTERVAL_S`, so
    it survives a power cut too, without the writer waiting on the disk. A command killed at any moment
    leaves at most one partial last line, which `resume` cuts off.
    """

    def __init__(self, path: Path, record: type[R]) -> None:
        self.path = path
        self.record = record
        self._fd: int | None = None
        self._dirty = threading.Event()
        self._closing = False
        self._closed = threading.Event()
        self._syncer: threading.Thread | None = None

    def resume(self, key: Callable[[R], Hashable], keep: Callable[[R], bool] = lambda r: True) -> dict[Any, R]:
        """Repair the file after a crash and return its kept records by ``key`` (the last line of a key wins).

        A partial last line is cut off; records for which ``keep`` is False (failed attempts, asked again)
        and superseded ones are dropped; the file is rewritten atomically when anything was removed.

        Raises:
            InvalidInputError: a complete line is not a record.
        """
        if not self.path.is_file():
            return {}
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        kept: dict[Any, R] = {}
        dropped = 0
        for lineno, line in enumerate(data[:end].splitlines(), 1):
            if not line.strip():
                dropped += 1
                continue
            try:
                record = self.record.model_validate_json(line)
            except ValidationError as exc:
                raise InvalidInputError(
                    f"{self.path}, line {lineno}: {describe_validation_error(exc)}; remove that line to resume."
                ) from None
            k = key(record)
            if not keep(record):
                dropped += 1
                kept.pop(k, None)
                continue
            if k in kept:
                dropped += 1
            kept[k] = record
        if dropped or end != len(data):
            with replacing(self.path) as tmp, tmp.open("w", encoding="utf-8", newline="\n") as fh:
                fh.writelines(dumps(r) + "\n" for r in kept.values())
                fh.flush()
                os.fsync(fh.fileno())
        return kept

    def records(self) -> Iterator[R]:
        """Every complete line as a record, in file order (nothing when the file does not exist)."""
        if self.path.is_file():
            yield from iter_jsonl(self.path, self.record)

    def append(self, record: R) -> None:
        """Write one line with one ``write`` (the OS has it on return); it is fsync'd within `SYNC_INTERVAL_S`."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self._closing = False
            self._closed = threading.Event()
            self._syncer = threading.Thread(target=self._sync, args=(self._fd,), name="log-fsync", daemon=True)
            self._syncer.start()
        view = memoryview((dumps(record) + "\n").encode("utf-8"))
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:  # a full disk: the partial line is cut off on resume, as after a kill
            raise disk_error(exc, self.path) or exc from None
        if not self._dirty.is_set():  # setting it takes a lock and may wake the syncer: once per fsync is enough
            self._dirty.set()

    def _sync(self, fd: int) -> None:
        while not self._closing:
            self._dirty.wait()
            self._dirty.clear()
            os.fsync(fd)
            self._closed.wait(SYNC_INTERVAL_S)

    def close(self) -> None:
        """Stop the fsync thread, fsync once more and close the file."""
        if self._fd is None:
            return
        self._closing = True
        self._closed.set()
        self._dirty.set()
        if self._syncer is not None:
            self._syncer.join()
        os.fsync(self._fd)
        os.close(self._fd)
        self._fd = None
