"""``medtemporal view``: runs and their reports served on 127.0.0.1 only, on a free port or the one asked for; the URL
comes at once and each page is written when first asked for."""

from __future__ import annotations

import os
import re
import socket
import urllib.error
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from helpers.scored_runs import make_items, prediction, write_run, wrong_letter

from medtemporal.errors import InvalidInputError
from medtemporal.serve import HOST, ReportServer

pytestmark = pytest.mark.filterwarnings("ignore::medtemporal.errors.UndefinedMetricWarning")
TESTS = str(Path(__file__).resolve().parents[1])


def _run(tmp_path: Path) -> Path:
    items = make_items(patients=4, per_patient=2)
    return write_run(tmp_path, items, [prediction(i, f"The answer is {i.answer}.") for i in items])


def _open(url: str, timeout: float = 120) -> str:
    """The page at ``url`` once written: follows the self-reloading page shown while it is written."""
    deadline = time.monotonic() + timeout
    while True:
        page = urllib.request.urlopen(url, timeout=10).read().decode()
        if "Writing the report of" not in page or time.monotonic() > deadline:
            return page
        time.sleep(0.2)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def test_the_server_binds_loopback_and_serves_the_viewer(tmp_path):
    run = _run(tmp_path)
    port = _free_port()
    with ReportServer([run], port) as server:
        server.start()
        assert server.httpd.server_address[0] == "127.0.0.1" and server.port == port
        assert server.url == f"http://127.0.0.1:{port}/runs/report.html"  # opens on the scores, not the item list
        page = _open(server.url)  # the page of the runs given is begun at start
        assert 'id="viewer"' in page and "Question 0?" not in page  # the items come on demand, from assets/
        base = server.url.split("report.html")[0]
        items = urllib.request.urlopen(base + "assets/items-0.js", timeout=10).read().decode()
        assert items.startswith('mtAsset("items-0",') and "Question 0?" in items
        folder = server.folder
    assert not folder.exists()  # the temporary report is removed on close


def test_a_folder_of_runs_is_browsed_and_each_page_built_when_asked(tmp_path):
    items = make_items(patients=4, per_patient=2)
    runs = tmp_path / "runs"
    a = write_run(runs / "group", items, [prediction(i, i.answer) for i in items], name="a")
    b = write_run(runs, items, [prediction(i, f"The answer is {i.answer}.") for i in items], name="b")
    with ReportServer([runs]) as server:
        server.start()
        assert server.url == f"http://127.0.0.1:{server.port}/"
        index = urllib.request.urlopen(server.url, timeout=10).read().decode()
        assert index.count("/report.html\">") == 3  # two runs, one benchmark
        assert "all 2 runs together" in index and "group/a" in index
        first = re.search(r'href="(/r/[0-9a-f]+/report.html)"', index)[1]
        page = _open(server.url + first.lstrip("/"))
        assert 'id="viewer"' in page
        index = urllib.request.urlopen(server.url, timeout=10).read().decode()  # the report scored the run
        assert "accuracy 100.0 [100.0, 100.0] (paper; n = 8)" in index  # what the headline is, and its n
        together = re.search(r'href="(/b/[^"]+/report.html)"', index)[1]
        assert 'id="viewer"' in _open(server.url + together.lstrip("/"))
        c = write_run(runs / "later", items, [prediction(i, None) for i in items], name="c")  # appears while serving
        assert str(c.relative_to(runs)) in urllib.request.urlopen(server.url, timeout=10).read().decode()
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(server.url + "r/0000000000/report.html", timeout=10)
        assert missing.value.code == 404
    assert a.is_dir() and b.is_dir()


def test_a_folder_without_runs_is_one_sentence(tmp_path):
    with pytest.raises(InvalidInputError, match="No run folder under"):
        ReportServer([tmp_path])


