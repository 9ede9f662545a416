"""Experiment tracking: a scored run's config, scores and report logged to MLflow when asked (``--track mlflow``).

One MLflow run per medtemporal run folder, in the experiment ``medtemporal`` (``--track-experiment NAME``),
named by the run's display name:

- parameters: the run's settings from ``config.json`` (benchmark, model, protocol and its options, generation
  settings, selection, versions), flattened to dotted keys;
- metrics: every computed score as ``<group>/<metric>`` (``overall/accuracy``, ``task:TEL/accuracy``), with its
  interval as ``…_ci_low`` and ``…_ci_high``, as fractions, as ``scores.json`` holds them;
- artifacts: ``config.json`` and ``scores.json``, and the report (HTML with its assets, Markdown, CSV) under
  ``report/``;
- tags: the run folder and the medtemporal version.

Where it goes is MLflow's own setting, ``MLFLOW_TRACKING_URI``: unset, MLflow's default local database
(``sqlite:///mlflow.db`` in the current folder, artifacts in ``./mlruns``); ``sqlite:///PATH/mlflow.db`` for
another one; ``http://HOST:PORT`` for a tracking server. ``pip install 'medtemporal[tracking]'`` installs
mlflow-skinny and what its database store needs (SQLAlchemy, Alembic). MLflow 3 refuses the old file store
(``./mlruns``, ``file:``) unless ``MLFLOW_ALLOW_FILE_STORE=true``; `log_run` says so in one sentence.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

from medtemporal.errors import InvalidInputError, require
from medtemporal.runs import RunFolder
from medtemporal.schema import Score

TRACKERS = ("mlflow",)
"""The tracking backends ``--track`` takes."""
DATABASES = ("sqlite", "postgresql", "mysql", "mssql")
"""Tracking-URI schemes of MLflow's database store, which needs SQLAlchemy and Alembic."""
MAX_PARAM = 500
"""Longest parameter value logged (longer ones are cut, with an ellipsis)."""


def flatten(value: Any, prefix: str = "") -> dict[str, str]:
    """A nested mapping as dotted keys with text values (lists as JSON).

    >>> flatten({"model": {"uri": "baseline:random"}, "tasks": ["TEL"], "limit": None})
    {'model.uri': 'baseline:random', 'tasks': '["TEL"]', 'limit': 'None'}
    """
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for key, inner in value.items():
            out.update(flatten(inner, f"{prefix}.{key}" if prefix else str(key)))
        return out
    text = json.dumps(value) if isinstance(value, (list, tuple)) else str(value)
    return {prefix: text if len(text) <= MAX_PARAM else text[: MAX_PARAM - 1] + "…"}


PARAMS = ("name", "benchmark", "model", "protocol", "generation", "tasks", "limit", "limit_per_task", "limit_rule",
          "repeats", "allow_remote_data", "medtemporal_version", "git_revision")
"""The parts of ``config.json`` logged as parameters (package versions and timestamps are in the artifact)."""


def metrics_of(scores: list[Score]) -> dict[str, float]:
    """``<group>/<metric>`` → value, and its ``_ci_low`` and ``_ci_high``, of every computed score."""
    out = {}
    for s in scores:
        if s.unavailable or math.isnan(s.value):
            continue
        key = f"{s.group}/{s.metric}"
        out[key] = float(s.value)
        for bound in ("ci_low", "ci_high"):
            if getattr(s, bound) is not None:
                out[f"{key}_{bound}"] = float(getattr(s, bound))
    return out


def log_run(run_dir: str | Path, *, tracker: str = "mlflow", experiment: str = "medtemporal") -> str:
    """Log a scored run folder's config, scores and report to ``tracker``; returns the tracker's run id.

    Raises:
        InvalidInputError: an unknown tracker, a run not scored yet, or a tracking store that refuses the run
            (one sentence naming ``MLFLOW_TRACKING_URI``).
        MissingDependencyError: MLflow is not installed.
    """
    if tracker not in TRACKERS:
        raise InvalidInputError(f"Unknown tracker {tracker!r}; --track takes {', '.join(TRACKERS)}.")
    folder = RunFolder(run_dir)
    config = folder.config().model_dump(mode="json")
    scores = folder.scores()
    mlflow = require("mlflow", "tracking")
    uri = str(mlflow.get_tracking_uri())
    if uri.split(":", 1)[0].split("+", 1)[0] in DATABASES:
        require("sqlalchemy", "tracking")
        require("alembic", "tracking")
    from medtemporal.report import write_report  # the report's imports only when tracking

    params = {k: v for part in PARAMS if part in config for k, v in flatten(config[part], part).items()}
    try:
        mlflow.set_experiment(experiment)
        with mlflow.start_run(run_name=str(config.get("name") or (config.get("model") or {}).get("uri") or "run"),
                              tags={"medtemporal.run_dir": str(folder.path.resolve()),
                                    "medtemporal.version": str(config.get("medtemporal_version"))}) as active:
            mlflow.log_params(params)
            mlflow.log_metrics(metrics_of(scores.scores))
            mlflow.log_artifact(str(folder.config_file))
            mlflow.log_artifact(str(folder.scores_file))
            with tempfile.TemporaryDirectory(prefix="medtemporal-track-") as tmp:
                write_report([folder.path], tmp, ("html", "md", "csv"))
                mlflow.log_artifacts(tmp, "report")
            return str(active.info.run_id)
    except mlflow.MlflowException as exc:
        raise InvalidInputError(refusal(str(exc), uri, folder.path)) from None


def refusal(message: str, uri: str, run_dir: Path) -> str:
    """One sentence for a tracking store that refused to log ``run_dir``: MLflow 3's refusal of a file store says how
    to move to a database or keep the file store; any other names the store and its first line.

    >>> refusal("... is in maintenance mode ... set `MLFLOW_ALLOW_FILE_STORE=true` to opt out ...", "file:///r/mlruns",
    ...         Path("run"))  # doctest: +ELLIPSIS
    'MLflow no longer writes to the file store file:///r/mlruns ...; set MLFLOW_TRACKING_URI=sqlite:///PATH/mlflow.db...'
    """
    if "MLFLOW_ALLOW_FILE_STORE" in message:
        return (f"MLflow no longer writes to the file store {uri} (it keeps it in maintenance mode); set "
                "MLFLOW_TRACKING_URI=sqlite:///PATH/mlflow.db for a local database (or unset it for "
                "sqlite:///mlflow.db in the current folder), or MLFLOW_ALLOW_FILE_STORE=true to keep the file store.")
    first = (message.strip().splitlines() or ["no reason given"])[0]
    return (f"MLflow's store {uri} refused to log {run_dir} ({first[:300]}); set MLFLOW_TRACKING_URI to a tracking "
            "server (http://HOST:PORT) or a local database (sqlite:///PATH/mlflow.db).")
