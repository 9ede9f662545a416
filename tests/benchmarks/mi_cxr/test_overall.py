"""MI-CXR's Overall as the paper computes it (issue 21 §2): a weighted mean of Table 1's six columns.

The rows are the family's published data (`medtemporal.benchmarks.mi_cxr.published`): Table 1, lines 187-200, and
Table 15 (temperature 0.7), lines 957-970, whose GTS columns come in the other order.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medtemporal.benchmarks.mi_cxr import SPEC
from medtemporal.benchmarks.mi_cxr.overall import PAPER_OVERALL_WEIGHTS, paper_overall
from medtemporal.benchmarks.mi_cxr.published import TABLE_1, TABLE_15
from medtemporal.cli import main
from medtemporal.phantoms.cxr import write_cxr_phantoms
from medtemporal.scoring.aggregate import WEIGHTED_OVERALL

GROUPS = ("subtypes:TEL/Single (E/R)", "subtypes:TEL/Multiple (E/R)", "subtypes:TEL/E\u2192R / R\u2192E", "task:ICR",
          "subtypes:GTS/Single Abnormality", "subtypes:GTS/Multi Abnormality")


def published_rows() -> list[tuple[str, dict[str, float], float]]:
    """(table and model, column values by score group, published Overall) for all 28 rows of Tables 1 and 15, from
    the family's published data (checked against the paper's lines in test_published.py)."""
    rows = []
    for table in (TABLE_1, TABLE_15):
        groups = [c.group for c in table.columns]
        rows += [(f"{table.name} {r.model}", dict(zip(groups[:6], r.values[:6])), r.values[6]) for r in table.rows]
    return rows


@pytest.mark.parametrize(("row", "columns", "published"), published_rows(), ids=[r[0] for r in published_rows()])
def test_the_weighted_mean_reproduces_every_published_overall(row, columns, published):
    """Cells are rounded to three decimals (±0.0005 each, so the mean of rounded columns is off by at most
    0.0005 and the published Overall by another 0.0005); the largest difference is 0.00084 (InternVL3.5-38B)."""
    assert abs(paper_overall(columns) - published) < 0.001


def test_the_weights_matter():
    """An unweighted mean of the columns, or ICR weighted like the others, misses published rows."""
    rows = published_rows()
    assert len(rows) == 28 and set(GROUPS) == set(PAPER_OVERALL_WEIGHTS) == set(SPEC.groups.overall_weights)
    misses = [abs(sum(c.values()) / 6 - p) for _, c, p in rows]
    assert max(misses) > 0.01


@pytest.fixture(scope="module")
def random_run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("overall")
    phantom = write_cxr_phantoms(root / "data", patients=60, seed=2, image_size=64)
    bench, run = root / "bench", root / "run"
    assert main(["build", "mi-cxr", "--mimic-cxr-jpg", str(phantom.mimic_cxr_jpg), "--qba", str(phantom.qba),
                 "--max-items", "1000", "--no-audit", "--out", str(bench)]) == 0
    assert main(["run", str(bench), "--model", "baseline:random", "--out", str(run), "--no-progress"]) == 0
    return run


def test_runs_report_the_papers_overall_with_its_interval_beside_the_micro_one(random_run, tmp_path, capsys):
    scores = {s["group"]: s for s in json.loads((random_run / "scores.json").read_text())["scores"]
              if s["metric"] == "accuracy"}
    paper, micro = scores[WEIGHTED_OVERALL], scores["overall"]
    assert paper["value"] == pytest.approx(paper_overall({g: scores[g]["value"] for g in GROUPS}), abs=1e-12)
    assert paper["ci_low"] < paper["value"] < paper["ci_high"]
    assert paper["n"] == micro["n"] and paper["invalid"] == micro["invalid"] == 0
    assert paper["chance"] == pytest.approx(0.2)
    assert paper["value"] != pytest.approx(micro["value"], abs=1e-9)  # columns of unequal size: two numbers
    out = tmp_path / "report"
    assert main(["report", str(random_run), "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "| Overall (paper) | Overall (micro) |" in md
    assert f"{100 * paper['value']:.1f} [{100 * paper['ci_low']:.1f}, {100 * paper['ci_high']:.1f}]" in md
    assert "Overall (paper)" in (out / "report.html").read_text()
    analyses = (out / "mi-cxr_analyses.md").read_text()
    assert "Overall (paper)" in analyses
    # the paper's Table 1 beside the run, in its layout, in % as the report's other tables, Overall first, near the top
    assert "### The MI-CXR paper, Table 1: Baseline performance of the state-of-the-art VLMs on MI-CXR" in analyses
    assert analyses.index("## Published results beside your runs") < analyses.index("## Temperature sensitivity")
    assert "| Closed | GPT-5.2 (published) | 41.1 | 33.4 | 37.1 | 35.8 | 43.8 | 55.8 | 39.0 |" in analyses
    row = next(line for line in analyses.splitlines() if line.startswith("| Your runs | baseline:random |"))
    cells = row.removesuffix(" |").split(" | ")
    assert cells[2] == f"{100 * paper['value']:.1f}" and cells[3] == f"{100 * scores['subtypes:TEL/Single (E/R)']['value']:.1f}"
    assert analyses.count("**Caution:** baseline:random ran on phantoms (synthetic data)") == 1
    assert analyses.count("(published) |") == 56  # Tables 1, 2, 15 and 16, 14 rows each
    capsys.readouterr()
    assert main(["runs", "list", str(random_run.parent)]) == 0
    listed = capsys.readouterr().out
    assert f"accuracy {100 * paper['value']:.1f} [" in listed and "(paper) · " in listed and "(micro)" in listed
