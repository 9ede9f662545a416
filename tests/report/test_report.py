import base64
import csv
import io
import json
import os
import re

import pytest

from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.report import write_report
from medtemporal.schema import write_jsonl
from medtemporal.scoring import score_run
from medtemporal.scoring.runs import score_stale
from medtemporal.runs import RunFolder
from medtemporal.writes import OWNED

from helpers.scored_runs import make_items, prediction, write_run, wrong_letter

COLUMNS = ["TEL: Single (E/R)", "TEL: Multiple (E/R)", "ICR", "GTS: Single Abnormality",
           "GTS: Multi Abnormality", "Overall"]


@pytest.fixture
def runs(tmp_path):
    items = make_items(patients=12, per_patient=3)
    good = [prediction(i, f"Answer: {i.answer}" if k % 4 else wrong_letter(i), model="good")
            for k, i in enumerate(items)]
    poor = [prediction(i, "A or B" if k % 5 == 0 else "E", model="poor") for k, i in enumerate(items[:-2])]
    paths = [write_run(tmp_path, items, good, name="good", model="good"),
             write_run(tmp_path, items, poor, name="poor", model="poor")]
    score_stale(paths)  # as `medtemporal report` does before the report reads them
    return paths


def test_report_files_hold_the_table1_layout(runs):
    written = write_report(runs)
    assert sorted(p.name for p in written) == sorted(["report.md", "report.csv", "report.html", "assets"] * 2)
    for run in runs:
        md = (run / "report.md").read_text()
        for family in ("TEL", "ICR", "GTS"):
            assert f"| {family} |" in md or f" {family} |" in md
        lines = md.splitlines()
        start = next(k for k, line in enumerate(lines) if line.startswith("| Run | TEL: Single"))
        assert [c.strip() for c in lines[start].strip("|").split("|")] == ["Run", *COLUMNS, "Invalid", "Missing"]
        body = [[c.strip() for c in line.strip("|").split("|")] for line in lines[start + 2 : start + 5]]
        assert [row[0] for row in body] == ["good", "poor", "Chance"]
        assert body[2][1:] == ["20.0"] * len(COLUMNS) + ["", ""]
        assert body[1][-2:] == ["7", "2"]  # invalid, missing of the poor run
        assert all(re.fullmatch(r"\d+\.\d \[\d+\.\d, \d+\.\d\]", cell) for cell in body[0][1:-2])


def test_csv_values_come_from_scores_json(runs):
    write_report(runs)
    table = list(csv.DictReader(io.StringIO((runs[0] / "report.csv").read_text())))
    assert [row["run"] for row in table] == ["good", "poor", "Chance"]
    for row, run in zip(table, runs):
        saved = RunFolder(run).scores()
        overall = saved.score("overall", "accuracy")
        assert float(row["Overall"]) == overall.value
        assert float(row["Overall ci_low"]) == overall.ci_low
        assert int(row["Overall invalid"]) == overall.invalid and int(row["Overall missing"]) == overall.missing
        assert float(row["TEL: Single (E/R)"]) == saved.score("subtypes:TEL/Single (E/R)", "accuracy").value
    poor = table[1]
    assert int(poor["Overall invalid"]) == 7 and int(poor["Overall missing"]) == 2
    assert float(table[2]["ICR"]) == pytest.approx(0.2)


def test_report_reads_records_and_computes_nothing(runs):
    score_run(runs[0])
    path = runs[0] / "scores.json"
    data = json.loads(path.read_text())
    for score in data["scores"]:
        if score["group"] == "task:ICR":
            score.update(value=0.987, ci_low=0.9, ci_high=0.999)
    path.write_text(json.dumps(data))
    write_report(runs[:1], formats=["md"])
    assert "98.7 [90.0, 99.9]" in (runs[0] / "report.md").read_text()


