"""TemMed tables (paper's Tables 3/4 layout) and the top-k plot, from real scored runs of phantoms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.temmed import temmed_bench, temmed_data  # noqa: F401 (fixtures)

from medtemporal.cli import main
from medtemporal.report.temmed import TemmedRun, table4, temmed_runs, topk_plot, write_temmed_report


@pytest.fixture(scope="module")
def runs(temmed_bench: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("runs")
    out = []
    for protocol in ("direct", "rag-multimodal", "retrieval-top1"):
        assert main(["run", str(temmed_bench), "--model", "baseline:random", "--protocol", protocol,
                     "--out", str(root / protocol), "--no-progress"]) == 0
        out.append(root / protocol)
    return out


def test_tables_show_scores_times_100_with_gains(runs: list[Path], tmp_path: Path) -> None:
    written = write_temmed_report(runs, tmp_path)
    assert [p.name for p in written] == ["temmed_tables.md", "temmed_topk.png"]
    text = written[0].read_text()
    scores = json.loads((runs[0] / "scores.json").read_text())["scores"]
    acc = next(s["value"] for s in scores if s["group"] == "task:vqa" and s["metric"] == "accuracy")
    assert f"| baseline:random | closed-book | {100 * acc:.2f} |" in text
    assert "| Random guess |  | [50] | [50] |" in text
    mm = next(r for r in temmed_runs(runs) if r.protocol == "rag-multimodal")
    assert f"{mm.values[0]:.2f} ({mm.values[0] - 100 * acc:+.2f})" in text
    hack = next(r for r in temmed_runs(runs) if r.protocol == "retrieval-top1")
    assert hack.values[0] is None and hack.values[2] is not None and hack.values[2] > 0
    assert written[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_table4_uses_k1_rows_and_plot_needs_rag_runs() -> None:
    runs = [TemmedRun("m", "direct", 1, (50.0,) * 7), TemmedRun("m", "rag-text", 1, (60.0,) * 7),
            TemmedRun("m", "rag-text", 3, (70.0,) * 7)]
    table = table4(runs)
    assert "60.00 (+10.00)" in table and "70.00" not in table
    assert topk_plot(runs) is not None
    assert topk_plot(runs[:1]) is None
