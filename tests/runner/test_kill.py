"""SIGKILL a run at random moments with faults injected, resume it with the same command each time, and compare.

`helpers.kill.kill_figure` does the work; ``bench/kill.py`` runs it with the issue's 20 or more kills.
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
