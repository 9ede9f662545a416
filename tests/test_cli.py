import json
import os

import pytest

from medtemporal.cli import main


@pytest.mark.slow  # every family end to end, twice (minutes): `make test-slow`
def test_demo_runs_the_whole_pipeline_and_resumes(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MEDTEMPORAL_BERTSCORE_MODEL", raising=False)  # the skillqa section brings its own
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out)]) == 0
    first = capsys.readouterr().out
    assert "$ medtemporal phantoms cxr" in first and "$ medtemporal build temmed" in first
    report = (out / "report" / "mi-cxr" / "report.md").read_text()
    assert "| Run | TEL | ICR | GTS | ICR-V | Overall (paper) | Overall (micro) | Invalid | Missing |" in report  # ICR-V items
    assert (out / "report" / "mi-cxr" / "report.html").is_file()
    assert "Table 3 layout" in (out / "report" / "temmed" / "temmed_tables.md").read_text()
    assert "Table 2 layout" in (out / "report" / "skillqa" / "skillqa_tables.md").read_text()
    assert "| Commonest label of the finding (text only) |" in (out / "report" / "ms-cxr-t" / "ms-cxr-t_tables.md").read_text()
    rrg = (out / "report" / "longitudinal-rrg" / "longitudinal-rrg_tables.md").read_text()
    assert "| longitudinal_rrg:copy-prior (reference) |" in rrg and "each run minus copy-prior" in rrg
    assert "## All questions (EKAID `caption_metric`)" in (
        out / "report" / "medical-diff-vqa" / "medical-diff-vqa_tables.md").read_text()
    assert "$ export MEDTEMPORAL_BERTSCORE_MODEL=" in first and "MEDTEMPORAL_BERTSCORE_MODEL" not in os.environ
    temmed = (out / "report" / "temmed" / "temmed_tables.md").read_text()
    assert "| image | 1 |" in temmed and "Top-1 retrieval hack (Table 8 layout)" in temmed  # ablation runs shown
    analyses = (out / "report" / "mi-cxr" / "mi-cxr_analyses.md").read_text()
    assert "| baseline:random | direct | 0.7 | 3 |" in analyses and "T=0.7 − T=0" in analyses
    assert "Error types" in analyses and "Table 12 layout" in analyses
    assert "| micxr-describer:noisy-truth | stage-wise − direct | overall |" in analyses  # Fig. 3 on phantoms
    assert "Agree with annotation" in analyses and "ICR variant (Table 2 layout)" in analyses
    assert "by the LLM judge (Appendix G, Fig. 25 layout)" in analyses
    assert (out / "report" / "mi-cxr" / "mi-cxr_judged_errors.png").is_file()
    page = (out / "report" / "mi-cxr" / "report.html").read_text()
    assert 'id="viewer-index"' in page and "Temperature sensitivity" in page and '<h2 id="settings">Run settings</h2>' in page
    for baseline in ("random", "constant-A"):  # balanced letters: both score chance
        scores = json.loads((out / "runs" / f"mi-cxr-{baseline}" / "scores.json").read_text())
        overall = next(s for s in scores["scores"] if s["group"] == "overall" and s["metric"] == "accuracy")
        assert overall["n"] > 1000 and overall["ci_low"] <= 0.2 <= overall["ci_high"]

    assert main(["demo", "--out", str(out)]) == 0
    again = capsys.readouterr().out
    assert "$ medtemporal phantoms" not in again  # phantoms reused
    assert ", 0 answered" not in first and " 0 answered" in again  # every run resumed with nothing to do


def test_list_shows_every_kind(capsys):
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    for name in ("mi-cxr", "temmed", "direct", "stagewise", "rag-text", "accuracy", "baseline", "mcq_direct"):
        assert name in text


def test_user_errors_are_one_line_with_exit_2(tmp_path, capsys):
    assert main(["run", str(tmp_path), "--model", "baseline:random", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("medtemporal: error:") and "not a benchmark folder" in err and "\n" not in err


def test_unknown_command_exits_with_usage():
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2


def test_each_command_help_line_matches_its_module():
    import argparse

    from medtemporal.cli import HELP, parser

    full = parser()
    (sub,) = [a for a in full._actions if isinstance(a, argparse._SubParsersAction)]
    shown = {choice.dest: choice.help for choice in sub._choices_actions}
    assert shown == HELP  # the lazy parser shows each command by the same line


def test_running_one_command_imports_only_its_module():
    import subprocess
    import sys

    code = ("import sys; from medtemporal.cli import main; main(['list', 'backend']); "
            "print('LOADED', 'medtemporal.cli._report' in sys.modules, 'matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("LOADED False False")


def test_a_run_imports_no_report_audit_or_raw_data_libraries(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    bench_dir = Path(__file__).resolve().parents[1] / "bench"  # its synthetic family needs only numpy and PIL
    code = (f"import sys; sys.path.insert(0, {str(bench_dir)!r}); import _synthetic; from pathlib import Path; "
            f"bench = _synthetic.make_benchmark(Path({str(tmp_path)!r}), 2); from medtemporal.cli import main; "
            f"code = main(['run', str(bench), '--model', 'baseline:random', '--out', {str(tmp_path / 'run')!r}, "
            "'--no-score', '--no-progress', '--no-cache']); "
            "heavy = ('sklearn', 'scipy.stats', 'scipy.optimize', 'pandas.core.frame', 'matplotlib'); "  # pandas itself is a lazy stub
            "print('LOADED', code, *(m in sys.modules for m in heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "LOADED 0 False False False False False"
    assert len((tmp_path / "run" / "predictions.jsonl").read_text().splitlines()) == 2
