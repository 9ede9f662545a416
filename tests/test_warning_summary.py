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
    lines = captured.err.strip().splitlines()
    head, kinds = lines[0], lines[1:]
    count = int(head.split()[1])
    assert head == f"medtemporal: {count} warnings" and count > len(kinds) >= 1
    single = next(k for k in kinds if "covers a single patient" in k)
    assert single.lstrip().split(" × ")[0].isdigit() and "(accuracy over " in single and single.endswith(", …)")
    assert sum(int(k.split(" × ")[0]) for k in kinds) == count
    assert "accuracy (%) by task family" in captured.out  # the table follows the scores, the summary goes to stderr


def test_other_warnings_pass_through_and_ours_are_counted_every_time():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with collect_warnings() as summary:
            for _ in range(3):
                warnings.warn(UndefinedMetricWarning("x: no items", "accuracy over x", "no items"), stacklevel=1)
            warnings.warn("something else", DeprecationWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["something else"]
    assert summary.text() == "medtemporal: 3 warnings\n  3 × no items (accuracy over x)"


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
