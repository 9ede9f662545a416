"""The leaderboard (`medtemporal.leaderboard`): one static site of every model × family from run folders and eval-set
folders, its cells read from the runs' scores, subsets marked, run text escaped, the published rows' comparability
decided from the runs' recorded settings; and in a real browser: sorting, filtering, a family page, phone width."""

from __future__ import annotations

import csv
import html
import json
import re
from pathlib import Path
from types import SimpleNamespace as NS

import pytest
from helpers.browser import chromium, console_messages, headless
from helpers.families import family_benches  # noqa: F401  (the session's phantom benchmark of every family)
from helpers.tiny import make_tiny_benchmark

from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.leaderboard import write_leaderboard
from medtemporal.runs import RunFolder

EVIL = "</script><img src=x onerror=alert(1)>&"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Two models on a 30-item benchmark, one of them also on a 10-item subset and under a name meant to break out
    of the page; the first model's runs sit in an eval-set-like folder."""
    root = tmp_path_factory.mktemp("leaderboard")
    bench = make_tiny_benchmark(root, n=30)
    runs = {"random": root / "set" / "tiny", "constant": root / "other" / "constant",
            "subset": root / "other" / "subset", "evil": root / "other" / "evil"}
    for key, args in (("random", ["--model", "baseline:random"]), ("constant", ["--model", "baseline:constant-A"]),
                      ("subset", ["--model", "baseline:constant-B", "--limit", "10"]),
                      ("evil", ["--model", "baseline:constant-C", "--name", EVIL])):
        assert main(["run", str(bench), *args, "--out", str(runs[key]), "--no-progress"]) == 0
    written = write_leaderboard([root / "set", root / "other"], root / "site")
    return root, runs, written


def _data(page: Path) -> dict:
    match = re.search(r'<script type="application/json" id="mt-data">(.*?)</script>', page.read_text(), re.S)
    assert match
    return json.loads(match[1])


def test_every_run_is_a_cell_read_from_its_scores(site):
    root, runs, written = site
    assert {p.relative_to(root / "site").as_posix() for p in written} == {
        "index.html", "cells.csv", "leaderboard.json", "family/tiny.html"}
    cells = {c["path"]: c for c in json.loads((root / "site" / "leaderboard.json").read_text())["cells"]}
    assert set(cells) == {str(p.resolve()) for p in runs.values()}
    for key, path in runs.items():
        stored = RunFolder(path).scores().score("overall", "accuracy")
        cell = cells[str(path.resolve())]
        assert cell["metric"] == "accuracy" and cell["value"] == pytest.approx(100 * stored.value)
        assert cell["ci_low"] == pytest.approx(100 * stored.ci_low) and cell["n"] == stored.n
        assert cell["full_n"] == 30 and cell["phantom"] and cell["chance"] == pytest.approx(20.0)
    assert cells[str(runs["subset"].resolve())]["subset"] == "--limit 10"
    assert cells[str(runs["subset"].resolve())]["n"] == 10 and not cells[str(runs["random"].resolve())]["subset"]
    rows = list(csv.DictReader((root / "site" / "cells.csv").open()))
    assert len(rows) == 4 and {r["model"] for r in rows} >= {"baseline:random", EVIL}


def test_a_subset_is_marked_with_the_full_n_on_every_page(site):
    root, _, _ = site
    for page in ("index.html", "family/tiny.html"):
        text = (root / "site" / page).read_text()
        assert text.count("subset 10 of 30") == 1, page


def test_run_text_is_escaped_in_the_pages_and_their_inline_data(site):
    root, _, _ = site
    for page in ("index.html", "family/tiny.html"):
        text = (root / "site" / page).read_text()
        assert "<img src=x" not in text and text.count("</script>") == 2  # the data's and the script's
        assert html.escape(EVIL) in text and "\\u003c/script\\u003e" in text
        assert any(c["model"]["name"] == EVIL for c in _data(root / "site" / page)["cells"])


def test_pairwise_tests_on_common_items(site):
    root, _, _ = site
    (family,) = json.loads((root / "site" / "leaderboard.json").read_text())["families"]
    pairs = family["pairwise"]
    assert len(pairs) == 6  # four runs, every pair
    subset = [p for p in pairs if "baseline:constant-B" in (p["a"], p["b"])]
    assert subset and all(p["n"] == 10 for p in subset)  # paired on the items both answered
    full = next(p for p in pairs if {p["a"], p["b"]} == {"baseline:random", "baseline:constant-A"})
    assert full["n"] == 30 and full["p_mcnemar"] is not None and isinstance(full["significant"], bool)
    assert family["none"] is None and family["tables"] == []  # the test family publishes nothing


def test_report_and_leaderboard_accept_an_eval_set_folder(site, tmp_path, capsys):
    root, _, _ = site
    assert main(["report", str(root / "other"), "--out", str(tmp_path / "report"), "--formats", "md"]) == 0
    assert "baseline:constant-A" in (tmp_path / "report" / "report.md").read_text()
    with pytest.raises(InvalidInputError, match="not a run folder and holds none"):
        write_leaderboard([tmp_path / "report"], tmp_path / "site")
    assert main(["leaderboard", str(root / "set"), "--out", str(tmp_path / "site"), "--no-paired"]) == 0
    assert "open " in capsys.readouterr().out and (tmp_path / "site" / "index.html").is_file()


