"""``medtemporal view``: every run under some folders, browsed in a browser, served on loopback only.

The server starts at once and builds nothing up front. Its index (``/``) lists every run folder found
under the paths given (a run folder, or any folder holding run folders at any depth), read afresh on each
visit, so runs that appear or finish while it serves show up: display name, benchmark, model, protocol,
progress and headline score. A run's page (``/r/<key>/report.html``: the HTML report with its per-item
viewer) and the report of all runs of one benchmark together (``/b/<benchmark>/report.html``) are written
(`medtemporal.report.write_report`) into a temporary folder when first asked for, and again once their runs
changed, in the background: until a page is written its address answers at once with a short page that says
so and reloads itself. Run folders given by themselves are also reported together at ``/runs/report.html``,
the URL printed for them (it opens on the headline tables). `start` begins writing that page at once, then,
one after another, each benchmark's page the index links first (its runs together, or its one run), so a
click finds it written. Only ``127.0.0.1`` is bound, so predictions of credentialed data stay on this machine,
and only requests addressed to the viewer's own loopback name and port (``Host: 127.0.0.1:PORT``,
``localhost:PORT`` or ``[::1]:PORT``) are answered: a page elsewhere whose name is re-bound to 127.0.0.1 (DNS
rebinding) gets 403. Every page goes out with the Content-Security-Policy of
`medtemporal.report.escaping.content_security_policy` (no inline event handler, no ``javascript:`` URL, no script
but the page's own).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import quote, unquote, urlsplit

from medtemporal.errors import InvalidInputError, MedTemporalError
from medtemporal.runs import RunConfig, RunFolder, find_runs
from medtemporal.report.escaping import content_security_policy, html_text

HOST = "127.0.0.1"
"""The only address the viewer binds to."""
LOOPBACK_NAMES = (HOST, "localhost", "[::1]")
"""The names a request's ``Host`` may give the viewer (with its port)."""


def _key(path: Path) -> str:
    return hashlib.sha256(str(path).encode()).hexdigest()[:10]


def _signature(runs: Sequence[Path]) -> tuple[int, ...]:
    """The modification times of the runs' files: a page built at another signature is stale."""
    return tuple(t for r in runs for t in RunFolder(r).modified())


REFRESH_S = 2
"""How often a page that is being written reloads itself."""


@dataclass
class _Page:
    """A report page built into ``folder`` for ``runs`` at ``signature``."""

    folder: Path
    runs: tuple[Path, ...]
    signature: tuple[int, ...] = ()


@dataclass
class _Build:
    """A page being written in the background for ``runs`` at ``signature``; ``error`` once it failed."""

    runs: tuple[Path, ...]
    signature: tuple[int, ...]
    started: float = field(default_factory=time.monotonic)
    error: str | None = None
    done: threading.Event = field(default_factory=threading.Event)
    """Set once the page is written or failed."""


