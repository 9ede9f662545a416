"""The HTML report in a real headless browser: loads without console messages, the viewer filters, a
screenshot is not blank."""

import json
import re

import numpy as np
import pytest
from PIL import Image

from helpers.browser import chromium, console_messages, headless
from helpers.tiny import make_tiny_benchmark

from medtemporal.report import write_report
from medtemporal.runner import run


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    chromium()
    root = tmp_path_factory.mktemp("browser")
    bench = make_tiny_benchmark(root, n=30)
    runs = [root / "random", root / "constant"]
    run(bench, "baseline:random", runs[0], progress=False)
    run(bench, "baseline:constant-A", runs[1], progress=False)
    write_report(runs, out=root / "report", formats="html")
    return root / "report" / "report.html", runs


def _wrong(run_dir):
    lines = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]
    items = {json.loads(line)["id"]: json.loads(line) for line in
             (run_dir.parent / "bench" / "items.jsonl").read_text().splitlines()}
    return sum(p["answer"] != items[p["item_id"]]["answer"] for p in lines)


def _count(dom):
    match = re.search(r'id="vcount">(\d+) of (\d+) answers', dom)
    assert match, "the viewer did not render its count"
    return int(match[1]), int(match[2])


def test_page_loads_without_console_messages(page):
    html, _ = page
    done = headless(html, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    assert console_messages(done.stderr) == []
    assert _count(done.stdout) == (60, 60)
    rows = re.findall(r'<div class="row[ "]', done.stdout)
    assert 0 < len(rows) < 60  # virtualised: only the rows in sight are in the page
    assert "Prompt as sent" in done.stdout and 'class="timeline"' in done.stdout


def test_viewer_filters_from_a_table_link(page):
    html, runs = page
    dom = headless(html, "--dump-dom", fragment="view:run=0&correct=wrong").stdout
    wrong = _wrong(runs[0])
    assert 0 < wrong < 30 and _count(dom) == (wrong, 60)
    shown = re.findall(r'<div class="row[^"]*"[^>]*><span class="(ok|bad|inv)">', dom)
    assert shown and set(shown) == {"bad"}
    dom = headless(html, "--dump-dom", fragment="view:run=1&group=task:TEL").stdout
    assert _count(dom) == (30, 60)  # every tiny item is TEL, one run
    links = re.findall(r'href="(#view:run=\d&amp;group=[^"]+)"', html.read_text())
    assert links and all("group=" in link for link in links)


def test_screenshot_is_not_blank(page, tmp_path):
    html, _ = page
    shot = tmp_path / "shot.png"
    headless(html, f"--screenshot={shot}", "--window-size=1200,900")
    pixels = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert pixels.std() > 10 and (pixels < 128).mean() > 0.005
