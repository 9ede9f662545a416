"""A response cache shared across runs: SQLite in WAL mode, keyed by what was asked of whom.

The key of a request is the sha256 of the backend's identity (name,
endpoint, image bound ...) and the whole request: generation settings,
message content with images by the sha256 of their bytes (each file hashed
once per process), answer space, key and answer format. A cached response is served instead of calling the model again,
across runs and after a crash. Keys and responses only: no API key, no
pixels. Usable outside a run:

>>> import tempfile, pathlib
>>> from medtemporal.backends.base import Message, Request, Response, TextPart
>>> cache = ResponseCache(pathlib.Path(tempfile.mkdtemp()) / "responses.sqlite")
>>> key = request_key({"uri": "openai:gpt-4o"}, Request((Message("user", (TextPart("Hi"),)),)))
>>> cache.put(key, Response("Hello", 3, 1, "gpt-4o"))
>>> cache.get(key).text
'Hello'
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterator

from medtemporal.backends.base import GenerateConfig, Request, Response, TextPart
from medtemporal.backends.images import file_sha256
from medtemporal.errors import InvalidInputError
from medtemporal.schema import content_hash

__all__ = ["ResponseCache", "default_cache_path", "request_content", "request_key"]


def default_cache_path() -> Path:
    """``$MEDTEMPORAL_CACHE``, else ``$XDG_CACHE_HOME/medtemporal/responses.sqlite`` (``~/.cache`` by default)."""
    explicit = os.environ.get("MEDTEMPORAL_CACHE")
    if explicit:
        return Path(explicit)
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "medtemporal" / "responses.sqlite"


@functools.lru_cache(maxsize=256)
def _config(config: GenerateConfig) -> dict[str, Any]:
    """``config`` as plain data, made once per config (a run's requests share a few; read, never changed)."""
    return asdict(config)


def request_content(request: Request) -> dict[str, Any]:
    """The request as plain data, images replaced by ``{"image": sha256}``."""
    messages = [
        {
            "role": m.role,
            "parts": [
                {"text": p.text} if isinstance(p, TextPart) else {"image": file_sha256(p.path)}
                for p in m.parts
            ],
        }
        for m in request.messages
    ]
    return {
        "messages": messages,
        "config": _config(request.config),
        "choices": list(request.choices) if request.choices is not None else None,
        "key": request.key,
        "answer_format": request.answer_format,
        **({"embed": True} if request.embed else {}),  # absent otherwise: older keys stay as they were
    }


def request_key(identity: dict[str, Any], request: Request, sample: int = 0) -> str:
    """Hex sha256 (32 digits) of ``identity``, the request's content (images by content hash) and ``sample``.

    ``sample`` is the repeat a request belongs to when repeats are distinct samples (temperature above 0):
    repeat 3 is never served repeat 0's response. Sample 0 leaves the key as it was without repeats.
    """
    content: dict[str, Any] = {"identity": identity, "request": request_content(request)}
    if sample:
        content["sample"] = sample
    return content_hash(content, length=32)


class ResponseCache:
    """Responses by request key in an SQLite file (WAL: readers never block the writer).

    Safe to share between runs and processes; each call commits, so a crash
    loses nothing that was put.

    Args:
        path: the database file; its folder is created.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise InvalidInputError(f"The response cache {self.path} is a folder; pass a file name with --cache.")
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidInputError(
                f"The response cache {self.path} cannot be opened ({exc}); pass another --cache file or --no-cache."
            ) from None
        with self._guard():
            self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses "
                "(key TEXT PRIMARY KEY, response TEXT NOT NULL, created REAL NOT NULL)"
            )
        self.hits = 0
        self.misses = 0

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn a failing database file into one sentence naming it, what is wrong and the way out: a file that
        cannot be written (full disk, read-only file system or file, no permission) is not a damaged one."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            text = str(exc).lower()
            cause = None
            if "full" in text or "readonly" in text or "disk i/o" in text or "unable to open" in text:
                folder = self.path.parent
                try:
                    fs = os.statvfs(folder)
                    writable = "readonly" not in text and os.access(folder, os.W_OK)
                    cause = ("its file system is read-only" if fs.f_flag & os.ST_RDONLY
                             else "the disk is full" if "full" in text or fs.f_bavail == 0
                             else "it or its folder is read-only" if not writable
                             else "the file system refused a read or write")
                except OSError:
                    cause = "its folder cannot be read"
            elif "locked" in text:
                cause = "another process holds it locked"
            if cause is not None:
                raise InvalidInputError(
                    f"The response cache {self.path} cannot be written: {cause} ({exc}); nothing in it is lost: "
                    "free space or make it writable, pass another --cache file, or run with --no-cache."
                ) from None
            raise InvalidInputError(
                f"The response cache {self.path} is damaged ({exc}); delete it (answers will be asked again) "
                "or run with --no-cache."
            ) from None

    def get(self, key: str) -> Response | None:
        """The cached response for ``key``, or None (also for a row that is not a valid response, and for an empty
        reply, which older versions cached: it is asked again)."""
        with self._lock, self._guard():
            row = self._db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        response = None
        if row is not None:
            try:
                data = json.loads(row[0])
                response = Response(**data) if isinstance(data, dict) else None
            except (TypeError, ValueError):  # a bad row is a miss: the model is asked again and the row replaced
                response = None
            if response is not None and (not isinstance(response.text, str) or not response.text.strip()):
                response = None
        if response is None:
            self.misses += 1
            return None
        self.hits += 1
        return response

    def put(self, key: str, response: Response) -> None:
        """Store ``response`` under ``key`` (replacing any earlier one), committed at once."""
        data = json.dumps(asdict(response), ensure_ascii=False)
        with self._lock, self._guard():
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?)", (key, data, time.time()))

    def __len__(self) -> int:
        with self._lock, self._guard():
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the database (a checkpoint folds the WAL back into the file)."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
