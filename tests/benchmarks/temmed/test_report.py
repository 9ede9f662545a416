"""TemMed tables (paper's Tables 3/4 layout) and the top-k plot, from real scored runs of phantoms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.temmed import temmed_bench, temmed_data  # noqa: F401 (fixtures)

from medtemporal.cli import main
from medtemporal.benchmarks.temmed.report import TemmedRun, table3, table4, temmed_runs, topk_plot
from medtemporal.report.family import family_report
from medtemporal.report import load_runs
from medtemporal.writes import OWNED


@pytest.fixture(scope="module")
def runs(temmed_bench: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Runs of baseline:random: closed-book, multi-modal RAG (k=1), the top-1 hack and text-only RAG with k=3."""
    root = tmp_path_factory.mktemp("runs")
    out = []
    closed, report = ("--tasks", "vqa,image_pair"), ("--tasks", "report")
    for name, protocol, *options in (("direct", "direct", *closed), ("mm", "rag-multimodal", *closed),
                                     ("top1", "retrieval-top1", *report),
                                     ("text3", "rag-text", "--protocol-option", "k=3", *closed)):
        assert main(["run", str(temmed_bench), "--model", "baseline:random", "--protocol", protocol, *options,
                     "--out", str(root / name), "--no-progress"]) == 0
        out.append(root / name)
    return out


