"""``medtemporal view``: the HTML report with its per-item viewer, served on loopback only.

The report of the runs (`medtemporal.report.write_report`, HTML and the
benchmark's own files) is written into a fresh temporary folder and served
read-only by the standard library's `http.server` on ``127.0.0.1``: never on
another address, so predictions of credentialed data stay on this machine.
"""

from __future__ import annotations

import functools
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Sequence

from medtemporal.errors import InvalidInputError

HOST = "127.0.0.1"
"""The only address the viewer binds to."""


class _Quiet(SimpleHTTPRequestHandler):
    """Static files from the report folder, without a log line per request."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the stdlib's name)
        pass


class ReportServer:
    """The report of ``runs`` written to a temporary folder and served on ``127.0.0.1:port`` (0: a free port).

    Use as a context manager, or call `serve_forever` / `close`.
    """

    def __init__(self, runs: Sequence[str | Path], port: int = 0) -> None:
        from medtemporal.report import write_report

        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise InvalidInputError(f"--port must be a whole number from 0 (any free port) to 65535, not {port!r}.")
        self._tmp = tempfile.TemporaryDirectory(prefix="medtemporal-view-")
        self.folder = Path(self._tmp.name)
        write_report(runs, self.folder, ("html",))
        handler = functools.partial(_Quiet, directory=str(self.folder))
        try:
            self.httpd = ThreadingHTTPServer((HOST, port), handler)
        except OSError as exc:
            self._tmp.cleanup()
            raise InvalidInputError(f"Port {port} on {HOST} cannot be used ({exc.strerror}); pass another --port, "
                                    "or 0 for any free port.") from None
        self.port = int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        """The report page, opened at its per-item viewer."""
        return f"http://{HOST}:{self.port}/report.html#viewer"

    def serve_forever(self) -> None:
        """Answer requests until `close` (or Ctrl-C)."""
        self.httpd.serve_forever()

    def start(self) -> threading.Thread:
        """Serve in a daemon thread; returns it."""
        thread = threading.Thread(target=self.serve_forever, daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        """Stop serving and remove the temporary report."""
        self.httpd.shutdown()
        self.httpd.server_close()
        self._tmp.cleanup()

    def __enter__(self) -> "ReportServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
