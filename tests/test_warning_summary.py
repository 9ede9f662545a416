"""medtemporal's warnings are told once per command, as a summary by kind, never line by line mid-run."""

import warnings

from helpers.scored_runs import make_items, prediction, write_run

from medtemporal.cli import main
from medtemporal.errors import UndefinedMetricWarning
from medtemporal.warning_summary import collect_warnings


def test_a_command_ends_with_one_summary_of_its_warnings(tmp_path, capsys):
    items = make_items(patients=2, per_patient=3)  # most subtypes hold a single patient
    run = write_run(tmp_path, items, [prediction(i, i.answer) for i in items])
    assert main(["score", str(run), "--resamples", "50"]) == 0
    captured = capsys.readouterr()
    assert "medtemporal: warning:" not in captured.err and "UndefinedMetricWarning" not in captured.err
    kinds = captured.err.strip().splitlines()
    single = [k for k in kinds if "over a single patient" in k]
    assert len(single) == 1  # one line for every group it concerns, not a line per group
    assert single[0].startswith("medtemporal: note: ") and single[0].split()[2].isdigit()
    assert "scores over a single patient: no clustered confidence interval (accuracy over " in single[0]
    assert single[0].endswith(", …)") and all(k.startswith("medtemporal: ") for k in kinds)
    assert "| Task | Metric | Score [CI] |" in captured.out  # the table follows the scores, the summary goes to stderr


def test_other_warnings_pass_through_and_ours_are_counted_every_time():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with collect_warnings() as summary:
            for _ in range(3):
                warnings.warn(UndefinedMetricWarning("x: no items", "accuracy over x", "over no items: NaN"), stacklevel=1)
            warnings.warn("something else", DeprecationWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["something else"]
    assert summary.text() == "medtemporal: note: 1 score over no items: NaN (accuracy over x)"



def test_another_package_s_warning_is_shown_without_its_source_line(tmp_path):
    """Issue 32 §6: a scipy warning printed the library's source line into ``score``'s output (a child process: pytest
    records warnings itself)."""
    import subprocess
    import sys

    code = ("import warnings\nfrom medtemporal.warning_summary import collect_warnings\nwith collect_warnings():\n"
            "    warnings.warn('the bootstrap distribution is degenerate', RuntimeWarning)  # a library's line\n")
    script = tmp_path / "library.py"  # a file, so that Python could show the line
    script.write_text(code)
    err = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60).stderr
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].endswith("RuntimeWarning: the bootstrap distribution is degenerate"), err
