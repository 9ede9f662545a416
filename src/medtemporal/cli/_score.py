"""``medtemporal score RUN [RUN ...]``: write each run's ``scores.json`` and print the headline table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from medtemporal.bounds import CONCURRENCY_MAX
from medtemporal.errors import InvalidInputError, MetricUnavailableWarning, UnavailableError, require
from medtemporal.progress import add_no_progress
from medtemporal.runs import RunFolder
from medtemporal.scoring import score_run
from medtemporal.scoring.ci import CONFIDENCE, RESAMPLES
from medtemporal.scoring.failures import scores_failure
from medtemporal.scoring.judge import Judge
from medtemporal.warning_summary import told


def add(sub: argparse._SubParsersAction) -> None:
    """Register ``medtemporal score``."""
    p = sub.add_parser("score", help="score runs: each task's metrics with patient-clustered 95%% CIs -> scores.json")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folder written by `medtemporal run`")
    p.add_argument("--resamples", type=int, default=RESAMPLES, metavar="N",
                   help=f"bootstrap resamples (default {RESAMPLES})")
    p.add_argument("--confidence", type=float, default=CONFIDENCE, metavar="LEVEL",
                   help=f"interval level (default {CONFIDENCE})")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="bootstrap seed (default 0)")
    add_no_progress(p)
    p.add_argument("--allow-rebuilt-benchmark", action="store_true",
                   help="score against a benchmark rebuilt since the run (its new items; recorded in scores.json)")
    p.add_argument("--metrics", type=_names, default=(), metavar="NAME[,NAME...]",
                   help="also score these model-based report metrics where the benchmark lists them (weights are "
                        "fetched into the Hugging Face cache on first use; `medtemporal list metric` says what each "
                        "needs), e.g. chexbert_f1_14_micro,radgraph_f1_partial, or 'all'")
    g = p.add_argument_group("GREEN (report metric by a GREEN model)")
    g.add_argument("--green", metavar="URI", help="the GREEN model for green_score, served by any backend, e.g. "
                   "hf:StanfordAIMI/GREEN-radllama2-7b or openai+http://localhost:8000/v1:StanfordAIMI/GREEN-radllama2-7b")
    g.add_argument("--green-concurrency", type=int, metavar="N",
                   help=f"GREEN calls in flight, at most {CONCURRENCY_MAX} (default: the backend's)")
    add_judge_arguments(p)
    add_tracking_arguments(p)
    p.set_defaults(func=run)


def add_tracking_arguments(p: argparse.ArgumentParser) -> None:
    """The experiment-tracking options shared by ``score`` and ``run``."""
    g = p.add_argument_group("experiment tracking")
    g.add_argument("--track", choices=("mlflow",), help="log each scored run's config, scores and report to MLflow "
                   "(where MLFLOW_TRACKING_URI says; pip install 'medtemporal[tracking]')")
    g.add_argument("--track-experiment", default="medtemporal", metavar="NAME",
                   help="the MLflow experiment (default medtemporal)")


def check_tracking(args: argparse.Namespace) -> None:
    """Refuse ``--track`` before any work when it could log nothing: its library missing, or nothing scored."""
    if getattr(args, "track", None):
        if getattr(args, "no_score", False):
            raise InvalidInputError("--track logs scored runs; drop --no-score, or --track and run `medtemporal "
                                    "score RUN --track mlflow` later.")
        require("mlflow", "tracking")


def track(args: argparse.Namespace, run_dir: Path) -> None:
    """Log a scored run where ``--track`` asks, saying where."""
    if getattr(args, "track", None):
        from medtemporal.tracking import log_run

        run_id = log_run(run_dir, tracker=args.track, experiment=args.track_experiment)
        print(f"{run_dir}: logged to {args.track} (experiment {args.track_experiment}, run {run_id})")


def _names(text: str) -> tuple[str, ...]:
    """A comma-separated list of metric names."""
    return tuple(n.strip() for n in text.split(",") if n.strip())


def add_judge_arguments(p: argparse.ArgumentParser) -> None:
    """The LLM-judge options shared by ``score`` and ``run``."""
    g = p.add_argument_group("LLM judge (open answers)")
    g.add_argument("--judge", metavar="URI",
                   help="judge model for the judge metrics, e.g. openai:gpt-4o-mini or scripted-judge:overlap")
    g.add_argument("--judge-temperature", type=float, default=Judge.temperature, metavar="T",
                   help=f"judge sampling temperature (default {Judge.temperature:g})")
    g.add_argument("--judge-max-tokens", type=int, default=Judge.max_tokens, metavar="N",
                   help=f"most output tokens per judge call (default {Judge.max_tokens})")
    g.add_argument("--judge-concurrency", type=int, metavar="N",
                   help=f"judge calls in flight, at most {CONCURRENCY_MAX} (default: the backend's)")
    g.add_argument("--judge-attempts", type=int, default=Judge.attempts, metavar="N",
                   help=f"tries per judge call, the first included (default {Judge.attempts})")
    g.add_argument("--judge-timeout", type=float, default=Judge.timeout_s, metavar="SECONDS",
                   help=f"seconds per judge call to a remote endpoint (default {Judge.timeout_s:g})")
    if not any(a.dest == "allow_remote_data" for a in p._actions):
        g.add_argument("--allow-remote-data", action="store_true",
                       help="allow credentialed text to go to a non-local judge (check your data-use agreement)")
    if not any(a.dest == "no_cache" for a in p._actions):
        g.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
        g.add_argument("--cache", type=Path, metavar="FILE",
                       help="response cache file (default $MEDTEMPORAL_CACHE or ~/.cache/medtemporal)")


def judge_from_args(args: argparse.Namespace) -> tuple[Judge | None, dict[str, Any]]:
    """The judge and `judge_answers` options named by parsed arguments (None without ``--judge``)."""
    if not args.judge:
        return None, {}
    judge = Judge(args.judge, temperature=args.judge_temperature, max_tokens=args.judge_max_tokens,
                  concurrency=args.judge_concurrency, attempts=args.judge_attempts, timeout_s=args.judge_timeout)
    options = {"no_cache": args.no_cache, "cache_path": args.cache, "allow_remote_data": args.allow_remote_data,
               "progress": not getattr(args, "no_progress", False)}
    return judge, options


def run(args: argparse.Namespace) -> int:
    """Score each run, then print every task's metrics; exit status 1 when a run has no answer at all, or its judge
    failed calls or mostly cannot be read (`medtemporal.scoring.failures`; said in one sentence each)."""
    check_tracking(args)
    check_weights_offline(args.metrics)
    judge, options = judge_from_args(args)
    green = None
    if args.green:
        from medtemporal.scoring.clinical.green import green_judge

        green = green_judge(args.green, concurrency=args.green_concurrency, attempts=args.judge_attempts,
                            timeout_s=args.judge_timeout)
    green_options = {"no_cache": args.no_cache, "cache_path": args.cache, "allow_remote_data": args.allow_remote_data,
                     "progress": not getattr(args, "no_progress", False)}
    failures = []
    for path in args.runs:
        score_run(path, resamples=args.resamples, confidence=args.confidence, seed=args.seed, judge=judge,
                  judge_options=options, allow_rebuilt=args.allow_rebuilt_benchmark, metrics=args.metrics,
                  green=green, green_options=green_options)
        print(f"wrote {RunFolder(path).scores_file}")
        track(args, path)
        failures.append(scores_failure(RunFolder(path).scores(), path))
    print_scores(args.runs)
    for failure in filter(None, failures):
        print(f"medtemporal: error: {failure}", file=sys.stderr)
    return 1 if any(failures) else 0


def check_weights_offline(names: tuple[str, ...]) -> None:
    """Offline, refuse at once (before any run is scored again) when no metric of ``--metrics`` has its weights on
    disk: one sentence naming the variable that fixes it, instead of rescoring every run to compute nothing.

    Raises:
        UnavailableError: downloads are off and every named metric lacks a published model it loads.
    """
    from medtemporal import registry
    from medtemporal.hf_models import offline_variable

    named = [n for n in names if n != "all"]
    if not named or len(named) < len(names) or offline_variable() is None:
        return
    from medtemporal.scoring.clinical.weights import WEIGHTS

    reasons = []
    for name in named:
        try:
            for key in registry.lookup("metric", name).info.get("weights", ()):
                WEIGHTS[key].local()
        except UnavailableError as exc:
            reasons.append(f"{name}: {str(exc).rstrip('.')}")
        else:
            return
    raise UnavailableError(f"Nothing scored, the metrics asked for cannot be computed offline ({'; '.join(reasons)}).")


def print_scores(run_dirs: list[Path]) -> None:
    """Every metric of every task of the runs, in %, with intervals (and a summary across several runs)."""
    from medtemporal.report import load_runs  # the report brings the audit (scikit-learn): not for `run`
    from medtemporal.report.console import console_report

    print(console_report(load_runs(run_dirs)))
    told(MetricUnavailableWarning)  # the table named each unavailable metric with its reason
