"""The side-by-side viewer: its data blocks, its marks and the page in a real headless browser."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from helpers.browser import chromium

from medtemporal.benchmark import load
from medtemporal.benchmarks.longitudinal_rrg.baselines import copy_prior
from medtemporal.benchmarks.longitudinal_rrg.viewer import BLOCK, RunAnswers, marks, viewer_files
from medtemporal.scoring.clinical.temporal import KEYWORDS, temporal_entities



@pytest.fixture(scope="module")
def files(rrg_bench):
    bench = load(rrg_bench)
    injected = "<script>alert(1)</script> New effusion."
    runs = [RunAnswers("copy", {i.id: copy_prior(i) or None for i in bench.items}, {i.id: 0.5 for i in bench.items}),
            RunAnswers("odd <b>model</b>", {i.id: injected for i in bench.items}, {})]
    return bench, viewer_files(bench.items, runs, bench.image_root, "viewer.html", "fam_")


def test_marks_are_the_metric_s_words_coloured_by_the_other_side_s_set():
    assert marks("Unchanged effusion; new_edema", {"new"}, "extra") == [[0, 9, "extra"], [20, 23, "both"]]
    assert marks("No acute process.", None, "prior") == []


def test_blocks_hold_every_item_with_its_prior_current_and_generated_reports(files):
    bench, written = files
    assert set(written) == {"viewer.html", *(f"viewer-{k}.js" for k in range(-(-len(bench.items) // BLOCK)))}
    page = written["viewer.html"]
    data = json.loads(re.search(r'<script type="application/json" id="rrg-data">(.*?)</script>', page, re.S)[1])
    assert data["stem"] == "fam_viewer" and data["runs"] == ["copy", "odd <b>model</b>"]
    assert len(data["rows"]) == len(bench.items)
    block = json.loads(re.fullmatch(r"rrgBlock\(0,(.*)\);", written["viewer-0.js"], re.S)[1])
    by_study = {(i.meta["study_id"], i.task): i for i in bench.items}
    for row, detail in zip(data["rows"], block):
        item = by_study[(row[3], row[0])]
        assert detail["current"]["reference"] == item.reference
        assert (detail["prior"] is None) == (item.meta["prior"] is None)
        if detail["prior"]:
            assert detail["prior"]["report"] == item.meta["prior"]["report"]
            assert all(src and src.startswith("data:image/jpeg;base64,") for _, src in detail["prior"]["images"])
        copy = detail["generated"][0]
        assert copy[1] == (copy_prior(item) or None)
        for start, end, kind in copy[2]:
            word = copy[1][start:end].lower()
            assert word in KEYWORDS and kind == ("both" if word in temporal_entities(item.reference) else "extra")


def test_the_page_opens_an_item_side_by_side_and_shows_model_text_as_text(files, tmp_path):
    chromium()
    bench, written = files
    for name, text in written.items():
        (tmp_path / f"fam_{name}").write_text(text, encoding="utf-8")
    page = tmp_path / "fam_viewer.html"
    data = re.search(r'<script type="application/json" id="rrg-data">(.*?)</script>', written["viewer.html"], re.S)[1]
    n = next(k for k, row in enumerate(json.loads(data)["rows"]) if row[1] == "with_prior")
    done = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                           f"--user-data-dir={tmp_path / 'p'}", "--virtual-time-budget=8000", "--dump-dom",
                           f"{page.as_uri()}#item={n}"],
                          capture_output=True, text=True, timeout=120, check=False)
    detail = done.stdout.split('<div id="detail">', 1)[1]
    assert "<h3>Prior study (" in detail and "<h3>Current study " in detail and "<h3>Generated</h3>" in detail
    assert detail.count("<img") >= 2 and re.search(r'<mark class="(both|extra)">New</mark> effusion\.', detail)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in detail and "<script>alert" not in detail
    assert "odd &lt;b&gt;model&lt;/b&gt;" in detail