class ReportServer:
    """Serve the runs under ``paths`` on ``127.0.0.1:port`` (0: a free port); pages are built when first asked for.

    Use as a context manager, or call `start` / `serve_forever` and `close`.
    """

    def __init__(self, paths: Sequence[str | Path], port: int = 0) -> None:
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise InvalidInputError(f"--port must be a whole number from 0 (any free port) to 65535, not {port!r}.")
        self.paths = [Path(p) for p in paths]
        for path in self.paths:
            if not path.is_dir():
                raise InvalidInputError(f"{path} is not a folder; pass run folders, or folders that hold them.")
        self.given = [p.resolve() for p in self.paths if RunFolder(p).is_run()]
        """The paths that are run folders themselves (reported together at ``/runs/report.html``)."""
        if not self.given and not find_runs(self.paths):
            raise InvalidInputError(f"No run folder under {', '.join(map(str, self.paths))}; pass folders written by "
                                    "`medtemporal run`, or folders that hold them.")
        self._tmp = tempfile.TemporaryDirectory(prefix="medtemporal-view-")
        self.folder = Path(self._tmp.name)
        self._pages: dict[str, _Page] = {}
        self._builds: dict[str, _Build] = {}
        self._written = 0
        self._lock = threading.Lock()
        self._writing = threading.Lock()
        """Held while a report is written: one at a time (plotting is not thread-safe), the others wait their turn."""
        self._closed = threading.Event()
        server = self

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the stdlib's name)
                pass

            def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
                if server._addressed_here(self):
                    server._get(self)

            def do_HEAD(self) -> None:  # noqa: N802 (the stdlib's name): never the standard library's file server
                if server._addressed_here(self):
                    server._send(self, 405, _message_page("Use GET.").encode("utf-8"))

        try:
            self.httpd = ThreadingHTTPServer((HOST, port), Handler)
        except OSError as exc:
            self._tmp.cleanup()
            raise InvalidInputError(f"Port {port} on {HOST} cannot be used ({exc.strerror}); pass another --port, "
                                    "or 0 for any free port.") from None
        self.port = int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        """What to open: the report of the run folders given (it opens on the scores), else the index of runs."""
        if self.given:
            return f"http://{HOST}:{self.port}/runs/report.html"
        return f"http://{HOST}:{self.port}/"

    def serve_forever(self) -> None:
        """Answer requests until `close` (or Ctrl-C)."""
        self.httpd.serve_forever()

    def start(self) -> threading.Thread:
        """Serve in a daemon thread, and begin writing the page of the run folders given, then each benchmark's
        page (`_write_ahead`); returns the thread."""
        thread = threading.Thread(target=self.serve_forever, daemon=True)
        thread.start()
        threading.Thread(target=self._write_ahead, daemon=True).start()
        return thread

    def _write_ahead(self) -> None:
        """Write, one after another, the page of the runs given and each benchmark's page the index links first
        (its runs together where it has several, else its run; not where those are the runs given), unless the
        server closes first."""
        pages = [("runs", "")] if self.given else []
        by_benchmark: dict[str, list[Path]] = {}
        for run in find_runs(self.paths):
            by_benchmark.setdefault(_benchmark(run), []).append(run)
        pages += [("b", name) if len(runs) > 1 else ("r", _key(runs[0])) for name, runs in sorted(by_benchmark.items())
                  if set(runs) != set(self.given)]  # not the page of the runs given once more
        for kind, name in pages:
            page = self._page(kind, name)
            while isinstance(page, _Build) and not self._closed.is_set():
                page.done.wait(0.5)
                page = page if not page.done.is_set() else None
            if self._closed.is_set():
                return

    def close(self) -> None:
        """Stop serving and remove the pages built."""
        self._closed.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._tmp.cleanup()

    def __enter__(self) -> ReportServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # requests --------------------------------------------------------------------------------------------
    def _addressed_here(self, handler: SimpleHTTPRequestHandler) -> bool:
        """Whether the request names this viewer as its host (`LOOPBACK_NAMES` with its port); else answer 403."""
        host = (handler.headers.get("Host") or "").strip().lower()
        allowed = {f"{name}:{self.port}" for name in LOOPBACK_NAMES}
        if self.port == 80:
            allowed.update(LOOPBACK_NAMES)
        if host in allowed:
            return True
        self._send(handler, 403, _message_page(f"This viewer answers only at {self.url.split('#')[0]}, not for "
                                               f"the host {host or '(none)'}.").encode("utf-8"))
        return False

    def _get(self, handler: SimpleHTTPRequestHandler) -> None:
        path = unquote(urlsplit(handler.path).path)
        if path in ("/", "/index.html"):
            return self._send(handler, 200, self.index().encode("utf-8"))
        parts = path.lstrip("/").split("/", 2)
        kind, name = parts[0], parts[1] if len(parts) > 1 and parts[0] in ("r", "b") else ""
        rest = path.lstrip("/").split("/", 2 if kind in ("r", "b") else 1)[-1]
        built = self._pages.get(f"{kind}-{name}")
        # the page itself is checked for staleness (and written); its assets come from the page as written
        page = built if built is not None and rest != "report.html" else self._page(kind, name)
        if page is None:
            return self._send(handler, 404, _message_page(f"Nothing at {path}; see the index.").encode("utf-8"))
        if isinstance(page, _Build):
            if page.error is not None:
                return self._send(handler, 500, _message_page(page.error).encode("utf-8"))
            return self._send(handler, 200, _building_page(page).encode("utf-8"))
        target = (page.folder / rest).resolve()
        if page.folder.resolve() not in target.parents or not target.is_file():
            return self._send(handler, 404, _message_page(f"Nothing at {path}; see the index.").encode("utf-8"))
        self._send(handler, 200, target.read_bytes(), handler.guess_type(str(target)))

    def _send(self, handler: SimpleHTTPRequestHandler, status: int, body: bytes,
              kind: str = "text/html; charset=utf-8") -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(len(body)))
        handler.send_header("Cache-Control", "no-store")
        handler.send_header("Content-Security-Policy", content_security_policy())
        handler.send_header("X-Content-Type-Options", "nosniff")
        handler.send_header("Referrer-Policy", "no-referrer")
        handler.end_headers()
        handler.wfile.write(body)

    def _page(self, kind: str, name: str) -> _Page | _Build | None:
        """The written page of ``/runs``, ``/r/<key>`` or ``/b/<benchmark>``, or the build that writes it where none
        is written yet or it failed. A missing or stale page is written (again) in the background, one build at a
        time; a stale one is served meanwhile. None when no run has that address."""
        if kind == "runs" and self.given:
            runs = tuple(self.given)
        elif kind == "r":
            runs = tuple(r for r in find_runs(self.paths) if _key(r) == name)
        elif kind == "b":
            runs = tuple(r for r in find_runs(self.paths) if _benchmark(r) == name)
        else:
            return None
        if not runs:
            return None
        key = f"{kind}-{name}"
        signature = _signature(runs)
        with self._lock:
            page = self._pages.get(key)
            if page is not None and page.runs == runs and page.signature == signature:
                return page
            build = self._builds.get(key)
            if build is None or (build.error is not None and (build.runs, build.signature) != (runs, signature)):
                build = self._builds[key] = _Build(runs, signature)
                self._written += 1
                threading.Thread(target=self._write, args=(key, build, self.folder / f"{key}-{self._written}"),
                                 daemon=True).start()
        # the page as last written while it is written again (a run still answering changes all the time)
        return page if page is not None and page.runs == runs and build.error is None else build

    def _write(self, key: str, build: _Build, folder: Path) -> None:
        """Write ``build``'s report into ``folder``; the page then serves from it and the page before is removed."""
        try:
            self._write_page(key, build, folder)
        finally:
            build.done.set()

    def _write_page(self, key: str, build: _Build, folder: Path) -> None:
        from medtemporal.report import write_report  # the report's imports (plots, audit) on first use
        from medtemporal.scoring.runs import score_stale

        try:
            with self._writing:
                if self._closed.is_set():
                    return
                score_stale(build.runs)  # the report only reads; a run still answering is scored as it stands
                write_report(build.runs, folder, ("html",))
        except MedTemporalError as exc:
            build.error = str(exc)
            return
        except Exception as exc:  # a daemon thread: say it on the page rather than lose it
            build.error = f"Writing this report failed ({type(exc).__name__}: {exc})."
            return
        signature = _signature(build.runs)  # as written: writing may score a run afresh (its scores.json)
        with self._lock:
            old = self._pages.get(key)
            self._pages[key] = _Page(folder, build.runs, signature)
            if self._builds.get(key) is build:
                del self._builds[key]
        if old is not None:
            shutil.rmtree(old.folder, ignore_errors=True)

    # the index -------------------------------------------------------------------------------------------
    def index(self) -> str:
        """The index page: every run found now, grouped by benchmark, with links to the reports."""
        runs = find_runs(self.paths)
        rows, per_benchmark = [], {}
        for run in runs:
            info = _summary(run)
            per_benchmark[info["benchmark"]] = per_benchmark.get(info["benchmark"], 0) + 1
            rows.append((info, run))
        body = []
        if self.given and len(self.given) > 1:
            body.append(f'<p><a href="/runs/report.html">The {len(self.given)} runs given, together</a></p>')
        for benchmark in sorted(per_benchmark):
            both = (f' · <a href="/b/{quote(benchmark)}/report.html">all {per_benchmark[benchmark]} runs together</a>'
                    if per_benchmark[benchmark] > 1 else "")
            body.append(f"<h2>{html_text(benchmark)}{both}</h2>")
            cells = []
            for info, run in rows:
                if info["benchmark"] != benchmark:
                    continue
                link = f'<a href="/r/{_key(run)}/report.html">{html_text(info["name"])}</a>'
                cells.append("<tr>" + "".join(f"<td>{c}</td>" for c in (
                    link, html_text(info["score"]), html_text(info["status"]), html_text(info["model"]), html_text(info["protocol"]),
                    f'<span title="{html_text(str(run))}">{html_text(_shown(run, self.paths))}</span>')) + "</tr>")
            body.append('<div class="scroll"><table><thead><tr><th>Run</th><th>Headline (× 100, 95% CI)</th>'
                        "<th>Status</th><th>Model</th><th>Protocol</th><th>Folder</th></tr></thead><tbody>"
                        + "".join(cells) + "</tbody></table></div>")
        where = ", ".join(html_text(str(p)) for p in self.paths)
        return _document("medtemporal runs", f"<h1>Runs under {where}</h1><p class=note>{len(runs)} runs; this page "
                         "reads the folders each time it is opened. A run's report is written when first opened.</p>"
                         + "".join(body))


