"""Issue 42 §1–3: the viewer answers only its own loopback name and port, serves every page under a policy that
runs no inline handler or ``javascript:`` URL, and no run name or model output becomes a link, an element or the
end of a script, in report.html, its single-file form or ``view``."""

from __future__ import annotations

import http.client
import json
import re
import socket
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers.browser import chromium, console_messages, headless
from helpers.tiny import make_tiny_benchmark

from medtemporal.cli import main
from medtemporal.report.assets import Assets
from medtemporal.report.escaping import content_security_policy, data_block, markdown_html, script_json
from medtemporal.report.sections import files_section
from medtemporal.serve import ReportServer

pytestmark = pytest.mark.filterwarnings("ignore::medtemporal.errors.UndefinedMetricWarning")

NAME = "[details](javascript:alert(document.domain))"
HOSTILE = [
    "<!--<script>",
    "</script><script>alert(1)</script>",
    "The answer is A.\u2028<!-- --><img src=x onerror=alert(2)>",
    "[click](javascript:alert(3)) <a href=\"javascript:alert(4)\">x</a> &lt;script&gt;",
    "</ScRiPt ><svg onload=alert(5)>\u2029 B",
]


def _no_live_script(page: str) -> None:
    """No ``javascript:`` link or source, no inline handler attribute, and every script element is the page's."""
    assert not re.search(r"""(?:href|src|action)\s*=\s*["']?\s*javascript:""", page, re.I)

    class Tags(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.handlers: list[str] = []
            self.scripts = 0

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.handlers += [f"{tag} {k}" for k, _ in attrs if k.startswith("on")]
            self.scripts += tag == "script"

    tags = Tags()
    tags.feed(page)
    assert tags.handlers == []
    assert tags.scripts == page.count("</script>")  # no text opened or closed one


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    """A run named like a Markdown link whose model answers with text that ends and opens scripts and comments."""
    from helpers.fake_openai import TEST_API_KEY, FakeOpenAI

    root = tmp_path_factory.mktemp("hostile")
    bench = make_tiny_benchmark(root / "bench", n=len(HOSTILE))
    questions = [json.loads(line)["question"] for line in (bench / "items.jsonl").read_text().splitlines()]
    with FakeOpenAI.start() as fake:
        fake.configure(replies=[[q, reply] for q, reply in zip(questions, HOSTILE)])
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("OPENAI_API_KEY", TEST_API_KEY)
            assert main(["run", str(bench), "--model", fake.uri(), "--out", str(root / "run"), "--name", NAME,
                         "--no-progress", "--no-cache"]) == 0
    return root / "run"


def test_inline_json_encodes_what_could_end_or_open_a_script_or_comment():
    for text in HOSTILE:
        encoded = script_json({"raw": text})
        assert not re.search("[<>&\u2028\u2029]", encoded)
        assert json.loads(encoded) == {"raw": text}
    block = data_block("x", HOSTILE)
    assert block.count("<") == 2 and block.endswith("</script>")  # its own open and close tag only


def test_markdown_link_syntax_and_markup_in_a_family_table_stay_text(tmp_path):
    table = (tmp_path / "tables.md")
    table.write_text(f"# Table\n\n| Run | Score |\n|---|---|\n| {NAME} | 50.0 [40.1, 60.2] |\n"
                     "| <img src=x onerror=alert(1)> | <javascript:alert(1)> |\n\n![Figure 1](figure.png)\n\n"
                     "![not ours](javascript:alert(1))\n", encoding="utf-8")
    (tmp_path / "figure.png").write_bytes(_png())
    section = files_section([table, tmp_path / "figure.png"], Assets())
    _no_live_script(section)
    assert "<a " not in section and "[details](javascript:alert(document.domain))" in section
    assert section.count("<img") == 1 and 'src="figure.png"' in section  # the family's own figure, in place
    assert "&lt;img src=x onerror=alert(1)&gt;" in section
    assert markdown_html("**bold** and `<code>`") == "<p><strong>bold</strong> and <code>&lt;code&gt;</code></p>"


def _png() -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "white").save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.mark.parametrize("single", [False, True])
def test_a_hostile_name_and_outputs_reach_report_html_as_text(hostile_run, tmp_path, single):
    out = tmp_path / "report"
    assert main(["report", str(hostile_run), "--out", str(out), *(["--single-file"] if single else [])]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    _no_live_script(page)
    assert "[details](javascript:alert(document.domain))" in page  # the name, shown as text
    for asset in (out / "assets").glob("*.js") if not single else ():
        assert not re.search("[<>\u2028\u2029]", asset.read_text(encoding="utf-8"))


def test_the_single_file_viewer_shows_every_hostile_output_in_a_browser(hostile_run, tmp_path):
    chromium()
    out = tmp_path / "report"
    assert main(["report", str(hostile_run), "--out", str(out), "--single-file"]) == 0
    done = headless(out / "report.html", "--dump-dom", fragment="view:run=0", budget_ms=5000)
    assert done.returncode == 0 and console_messages(done.stderr) == [], done.stderr[-2000:]
    assert re.search(rf'id="vcount">{len(HOSTILE)} of {len(HOSTILE)} answers', done.stdout)  # the data parsed
    detail = done.stdout.split('id="vdetail"', 1)[1]
    assert "Raw output" in detail and "<script>alert" not in detail and "onerror=alert" not in detail.replace(
        "&lt;img src=x onerror=alert", "")


# --- the viewer's host check and policy ---------------------------------------------------------------------------
def _get(port: int, path: str, host: str | None) -> tuple[int, dict[str, str], str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    connection.putrequest("GET", path, skip_host=True)
    if host is not None:
        connection.putheader("Host", host)
    connection.endheaders()
    response = connection.getresponse()
    body = response.read().decode("utf-8")
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, body


def _written(port: int, path: str) -> str:
    deadline = time.monotonic() + 120
    while True:
        status, _, body = _get(port, path, f"127.0.0.1:{port}")
        if "Writing the report of" not in body or time.monotonic() > deadline:
            assert status == 200
            return body
        time.sleep(0.2)


def test_view_answers_only_its_own_loopback_host_and_sends_the_policy_on_every_page(hostile_run):
    with ReportServer([hostile_run]) as server:
        server.start()
        port = server.port
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"LOCALHOST:{port}"):
            status, headers, body = _get(port, "/", host)
            assert status == 200, host
            assert headers["content-security-policy"] == content_security_policy()
        for host in ("evil.example", f"evil.example:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}",
                     f"127.0.0.1.nip.io:{port}", "", None):
            status, headers, body = _get(port, "/runs/report.html", host)
            assert status == 403, host
            assert "content-security-policy" in headers and len(body) < 1000 and "answers only at" in body
        page = _written(port, "/runs/report.html")
        _no_live_script(page)
        for path in ("/runs/report.html", "/nothing", "/r/0000000000/report.html", "/runs/assets/items-0.js"):
            status, headers, _ = _get(port, path, f"localhost:{port}")
            assert "content-security-policy" in headers and headers["x-content-type-options"] == "nosniff", path
        status, _, _ = _get(port, "/runs/assets/items-0.js", f"evil.example:{port}")
        assert status == 403
        with socket.create_connection(("127.0.0.1", port), timeout=20) as raw:  # HEAD never reaches a file server
            raw.sendall(f"HEAD /pyproject.toml HTTP/1.1\r\nHost: evil.example:{port}\r\n\r\n".encode())
            assert raw.recv(100).startswith(b"HTTP/1.0 403")


def test_policy_forbids_inline_handlers_and_javascript_urls():
    policy = dict(part.strip().split(" ", 1) for part in content_security_policy().split(";"))
    assert "'unsafe-inline'" not in policy["script-src"] and "'unsafe-hashes'" not in policy["script-src"]
    assert "'unsafe-eval'" not in policy["script-src"] and policy["default-src"] == "'none'"
    assert policy["frame-ancestors"] == "'none'" and policy["base-uri"] == "'none'"


def test_the_served_pages_work_under_the_policy_in_a_browser(hostile_run):
    chromium()
    with ReportServer([hostile_run]) as server:
        server.start()
        _written(server.port, "/runs/report.html")
        done = headless(f"http://127.0.0.1:{server.port}/runs/report.html", "--dump-dom", fragment="view:run=0",
                        budget_ms=5000)
        assert done.returncode == 0, done.stderr[-2000:]
        assert console_messages(done.stderr) == []  # no policy violation, no error
        assert re.search(rf'id="vcount">{len(HOSTILE)} of {len(HOSTILE)} answers', done.stdout)
        assert "Raw output" in done.stdout.split('id="vdetail"', 1)[1]  # the detail loaded its blocks from assets/


def test_a_report_carries_its_policy_so_markup_that_slipped_in_would_not_run_from_disk(hostile_run, tmp_path):
    chromium()
    out = tmp_path / "report"
    assert main(["report", str(hostile_run), "--out", str(out)]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert '<meta http-equiv="Content-Security-Policy"' in page.split("</head>")[0]
    slipped = ('<img src="x" onerror="document.body.dataset.pwned=1"><script>document.body.dataset.pwned=2</script>'
               '<iframe src="javascript:parent.document.body.dataset.pwned=3"></iframe>')
    (out / "slipped.html").write_text(page.replace('<section id="viewer">', slipped + '<section id="viewer">', 1),
                                      encoding="utf-8")
    done = headless(out / "slipped.html", "--dump-dom", budget_ms=4000)
    assert "data-pwned" not in done.stdout.split("<body", 1)[1].split(">", 1)[0]
    assert re.search(rf'id="vcount">{len(HOSTILE)} of {len(HOSTILE)} answers', done.stdout)  # its own scripts ran
    assert any("Content Security Policy" in m for m in console_messages(done.stderr))
