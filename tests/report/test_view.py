"""``medtemporal view``: the report served on 127.0.0.1 only, on a free port or the one asked for."""

from __future__ import annotations

import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from helpers.scored_runs import make_items, prediction, write_run

from medtemporal.errors import InvalidInputError
from medtemporal.report.serve import HOST, ReportServer

pytestmark = pytest.mark.filterwarnings("ignore::medtemporal.errors.UndefinedMetricWarning")
TESTS = str(Path(__file__).resolve().parents[1])


def _run(tmp_path: Path) -> Path:
    items = make_items(patients=4, per_patient=2)
    return write_run(tmp_path, items, [prediction(i, f"The answer is {i.answer}.") for i in items])


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
        assert server.url == f"http://127.0.0.1:{port}/report.html#viewer"
        page = urllib.request.urlopen(server.url.split("#")[0], timeout=10).read().decode()
        assert 'id="viewer"' in page and "Question 0?" not in page  # the items come on demand, from assets/
        base = server.url.split("report.html")[0]
        items = urllib.request.urlopen(base + "assets/items-0.js", timeout=10).read().decode()
        assert items.startswith('mtAsset("items-0",') and "Question 0?" in items
        folder = server.folder
    assert not folder.exists()  # the temporary report is removed on close


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
        assert urllib.request.urlopen(url.split("#")[0], timeout=10).status == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)