def _config(run: Path) -> RunConfig | None:
    """The run's config, None where it cannot be read (the index still lists the folder)."""
    try:
        return RunFolder(run).read_config()
    except (MedTemporalError, OSError):
        return None


def _benchmark(run: Path) -> str:
    """The benchmark a run folder answered (from its ``config.json``), or ``?``."""
    config = _config(run)
    return (config.benchmark.name or "?") if config else "?"


def _summary(run: Path) -> dict[str, str]:
    """What the index shows of a run: name, benchmark, model, protocol, status and headline score."""
    folder, config = RunFolder(run), _config(run)
    model = (config.model.uri if config else None) or "?"
    info = {"benchmark": (config.benchmark.name if config else None) or "?", "model": model,
            "name": (config.name if config else None) or model,
            "protocol": (config.protocol.name if config else None) or "?",
            "status": ("running" if folder.being_written() else "finished" if config and config.finished_at
                       else "stopped before the end"), "score": "–"}
    try:
        scores = folder.scores()
    except (MedTemporalError, OSError):
        info["status"] += ", not scored"
        return info
    from medtemporal.report.console import family_of, headline_of  # on the first index, not at `view`'s start

    score = headline_of(scores)
    if score is not None:
        family = family_of(scores)
        paper = score.group == "overall:paper" or (family is not None and any(
            score.metric in metrics for metrics in family.metrics.values()))
        ci = (f" [{100 * score.ci_low:.1f}, {100 * score.ci_high:.1f}]"
              if score.ci_low is not None and score.ci_high is not None else "")
        info["score"] = f"{score.metric} {100 * score.value:.1f}{ci} ({'paper' if paper else 'ours'}; n = {score.n:,})"
    return info


