"""``predictions.jsonl`` of a run: append-only, each line written and flushed as it arrives.

Each line goes to the operating system with one ``write`` the moment its
answer arrives, so it survives the process being killed; a background
thread then ``fsync``s the file, at most every `SYNC_INTERVAL_S` (all the
lines written meanwhile at once), so it survives a power cut too, without
the run waiting on the disk or waking that thread for every line. A run
killed at any moment leaves at most one partial last line; `PredictionLog.resume`
cuts it off, keeps every answered item, and drops lines recording errors so
those items are tried again. A lock file stops two processes from writing
one run folder at once.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from pydantic import ValidationError

from medtemporal.errors import InvalidInputError
from medtemporal.schema import Prediction, describe_validation_error, dumps
from medtemporal.writes import disk_error, replacing

PREDICTIONS = "predictions.jsonl"
LOCK = ".lock"
SYNC_INTERVAL_S = 0.1
"""Least time between two fsyncs of the predictions file while a run writes it."""


try:
    import fcntl
except ImportError:  # Windows: no advisory locks; one writer per folder is then up to the user
    fcntl = None  # type: ignore[assignment]


class RunLock:
    """An exclusive lock on a run folder, released on close or when the process dies (POSIX ``flock``)."""

    def __init__(self, folder: Path) -> None:
        self._fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is None:
            return
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise InvalidInputError(
                f"Another medtemporal process is writing {folder}; wait for it to finish or use another --out."
            ) from None

    def close(self) -> None:
        """Release the lock."""
        os.close(self._fd)  # closing the descriptor releases the lock

    @staticmethod
    def held(folder: Path) -> bool:
        """True when a process holds the lock of ``folder`` (a run is writing it)."""
        lock = folder / LOCK
        if fcntl is None or not lock.is_file():
            return False
        fd = os.open(lock, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # refused while a run holds it exclusively
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False


class PredictionLog:
    """The predictions file of a run folder."""

    @staticmethod
    def has_predictions(folder: Path) -> bool:
        """True when ``folder`` holds a non-empty predictions file."""
        path = folder / PREDICTIONS
        return path.is_file() and path.stat().st_size > 0

    def __init__(self, folder: Path) -> None:
        self.path = folder / PREDICTIONS
        self._fd: int | None = None
        self._dirty = threading.Event()
        self._closing = False
        self._closed = threading.Event()
        """Set by `close`: cuts the syncer's pause between fsyncs short."""
        self._syncer: threading.Thread | None = None

    def resume(self) -> dict[tuple[str, int], Prediction]:
        """Repair the file after a crash and return the answered predictions by (item id, repeat).

        A partial last line is cut off; lines recording errors are dropped
        (their items are asked again); the file is rewritten atomically when
        anything was removed.

        Raises:
            InvalidInputError: a complete line is not a prediction.
        """
        if not self.path.is_file():
            return {}
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        kept: dict[tuple[str, int], Prediction] = {}
        lines = data[:end].splitlines()
        dropped = 0
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                dropped += 1
                continue
            try:
                prediction = Prediction.model_validate_json(line)
            except ValidationError as exc:
                raise InvalidInputError(
                    f"{self.path}, line {lineno}: {describe_validation_error(exc)}; remove that line to resume."
                ) from None
            unit = (prediction.item_id, prediction.repeat)
            if prediction.error is not None:
                dropped += 1
                kept.pop(unit, None)
                continue
            if unit in kept:
                dropped += 1
            kept[unit] = prediction
        if dropped or end != len(data):
            with replacing(self.path) as tmp, tmp.open("w", encoding="utf-8", newline="\n") as fh:
                fh.writelines(dumps(p) + "\n" for p in kept.values())
                fh.flush()
                os.fsync(fh.fileno())
        return kept

    def append(self, prediction: Prediction) -> None:
        """Write one line with one ``write`` (the OS has it on return); it is fsync'd within `SYNC_INTERVAL_S`."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self._closing = False
            self._closed = threading.Event()
            self._syncer = threading.Thread(target=self._sync, args=(self._fd,), name="predictions-fsync", daemon=True)
            self._syncer.start()
        data = (dumps(prediction) + "\n").encode("utf-8")
        view = memoryview(data)
        try:
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError as exc:  # a full disk: the partial line is cut off on resume, as after a kill
            raise disk_error(exc, self.path) or exc from None
        if not self._dirty.is_set():  # setting it takes a lock and may wake the syncer: once per fsync is enough
            self._dirty.set()

    def _sync(self, fd: int) -> None:
        """Fsync ``fd`` whenever lines were written since the last fsync (at most every `SYNC_INTERVAL_S`),
        until `close`."""
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