def test_single_file_html_is_self_contained_with_a_chart_per_family(runs):
    write_report(runs, formats="html", single_file=True)
    page = (runs[0] / "report.html").read_text()
    assert not re.search(r"https?://|(?:src|href)=\"//|<link|<script[^>]*\bsrc=|@import", page)  # inline only
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 2  # TEL and GTS; ICR has one subtype, its bars would repeat its table cell
    assert all(base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n" for data in images)
    assert "<style>" in page and 'colspan="2"' in page  # TEL and GTS span their subtype columns
    assert not (runs[0] / "assets").exists()
    assert page.count('<script type="application/json" id="mt-asset-') == 4  # the viewer's data blocks, inline
    assert all(f'id="mt-asset-{name}"' in page for name in ("run-0-0", "run-1-0", "items-0", "thumbs"))


def _asset(folder, name):
    """The JSON a data block ``assets/<name>.js`` hands to the page."""
    text = (folder / "assets" / f"{name}.js").read_text()
    prefix = f'mtAsset("{name}",'
    assert text.startswith(prefix) and text.endswith(");")
    return json.loads(text[len(prefix):-2].replace("<\\/", "</"))


def test_html_loads_charts_and_item_data_from_its_assets_folder(runs):
    write_report(runs, formats="html")
    page = (runs[0] / "report.html").read_text()
    assert "data:image" not in page and "Question 0?" not in page  # both come from assets/
    sources = re.findall(r'src="([^"]+)"', page)
    assert len(sources) == 2 and all(s.startswith("assets/chart-") and (runs[0] / s).is_file() for s in sources)
    index = json.loads(page.split('id="viewer-index">', 1)[1].split("</script>", 1)[0].replace("<\\/", "</"))
    assert [r["count"] for r in index["runs"]] == [36, 36] and len(index["items"]) == 36
    assert [row[3] for row in index["rows"][36:]].count(index["statuses"].index("missing")) == 2
    first = _asset(runs[0], "run-0-0")
    assert len(first["raw"]) == 36 and first["raw"][1].startswith("Answer: ") and first["rule"][0].startswith("letter")
    poor = _asset(runs[0], "run-1-0")
    assert poor["raw"][-2:] == [None, None] and poor["rule"][-2:] == [None, None]  # the two items it never answered
    items = _asset(runs[0], "items-0")
    assert items[0]["question"] == "Question 0?" and len(items) == 36
    assert (runs[1] / "assets" / "run-1-0.js").read_bytes() == (runs[0] / "assets" / "run-1-0.js").read_bytes()


def test_a_new_report_replaces_the_assets_folder_whole(runs, tmp_path):
    out = tmp_path / "out"
    write_report(runs, out, formats="html")
    assert (out / "assets" / "run-1-0.js").is_file()
    write_report(runs[:1], out, formats="html")
    assert not (out / "assets" / "run-1-0.js").exists() and (out / "assets" / "run-0-0.js").is_file()
    assert sorted(p.name for p in out.iterdir()) == [OWNED, "assets", "report.html"]  # no staging or old folder left
    write_report(runs[:1], out, formats="html", single_file=True)
    assert sorted(p.name for p in out.iterdir()) == [OWNED, "report.html"]


def test_out_folder_png_and_formats(runs, tmp_path):
    out = tmp_path / "combined"
    written = write_report(runs, out=out, formats="md,png")
    assert {p.parent for p in written} == {out}
    assert {p.name for p in written} == {"report.md", "report_accuracy_TEL.png", "report_accuracy_GTS.png"}
    assert not (runs[0] / "report.md").exists()
    with pytest.raises(InvalidInputError, match="Unknown report format pdf"):
        write_report(runs, formats="md,pdf")


def test_the_report_only_reads_and_the_report_command_scores_stale_runs_first(runs, capsys):
    run = runs[1]
    before = RunFolder(run).scores().score("overall", "accuracy")
    items = make_items(patients=12, per_patient=3)
    write_jsonl(run / "predictions.jsonl", [prediction(i, i.answer, model="poor") for i in items])
    later = (run / "scores.json").stat().st_mtime_ns + 1000  # newer than the scores, older than a new scoring
    os.utime(run / "predictions.jsonl", ns=(later, later))
    stale = (run / "scores.json").read_bytes()
    with pytest.raises(InvalidInputError, match=r"poor has no scores newer than its predictions; score first: "
                                                r"medtemporal score .*poor \(`medtemporal report` does it for you\)"):
        write_report([run], formats="md")
    assert (run / "scores.json").read_bytes() == stale and not (run / "report.md").exists()
    assert main(["report", str(run), "--formats", "md"]) == 0
    assert f"scored {run}" in capsys.readouterr().out
    after = RunFolder(run).scores().score("overall", "accuracy")
    assert before.value < 0.5 and after.value == 1.0 and after.missing == 0 and (run / "report.md").exists()


def test_cli_score_and_report(runs, capsys):
    assert main(["score", str(runs[0]), "--resamples", "200"]) == 0
    out = capsys.readouterr().out
    assert "| Task | Metric | Score [CI] | Chance | n | Invalid | Missing |" in out and out.count("| accuracy |") == 4
    assert "good on scoring-test" in out and "Values × 100 (%), 95% intervals clustered by patient:" in out
    assert "| Overall | accuracy | 75.0 [" in out  # every task's row, then Overall, in %
    assert RunFolder(runs[0]).scores().bootstrap["resamples"] == 200
    assert main(["report", *map(str, runs), "--formats", "md,csv"]) == 0
    assert "report.csv" in capsys.readouterr().out
    assert main(["report", *map(str, runs), "--out", str(runs[0].parent / "one"), "--single-file"]) == 0
    assert not (runs[0].parent / "one" / "assets").exists() and "data:image/png" in (
        runs[0].parent / "one" / "report.html").read_text()
    assert main(["report", str(runs[0]), "--formats", "pdf"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("medtemporal: error: Unknown report format pdf") and "\n" not in err
