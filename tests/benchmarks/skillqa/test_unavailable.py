"""No BERTScore encoder to be had (offline, empty Hugging Face cache): the rationale metric and the overall score
are reported unavailable with the reason, the ordering metrics, ``scores.json`` and the report are still
written, and ``run``, ``score`` and ``report`` exit 0, saying why once."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from medtemporal.cli import main
from medtemporal.scoring.text_metrics import BERTSCORE_MODEL_ENV

REASON = ("The BERTScore encoder 'roberta-large' is not in the Hugging Face cache and HF_HUB_OFFLINE=1 forbids "
          f"downloading it; run once online, or set {BERTSCORE_MODEL_ENV}=/path/to/model (a local copy of it, or "
          "another encoder)")


def _medtemporal(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """``python -m medtemporal ARGS`` offline, with an empty ``HF_HOME`` and no encoder named."""
    env = {k: v for k, v in os.environ.items() if k not in (BERTSCORE_MODEL_ENV, "TRANSFORMERS_OFFLINE")}
    env.update(HF_HUB_OFFLINE="1", HF_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "medtemporal", *args], env=env, capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.mark.slow  # a whole demo without an encoder: about 23 s
def test_without_an_encoder_bertscore_is_unavailable_and_the_rest_is_written(frames: Path, tmp_path: Path) -> None:
    bench, run, home = tmp_path / "bench", tmp_path / "run", tmp_path / "hf-home"
    home.mkdir()
    assert main(["build", "skillqa", "--frames", str(frames), "--out", str(bench)]) == 0
    done = _medtemporal("run", str(bench), "--model", "baseline:oracle", "--out", str(run), "--no-progress", home=home)
    assert done.returncode == 0, done.stderr
    line = f"Not computed: skillqa_overall, skillqa_rationale_bertscore: {REASON}."
    assert done.stdout.count(line) == 1 and not list(home.rglob("*.safetensors"))  # said once; nothing downloaded
    assert REASON not in done.stderr  # the table said it: not again in the warnings

    scored = _medtemporal("score", str(run), home=home)
    assert scored.returncode == 0, scored.stderr
    assert (scored.stdout + scored.stderr).count(REASON) == 1  # said once, under the table
    # the metrics that could be computed stand in the unavailable ones' place
    assert "| ordering | accuracy | 100.0 [100.0, 100.0] |" in scored.stdout
    assert "| ordering | pairwise_accuracy | 100.0 [100.0, 100.0] |" in scored.stdout
    assert "| ordering | skillqa_overall |" not in scored.stdout
    listed = _medtemporal("runs", "list", str(tmp_path), home=home)  # Task Accuracy leads where Overall cannot
    assert "accuracy 100.0 [100.0, 100.0]" in listed.stdout and "unavailable" not in listed.stdout, listed.stdout
    scores = json.loads((run / "scores.json").read_text())
    by = {(s["group"], s["metric"]): s for s in scores["scores"]}
    assert by[("overall", "accuracy")]["value"] == 1.0 and by[("overall", "pairwise_accuracy")]["value"] == 1.0
    assert by[("overall", "accuracy")]["unavailable"] is None
    for name in ("skillqa_rationale_bertscore", "skillqa_overall"):
        assert math.isnan(by[("overall", name)]["value"]) and by[("overall", name)]["unavailable"] == REASON + "."
        assert by[("overall", name)]["n"] == 12
    assert scores["metrics"]["skillqa_overall"]["settings"]["bertscore_model"] == "roberta-large"

    reported = _medtemporal("report", str(run), "--out", str(tmp_path / "report"), home=home)
    assert reported.returncode == 0, reported.stderr
    md = (tmp_path / "report" / "report.md").read_text()
    assert f"skillqa_rationale_bertscore: unavailable ({REASON})" in md
    assert "| baseline:oracle | 100.0 [100.0, 100.0] |" in md  # the metrics that could be computed are tabled
    tables = (tmp_path / "report" / "skillqa_tables.md").read_text()
    assert "| 1 | baseline:oracle | unavailable | 1.00 | 1.00 | unavailable | 0 | 0 |" in tables
    assert f"skillqa_overall: unavailable ({REASON})" in tables
    assert f"skillqa_overall: unavailable ({REASON})" in (tmp_path / "report" / "report.html").read_text()
