"""SIGKILL a run at random moments with faults injected, resume it with the same command each time, and compare.

`helpers.kill.kill_figure` does the work (and `helpers.kill_commands` for the other commands); ``bench/kill.py``
runs both with the issues' 20 or more kills.
"""

import pytest
from helpers.kill import kill_figure

KILLS = 10


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_run_killed_at_random_moments_resumes_to_the_same_predictions_and_scores(fake, tmp_path):
    figure = kill_figure(fake, tmp_path, items=60, kills=KILLS)
    assert figure["unexpected_exits"] == []
    assert figure["kills"] >= KILLS and figure["finished"]
    assert (figure["lost"], figure["duplicated"], figure["reasked"], figure["different"]) == (0, 0, 0, 0)
    assert figure["identical_scores"]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_judge_build_report_and_export_killed_at_random_moments_end_as_if_never_killed(fake, tmp_path):
    from helpers.kill_commands import command_figures

    figures = command_figures(fake, tmp_path, kills=8)
    for name, f in figures.items():
        assert f["unexpected_exits"] == [] and f["finished"] and f["kills"] >= 1, (name, f)
        assert f["identical"], name
    judge = figures["score --judge"]
    assert (judge["lost"], judge["duplicated"], judge["reasked"]) == (0, 0, 0) and judge["verdicts"] > 0
    for build in ("build", "build with a retrieval cache"):
        assert (figures[build]["lost"], figures[build]["duplicated"]) == (0, 0) and figures[build]["manifest_matches"]