def test_tables_show_scores_times_100_with_gains(runs: list[Path], tmp_path: Path) -> None:
    written = family_report(runs, tmp_path)
    assert [p.name for p in written] == ["temmed_tables.md", "temmed_topk.png"]
    text = written[0].read_text()
    scores = json.loads((runs[0] / "scores.json").read_text())["scores"]
    acc = next(s["value"] for s in scores if s["group"] == "task:vqa" and s["metric"] == "accuracy")
    assert f"| baseline:random | closed-book | {100 * acc:.2f} |" in text
    assert "| Random guess |  | [50] | [50] |" in text
    mm = next(r for r in temmed_runs(load_runs(runs)) if r.protocol == "rag-multimodal")
    assert f"{mm.values[0]:.2f} ({mm.values[0] - 100 * acc:+.2f})" in text
    hack = next(r for r in temmed_runs(load_runs(runs)) if r.protocol == "retrieval-top1")
    assert hack.values[0] is None and hack.values[2] is not None and hack.values[2] > 0
    assert written[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_k_comes_from_the_recorded_protocol_options(runs: list[Path]) -> None:
    assert [(r.protocol, r.k) for r in temmed_runs(load_runs(runs))] == [
        ("direct", 1), ("rag-multimodal", 1), ("retrieval-top1", 1), ("rag-text", 3)]
    assert json.loads((runs[3] / "scores.json").read_text())["run"]["protocol_options"] == {"k": 3}
    assert "Text-only RAG" not in table4(temmed_runs(load_runs(runs)))  # the k=3 run is on the plot only


def test_medtemporal_report_adds_the_temmed_tables(runs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert main(["report", *map(str, runs), "--out", str(out), "--formats", "md"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [OWNED, "report.md", "temmed_tables.md", "temmed_topk.png"]
    assert "## Closed-book (Table 3 layout)" in (out / "temmed_tables.md").read_text()
    assert "baseline:random (rag-text k=3)" in (out / "report.md").read_text()
    assert main(["report", str(runs[0]), "--formats", "md"]) == 0  # into the run folder; no RAG run, no plot
    assert (runs[0] / "temmed_tables.md").is_file() and not (runs[0] / "temmed_topk.png").exists()
    assert main(["report", str(runs[1]), str(runs[2]), "--formats", "md"]) == 0  # the same files in each folder
    for name in ("temmed_tables.md", "temmed_topk.png"):
        assert (runs[1] / name).read_bytes() == (runs[2] / name).read_bytes()


def test_table4_uses_k1_rows_and_plot_needs_rag_runs() -> None:
    runs = [TemmedRun("m", "rag-text", 1, (60.0,) * 7), TemmedRun("m", "direct", 1, (50.0,) * 7),
            TemmedRun("m", "rag-text", 3, (70.0,) * 7), TemmedRun("m", "rag-text", 1, (55.0,) * 7, "image")]
    rows = [line.split(" | ")[1] for line in table4(runs).splitlines()[2:]]
    assert rows == ["closed-book", "+ Text-only RAG", "+ Text-only RAG (image)"]  # table order; none dropped
    table = table4(runs)
    assert "60.00 (+10.00)" in table and "55.00 (+5.00)" in table and "70.00" not in table
    assert topk_plot(runs) is not None
    assert topk_plot(runs[1:2]) is None


def test_chance_row_comes_from_the_scores() -> None:
    runs = [TemmedRun("m", "direct", 1, (50.0,) * 7, chance=(50.0, 50.0, None, None, None, None, 100 / 3))]
    chance = table3(runs).splitlines()[-1]
    assert chance == "| Random guess |  | [50] | [50] |  |  |  |  | [33.3] |"


def test_ablation_and_hack_tables_show_every_retrieval_run(runs: list[Path]) -> None:
    from medtemporal.benchmarks.temmed.report import ablation_table, hack_table

    parsed = temmed_runs(load_runs(runs))
    text3 = next(r for r in parsed if r.protocol == "rag-text")
    assert text3.ci[0][0] is not None and text3.ci[0][0] <= text3.values[0] <= text3.ci[0][1]
    table = ablation_table(parsed)
    assert table is not None and "| baseline:random | + Text-only RAG | each item's own | 3 |" in table
    assert f"{text3.values[0]:.2f} [{text3.ci[0][0]:.2f}, {text3.ci[0][1]:.2f}]" in table
    hack = hack_table(parsed)
    top1 = next(r for r in parsed if r.protocol == "retrieval-top1")
    assert hack is not None and f"| Top-1 retrieval hack | {top1.values[2]:.2f} |" in hack
    assert ablation_table(parsed[:1]) is None and hack_table(parsed[:1]) is None
    ablation = [TemmedRun("m", "rag-multimodal", 1, (60.0,) * 7, "image"), TemmedRun("m", "rag-multimodal", 1, (70.0,) * 7)]
    rows = ablation_table(ablation).splitlines()[2:]
    assert [r.split(" | ")[2] for r in rows] == ["each item's own", "image"]  # both retrievers shown


def test_a_run_scored_under_the_old_core_metric_names_still_reports(runs: list[Path], tmp_path: Path) -> None:
    """Before the report metrics moved home, ``scores.json`` named them ``bleu_1``, ``rouge_l``, ``meteor`` and
    ``report_avg`` (same recipe, same values): the tables read them, and ``score`` rewrites the new names."""
    import shutil

    from medtemporal.benchmarks.temmed.metrics import LEGACY_NAMES

    old = tmp_path / "old"
    shutil.copytree(runs[2], old)  # the top-1 hack: report task only
    scores = json.loads((old / "scores.json").read_text())
    ours = {"temporal_entity_f1", "temporal_entity_f1_libra"}  # scored beside the release's metrics (BenchmarkSpec.extra_metrics)
    assert {s["metric"] for s in scores["scores"]} == set(LEGACY_NAMES) | ours
    for s in scores["scores"]:
        s["metric"] = LEGACY_NAMES.get(s["metric"], s["metric"])
    scores["metrics"] = {LEGACY_NAMES.get(k, k): v for k, v in scores["metrics"].items()}
    (old / "scores.json").write_text(json.dumps(scores))  # newer than predictions.jsonl: not re-scored
    (parsed,) = temmed_runs(load_runs([old]))
    assert parsed.values == temmed_runs(load_runs([runs[2]]))[0].values and parsed.values[2] is not None
    assert main(["report", str(old), "--out", str(tmp_path / "report"), "--formats", "md"]) == 0
    assert f"| Top-1 retrieval hack | {parsed.values[2]:.2f} |" in (tmp_path / "report" / "temmed_tables.md").read_text()
    assert main(["score", str(old)]) == 0
    assert {s["metric"] for s in json.loads((old / "scores.json").read_text())["scores"]} == set(LEGACY_NAMES) | ours
    assert temmed_runs(load_runs([old]))[0].values == parsed.values