def _shown(run: Path, roots: Sequence[Path]) -> str:
    """The run folder relative to the root it was found under; a run folder given itself, as it was given."""
    for root in roots:
        try:
            inside = run.relative_to(root.resolve())
        except ValueError:
            continue
        return str(root) if inside == Path() else str(inside)
    return str(run)


CSS = ("body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:1200px;"
       "color:#222;padding:0 1rem}h1{font-size:1.4rem;overflow-wrap:anywhere}h2{font-size:1.1rem;margin-top:1.6rem}"
       "table{border-collapse:collapse}th,td{border:1px solid #d0d0d0;padding:.25rem .55rem;text-align:left;"
       "white-space:nowrap}th{background:#f3f3f3}.scroll{overflow-x:auto;max-width:100%}.note{color:#444}"
       "a{color:#0b57d0}")


def _document(title: str, body: str, head: str = "") -> str:
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
            f'content="width=device-width, initial-scale=1">{head}<title>{html_text(title)}</title><style>{CSS}</style>'
            f"</head><body>{body}</body></html>\n")


def _building_page(build: _Build) -> str:
    """What a page's address answers while it is written: that, for how long, and a reload every `REFRESH_S`."""
    runs = f"{len(build.runs)} runs" if len(build.runs) > 1 else "the run"
    waited = time.monotonic() - build.started
    return _document("Writing the report…", f'<p>Writing the report of {runs} (scores, tables, charts and the '
                     f"per-item viewer): {waited:.0f} s so far. This page reloads itself every {REFRESH_S} s and shows "
                     'the report when it is written.</p><p><a href="/">All runs</a></p>',
                     head=f'<meta http-equiv="refresh" content="{REFRESH_S}">')


def _message_page(text: str) -> str:
    return _document("medtemporal", f'<p>{html_text(text)}</p><p><a href="/">All runs</a></p>')
