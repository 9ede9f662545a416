"""Scoring: answer extraction, metrics, clustered confidence intervals, run scores.

Importing this package registers the built-in extraction rules (kind
``extractor``: ``letter``, ``yesno``, ``ordering``, ``text``, ``raw_text``; a family's
released rules live in its package) and metrics (kind ``metric``:
``accuracy``, ``yesno_macro_f1``, ``pairwise_accuracy``, the report-generation ``bertscore_f1``;
the LLM judge's ``judge_accuracy``, ``judge_completeness`` and ``judge_unparseable_rate``,
`medtemporal.scoring.judge`). New rules and metrics register themselves the same way, in their own
modules imported here; a paper's own metrics live in its family's package (e.g. TemMed-Bench's
``temmed_bleu_1``, ``temmed_rouge_l``, ``temmed_meteor``, ``temmed_report_avg``).
"""

from medtemporal.scoring.aggregate import Outcome, layout, score_outcomes
from medtemporal.scoring.ci import Estimate, cluster_bootstrap
from medtemporal.scoring.extraction import Extraction, extract, normalise, rule_id, rule_name
from medtemporal.scoring import ordering, text_metrics  # noqa: F401  (ordering rule and metrics; BERTScore)
from medtemporal.scoring.metrics import Metric, chance_level, is_correct, metric
from medtemporal.scoring.runs import RunScores, needs_scoring, read_scores, score_run
from medtemporal.scoring import judge, judge_baseline  # noqa: E402,F401  (LLM judge metrics, scripted judge; after runs)

__all__ = [
    "Estimate",
    "Extraction",
    "Metric",
    "Outcome",
    "RunScores",
    "chance_level",
    "cluster_bootstrap",
    "extract",
    "is_correct",
    "layout",
    "metric",
    "needs_scoring",
    "normalise",
    "read_scores",
    "rule_id",
    "rule_name",
    "score_outcomes",
    "score_run",
]
