"""Scoring: answer extraction, metrics, clustered confidence intervals, run scores.

Importing this package registers the built-in extraction rules (kind
``extractor``: ``letter``, ``yesno``, ``ordering``, ``text``, ``raw_text``; a family's
released rules live in its package) and metrics (kind ``metric``:
``accuracy``, ``yesno_macro_f1``, ``pairwise_accuracy``, the report-generation ``bertscore_f1``, the field's
report metrics (`medtemporal.scoring.clinical`: lexical, clinical, temporal), and the
judge engine's ``judge_unparseable_rate`` (`medtemporal.scoring.judge`). A paper's own rules and metrics
live in its family's package and register themselves the same way (TemMed-Bench's ``temmed_bleu_1`` …,
ELTLM's judge rubric with ``judge_accuracy`` and ``judge_completeness``).
"""

import warnings
from typing import Any

from medtemporal.scoring.aggregate import Outcome, layout, score_outcomes
from medtemporal.scoring.ci import Estimate, cluster_bootstrap
from medtemporal.scoring.extraction import Extraction, extract, normalise, rule_id, rule_name
from medtemporal.scoring import ordering, text_metrics  # noqa: F401  (ordering rule and metrics; BERTScore)
from medtemporal.scoring import clinical  # noqa: F401  (the field's report metrics)
from medtemporal.scoring.metrics import Metric, chance_level, is_correct, metric
from medtemporal.scoring.outcomes import RunOutcomes, load_outcomes
from medtemporal.scoring.runs import score_run
from medtemporal.scoring import judge  # noqa: E402,F401  (the judge engine's metric; after runs)

__all__ = [
    "Estimate",
    "Extraction",
    "Metric",
    "Outcome",
    "RunOutcomes",
    "chance_level",
    "cluster_bootstrap",
    "extract",
    "is_correct",
    "layout",
    "load_outcomes",
    "metric",
    "normalise",
    "rule_id",
    "rule_name",
    "score_outcomes",
    "score_run",
]


_MOVED = {"RunScores": "RunScores", "read_scores": "scores", "needs_scoring": "needs_scoring"}
"""Names that moved to the run folder's owner (`medtemporal.runs`): old name → `RunFolder` method or class."""


def __getattr__(name: str) -> Any:
    """``read_scores``, ``needs_scoring`` and ``RunScores`` under their old path, with a `DeprecationWarning`."""
    if name not in _MOVED:
        raise AttributeError(f"module 'medtemporal.scoring' has no attribute {name!r}")
    from medtemporal import runs

    new = "medtemporal.runs.RunScores" if name == "RunScores" else f"medtemporal.runs.RunFolder(path).{_MOVED[name]}()"
    warnings.warn(f"medtemporal.scoring.{name} moved: use {new}.", DeprecationWarning, stacklevel=2)
    if name == "RunScores":
        return runs.RunScores
    return lambda run_dir: getattr(runs.RunFolder(run_dir), _MOVED[name])()
