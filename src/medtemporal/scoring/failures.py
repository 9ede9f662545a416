"""Scored runs that failed as a whole, said in one sentence: no answer at all, or a judge that cannot be read.

`medtemporal run`, `medtemporal score` and `medtemporal.evaluate` ask `scores_failure` after scoring: a run
whose every item is missing (no prediction, or only errors) has nothing to score, a judge whose calls failed
leaves items out of its metrics until scored again, and a judge whose verdicts
are mostly unparseable (above `UNPARSEABLE_LIMIT` of the answers it was asked about: a judge that answers in
prose instead of the rubric's format) gives judge metrics over too few answers to mean anything. Either ends
the command with a non-zero exit and this sentence (the API raises `medtemporal.errors.RunFailedError`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

UNPARSEABLE_LIMIT = 0.2
"""The share of unparseable judge verdicts above which the judge pass counts as failed."""


def judge_failure(judge: dict[str, Any] | None) -> str | None:
    """The sentence for a judge pass with failed calls, or whose verdicts were mostly unparseable (None when
    every call was answered and readable enough).

    >>> judge_failure({"uri": "j", "counts": {"judged": 5, "failed_calls": 2}, "error_example": "timed out"})
    'The judge j failed 2 calls (timed out); their items are left out of the judge metrics until the same command is run again.'

    >>> judge_failure({"uri": "j", "counts": {"judged": 1, "unparseable": 9}, "unparseable_example": "Looks fine."})
    "The judge j answered in a form the rubric's parser cannot read for 9 of 10 answers (90%, more than 20%), e.g. 'Looks fine.'; use a judge model that follows the rubric's output format (see the judge prompt), then score again."
    """
    counts = (judge or {}).get("counts") or {}
    who = (judge or {}).get("uri") or (judge or {}).get("id")
    failed = int(counts.get("failed_calls") or counts.get("errors") or 0)
    if failed:
        return (f"The judge {who} failed {failed} calls ({(judge or {}).get('error_example') or 'see its log'}); "
                "their items are left out of the judge metrics until the same command is run again.")
    unparseable = int(counts.get("unparseable") or 0)
    asked = unparseable + int(counts.get("judged") or 0)
    if not asked or unparseable / asked <= UNPARSEABLE_LIMIT:
        return None
    example = str((judge or {}).get("unparseable_example") or "").strip()
    shown = f", e.g. {example[:80] + ('…' if len(example) > 80 else '')!r}" if example else ""
    return (f"The judge {who} answered in a form the rubric's parser "
            f"cannot read for {unparseable} of {asked} answers ({100 * unparseable / asked:.0f}%, more than "
            f"{100 * UNPARSEABLE_LIMIT:.0f}%){shown}; use a judge model that follows the rubric's output format "
            "(see the judge prompt), then score again.")


def answers_failure(counts: dict[str, Any], run_dir: str | Path) -> str | None:
    """The sentence for a run in which no item has an answer (None when some item has one).

    >>> answers_failure({"items": 3, "answered": 0, "invalid": 0, "missing": 3, "errors": 3}, "runs/r")
    "Every one of the 3 items of runs/r failed (3 errors, 0 without a prediction), so there is nothing to score; see the errors in the run's predictions (the viewer: `medtemporal view runs/r`), fix the model or endpoint and run the same command again."
    """
    items = int(counts.get("items") or 0)
    if not items or int(counts.get("answered") or 0) + int(counts.get("invalid") or 0) > 0:
        return None
    errors = int(counts.get("errors") or 0)
    return (f"Every one of the {items} items of {run_dir} failed ({errors} errors, "
            f"{int(counts.get('missing') or 0) - errors} without a prediction), so there is nothing to score; see the "
            f"errors in the run's predictions (the viewer: `medtemporal view {run_dir}`), fix the model or endpoint "
            "and run the same command again.")


def scores_failure(scores: Any, run_dir: str | Path) -> str | None:
    """The sentence for a scored run (`medtemporal.scoring.runs.RunScores`) that failed as a whole, or whose judge or
    GREEN pass failed, else None."""
    return answers_failure(scores.counts, run_dir) or judge_failure(scores.judge) or judge_failure(scores.green)