def test_a_bad_or_busy_port_is_one_sentence(tmp_path):
    run = _run(tmp_path)
    with pytest.raises(InvalidInputError, match="--port"):
        ReportServer([run], 70000)
    with socket.socket() as busy:
        busy.bind((HOST, 0))
        busy.listen()
        with pytest.raises(InvalidInputError, match="another --port"):
            ReportServer([run], busy.getsockname()[1])


def test_the_command_prints_the_url_and_serves_until_stopped(tmp_path):
    run = _run(tmp_path)
    child = ("import sys; sys.path.insert(0, %r); import helpers.scored_runs; from medtemporal.cli import main; "
             "sys.exit(main(sys.argv[1:]))"
             % TESTS)
    proc = subprocess.Popen([sys.executable, "-c", child, "view", str(run), "--port", str(_free_port())],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("serving http://127.0.0.1:"), proc.stderr.read() if not line else line
        url = line.split()[1]
        assert 'id="viewer"' in _open(url.split("#")[0], timeout=180)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_page_being_written_answers_at_once_and_a_stale_one_is_served_while_it_is_written_again(tmp_path,
                                                                                                 monkeypatch):
    """The report is written in the background: its address answers at once with a page that reloads itself,
    then with the report; after the run changes, the report as last written while the new one is written."""
    import medtemporal.report

    release, calls = threading.Event(), []
    write_report = medtemporal.report.write_report

    def slow(*args, **kwargs):
        calls.append(args[0])
        assert release.wait(60)
        return write_report(*args, **kwargs)

    monkeypatch.setattr(medtemporal.report, "write_report", slow)
    run = _run(tmp_path)
    with ReportServer([run]) as server:
        server.start()
        url = server.url.split("#")[0]
        started = time.monotonic()
        waiting = urllib.request.urlopen(url, timeout=10).read().decode()
        assert time.monotonic() - started < 5 and "Writing the report of the run" in waiting
        assert '<meta http-equiv="refresh" content="2">' in waiting
        release.set()
        first = _open(url)
        assert 'id="viewer"' in first and len(calls) == 1  # one build for the start and the two requests
        release.clear()
        # the run changed (its scores now older than its predictions): written again, the old page served
        # meanwhile; moved into the past, not the future, so the scores written afresh are not stale again
        scores, predictions = run / "scores.json", run / "predictions.jsonl"
        os.utime(scores, ns=(scores.stat().st_atime_ns, predictions.stat().st_mtime_ns - 10 * 10**9))
        assert urllib.request.urlopen(url, timeout=10).read().decode() == first
        release.set()
        deadline = time.monotonic() + 240  # scored afresh, then written: slow on a loaded machine
        while len(calls) < 2 or server._builds:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert len(calls) == 2


def test_each_benchmark_s_page_is_written_ahead_and_given_runs_show_their_folder(tmp_path):
    items = make_items(patients=4, per_patient=2)
    write_run(tmp_path / "runs", items, [prediction(i, i.answer) for i in items], name="a")
    write_run(tmp_path / "runs", items, [prediction(i, f"({wrong_letter(i)})") for i in items], name="b")
    given = write_run(tmp_path / "elsewhere", items, [prediction(i, i.answer) for i in items], name="c")
    with ReportServer([tmp_path / "runs", given]) as server:
        server.start()
        index = urllib.request.urlopen(f"http://127.0.0.1:{server.port}/", timeout=10).read().decode()
        assert f'<span title="{given}">{given}</span>' in index  # the folder as given, not "."
        together = re.search(r'href="(/b/[^"]+/report.html)"', index)[1]
        deadline = time.monotonic() + 300
        while not any(key.startswith("b-") for key in server._pages) and time.monotonic() < deadline:
            time.sleep(0.2)  # written with nobody asking, after the page of the run given
        started = time.monotonic()
        page = urllib.request.urlopen(f"http://127.0.0.1:{server.port}{together}", timeout=10).read().decode()
        assert 'id="viewer"' in page and time.monotonic() - started < 5
