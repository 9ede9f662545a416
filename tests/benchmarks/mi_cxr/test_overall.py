"""MI-CXR's Overall as the paper computes it (issue 21 §2): a weighted mean of Table 1's six columns.

The rows below are transcribed from ``seeds/000``: Table 1, lines 187-200 (columns TEL Single (E/R), Multiple
(E/R), E→R / R→E, ICR, GTS Single Abnormality, Multi Abnormality, Overall) and Table 15 (temperature 0.7),
lines 957-970, whose GTS columns come in the other order (Multi Abnormality, then Single Abnormality).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medtemporal.benchmarks.mi_cxr import SPEC
from medtemporal.benchmarks.mi_cxr.overall import PAPER_OVERALL_WEIGHTS, paper_overall
from medtemporal.cli import main
from medtemporal.phantoms.cxr import write_cxr_phantoms
from medtemporal.scoring.aggregate import WEIGHTED_OVERALL

# model: TEL Single, TEL Multiple, E→R / R→E, ICR, GTS Single, GTS Multi, Overall (Table 1, 000 lines 187-200)
TABLE_1 = {
    "Claude Sonnet 4.5": (0.226, 0.222, 0.243, 0.442, 0.389, 0.292, 0.315),
    "Gemini 3.0 Pro": (0.246, 0.325, 0.290, 0.457, 0.556, 0.407, 0.387),
    "GPT-5.2": (0.334, 0.371, 0.358, 0.438, 0.558, 0.390, 0.411),
    "InternVL3.5-8B": (0.239, 0.295, 0.193, 0.552, 0.389, 0.371, 0.358),
    "InternVL3.5-14B": (0.248, 0.266, 0.223, 0.293, 0.374, 0.276, 0.281),
    "InternVL3.5-38B": (0.298, 0.306, 0.224, 0.571, 0.510, 0.515, 0.418),
    "QwenVL3-8B": (0.237, 0.295, 0.185, 0.164, 0.328, 0.236, 0.234),
    "QwenVL3-32B": (0.258, 0.246, 0.240, 0.224, 0.363, 0.325, 0.272),
    "DeepSeek-VL-16B": (0.223, 0.124, 0.200, 0.186, 0.160, 0.187, 0.181),
    "IDEFICS2-8B": (0.165, 0.308, 0.291, 0.246, 0.281, 0.178, 0.245),
    "Lingshu-7B": (0.230, 0.260, 0.165, 0.189, 0.324, 0.194, 0.223),
    "Lingshu-32B": (0.221, 0.247, 0.214, 0.167, 0.388, 0.290, 0.247),
    "MedGemma-4B": (0.174, 0.196, 0.301, 0.281, 0.259, 0.183, 0.237),
    "MedGemma-27B": (0.215, 0.351, 0.254, 0.429, 0.255, 0.214, 0.299),
}
# model: TEL Single, TEL Multiple, E→R / R→E, ICR, GTS Multi, GTS Single, Overall (Table 15, 000 lines 957-970)
TABLE_15 = {
    "Claude Sonnet 4.5": (0.217, 0.226, 0.234, 0.454, 0.292, 0.391, 0.316),
    "Gemini 3.0 Preview": (0.259, 0.318, 0.251, 0.416, 0.399, 0.547, 0.370),
    "GPT-5.2": (0.327, 0.345, 0.333, 0.426, 0.385, 0.545, 0.396),
    "InternVL3.5-8B": (0.233, 0.262, 0.186, 0.543, 0.362, 0.377, 0.346),
    "InternVL3.5-14B": (0.245, 0.267, 0.246, 0.325, 0.268, 0.378, 0.292),
    "InternVL3.5-38B": (0.289, 0.282, 0.222, 0.546, 0.486, 0.498, 0.401),
    "QwenVL3-8B": (0.228, 0.281, 0.198, 0.164, 0.237, 0.317, 0.231),
    "QwenVL3-32B": (0.253, 0.259, 0.233, 0.227, 0.326, 0.370, 0.273),
    "DeepSeek-VL-16B": (0.193, 0.128, 0.199, 0.180, 0.187, 0.158, 0.175),
    "IDEFICS2-8B": (0.147, 0.283, 0.274, 0.243, 0.179, 0.235, 0.229),
    "Lingshu-7B": (0.219, 0.261, 0.170, 0.180, 0.180, 0.319, 0.218),
    "Lingshu-32B": (0.206, 0.236, 0.207, 0.221, 0.285, 0.355, 0.249),
    "MedGemma-4B": (0.186, 0.245, 0.315, 0.287, 0.198, 0.264, 0.253),
    "MedGemma-27B": (0.214, 0.328, 0.245, 0.420, 0.215, 0.262, 0.293),
}
GROUPS = ("subtypes:TEL/Single (E/R)", "subtypes:TEL/Multiple (E/R)", "subtypes:TEL/E\u2192R / R\u2192E", "task:ICR",
          "subtypes:GTS/Single Abnormality", "subtypes:GTS/Multi Abnormality")


def published_rows() -> list[tuple[str, dict[str, float], float]]:
    """(table and model, column values by score group, published Overall) for all 28 rows."""
    rows = [(f"Table 1 {m}", dict(zip(GROUPS, v[:6])), v[6]) for m, v in TABLE_1.items()]
    t15 = ("subtypes:TEL/Single (E/R)", "subtypes:TEL/Multiple (E/R)", "subtypes:TEL/E\u2192R / R\u2192E", "task:ICR",
           "subtypes:GTS/Multi Abnormality", "subtypes:GTS/Single Abnormality")
    return rows + [(f"Table 15 {m}", dict(zip(t15, v[:6])), v[6]) for m, v in TABLE_15.items()]


@pytest.mark.parametrize(("row", "columns", "published"), published_rows(), ids=[r[0] for r in published_rows()])
def test_the_weighted_mean_reproduces_every_published_overall(row, columns, published):
    """Cells are rounded to three decimals (±0.0005 each, so the mean of rounded columns is off by at most
    0.0005 and the published Overall by another 0.0005); the largest difference is 0.00084 (InternVL3.5-38B)."""
    assert abs(paper_overall(columns) - published) < 0.001


def test_the_weights_matter():
    """An unweighted mean of the columns, or ICR weighted like the others, misses published rows."""
    rows = published_rows()
    assert len(rows) == 28 and set(GROUPS) == set(PAPER_OVERALL_WEIGHTS) == set(SPEC.overall_weights)
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
    assert "Overall (paper)" in (out / "mi-cxr_analyses.md").read_text()
    capsys.readouterr()
    assert main(["runs", "list", str(random_run.parent)]) == 0
    listed = capsys.readouterr().out
    assert f"accuracy {100 * paper['value']:.1f} [" in listed and "(paper) · " in listed and "(micro)" in listed