def test_comparability_is_read_from_the_runs_recorded_settings():
    from medtemporal.benchmarks.longitudinal_rrg.published import REXRANK_FINDINGS, STRIVE, run_conditions
    from medtemporal.published import mismatches

    def conditions(config: dict, protocol: str = "rrg-prior-report"):
        manifest = NS(licence="credentialed", config={"split": "test", **config}, counts={})
        return run_conditions(manifest, NS(tasks=None), NS(run=NS(protocol=protocol)))

    assert mismatches(STRIVE.conditions, conditions({"prior_rule": "longitudinal-mimic", "studies": 2058})) == []
    assert [m.split(":")[0] for m in mismatches(STRIVE.conditions, conditions({"studies": 2058}))] == ["test set"]
    assert mismatches(REXRANK_FINDINGS.conditions, conditions({"studies": 2347}, "rrg-current")) == []
    assert [m.split(":")[0] for m in mismatches(REXRANK_FINDINGS.conditions, conditions({"studies": 2347}))] == [
        "protocol"]  # ReXrank gives no prior


def test_family_pages_show_published_rows_with_provenance_and_comparability(family_benches, tmp_path):  # noqa: F811
    for family in ("ms-cxr-t", "longitudinal-rrg"):
        assert main(["run", str(family_benches[family]), "--model", "baseline:oracle", "--limit", "12",
                     "--out", str(tmp_path / "runs" / family), "--no-progress"]) == 0
    write_leaderboard([tmp_path / "runs"], tmp_path / "site")
    board = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    tables = {f["name"]: f["tables"] for f in board["families"]}
    medgemma = next(t for t in tables["ms-cxr-t"] if t["paper"].startswith("MedGemma"))
    assert medgemma["provenance"] == "primary" and medgemma["rows"][2] == {
        "model": "MedGemma 1.5 4B", "section": "", "line": 567, "values": [65.7]}
    assert {t["provenance"] for t in tables["ms-cxr-t"]} == {"primary", "re-print"}
    rexrank = tables["longitudinal-rrg"][0]
    assert rexrank["rows"][0]["values"][2] == pytest.approx(33.9)  # SembScore 0.339, in percent as the runs
    (run,) = rexrank["runs"]
    assert not run["comparable"] and any(r.startswith("test set: phantoms") for r in run["reasons"])
    assert re.search(r"\(subset: \d+ of \d+\)$", run["label"])
    page = (tmp_path / "site" / "family" / "longitudinal-rrg.html").read_text()
    assert "current-study-only" in page and "re-print" in page and "not comparable" in page


PROBE = r"""
(function(){window.addEventListener('load',function(){setTimeout(function(){
 var out={},table=document.getElementById('board');
 function values(col){return [].map.call(table.tBodies[0].rows,function(r){
  return col?parseFloat(r.cells[col].getAttribute('data-v')):r.cells[0].textContent;});}
 var th=table.tHead.rows[0].cells[3];th.click();out.desc=values(3);out.sort=th.getAttribute('aria-sort');
 th.click();out.asc=values(3);var name=table.tHead.rows[0].cells[0];name.click();out.names=values(0);
 var box=document.getElementById('filter');box.value='constant-a';box.dispatchEvent(new Event('input'));
 out.filtered=[].filter.call(table.tBodies[0].rows,function(r){return !r.hidden;}).length;
 box.value='';box.dispatchEvent(new Event('input'));
 var hide=document.querySelector('input[data-hide=subset]');hide.checked=true;hide.dispatchEvent(new Event('change'));
 out.noSubset=[].filter.call(table.tBodies[0].rows,function(r){return !r.hidden;}).length;
 var vw=document.documentElement.clientWidth,v=table.querySelector('tbody td .v');
 out.overflow=document.documentElement.scrollWidth-vw;out.valueRight=v.getBoundingClientRect().right;out.vw=vw;
 out.refs=table.tBodies[1].rows.length;
 var pre=document.createElement('pre');pre.id='probe';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);
},200);});})();
"""


def _probe(page: Path, width: int) -> dict:
    # the probe is a file of the page's origin: the page's Content-Security-Policy blocks inline scripts it does not list
    copy, script = page.with_name(".probe-" + page.name), page.with_name(".probe.js")
    script.write_text(PROBE)
    copy.write_text(page.read_text().replace("</body>", f'<script src="{script.name}"></script></body>', 1))
    try:
        done = headless(copy, "--dump-dom", f"--window-size={width},900", timeout=240)  # a loaded machine is slow
    finally:
        copy.unlink()
        script.unlink()
    match = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert match, done.stderr[-2000:]
    return {**json.loads(html.unescape(match[1])), "console": console_messages(done.stderr)}


def test_in_a_browser_the_board_sorts_and_filters(site):
    chromium()
    root, _, _ = site
    out = _probe(root / "site" / "index.html", 1400)
    assert out["console"] == []
    assert out["desc"] == sorted(out["desc"], reverse=True) and out["asc"] == sorted(out["asc"]) and out["sort"] == "descending"
    assert out["desc"][0] > out["desc"][-1] and out["names"] == sorted(out["names"], key=str.lower, reverse=True)
    assert out["filtered"] == 1 and out["noSubset"] == 3 and out["refs"] == 2
    assert out["overflow"] <= 0


def test_on_a_phone_the_headline_is_in_sight_without_scrolling_sideways(site):
    chromium()
    root, _, _ = site
    out = _probe(root / "site" / "index.html", 390)
    assert out["overflow"] <= 0 and out["valueRight"] <= out["vw"]


def test_in_a_browser_a_family_page_loads_clean(site):
    chromium()
    root, _, _ = site
    done = headless(root / "site" / "family" / "tiny.html", "--dump-dom", "--window-size=390,900")
    assert done.returncode == 0 and console_messages(done.stderr) == []
    assert 'id="pairwise"' in done.stdout and "No published rows" in done.stdout
