"""The exceptions and warnings medtemporal raises.

Every error a user can cause is one of these, and its message is one
sentence naming the bad thing and how to fix it.
"""

from __future__ import annotations


class MedTemporalError(Exception):
    """Base class for every medtemporal error."""


class InvalidInputError(MedTemporalError, ValueError):
    """A file, column, value or argument the user supplied is wrong."""


class UnknownNameError(MedTemporalError, KeyError):
    """A registry name (benchmark, backend, protocol, metric) does not exist."""

    def __str__(self) -> str:  # KeyError quotes its message; we want plain text
        return str(self.args[0]) if self.args else ""


class MissingDependencyError(MedTemporalError, ImportError):
    """An optional package is needed; the message names the pip command."""


class BackendError(MedTemporalError, RuntimeError):
    """A model backend failed after its retries (server down, bad response)."""


class RunFailedError(MedTemporalError, RuntimeError):
    """A run or its scoring failed as a whole: every item failed, the run stopped early, or the judge's verdicts
    could mostly not be read. The message is one sentence naming the cause; ``run_dir`` is the run folder
    (what it holds is kept, and the same command resumes it)."""

    def __init__(self, message: str, run_dir: object = None) -> None:
        super().__init__(message)
        self.run_dir = run_dir


class UnavailableError(MedTemporalError, RuntimeError):
    """Model weights or data files a step needs are not on this machine and cannot be fetched now
    (offline, no connection, no such model); the message names the variable or command that fixes it."""


class UndefinedMetricWarning(UserWarning):
    """A metric is undefined for a subgroup (e.g. no items); a NaN is reported.

    ``subject`` names the group ("accuracy over subtype:x") and ``problem`` what is wrong with it, so
    that many such warnings can be told as one line per problem (`medtemporal.warning_summary`).
    """

    def __init__(self, message: str, subject: str = "", problem: str = "") -> None:
        super().__init__(message)
        self.subject = subject
        self.problem = problem


class ConflictingPredictionsWarning(UserWarning):
    """A file holds two answers to one question that differ; the last is used, and the user is told how many."""

    def __init__(self, message: str, subject: str = "", problem: str = "") -> None:
        super().__init__(message)
        self.subject = subject
        self.problem = problem


class MetricUnavailableWarning(UndefinedMetricWarning):
    """A metric cannot be computed at all (an encoder or data file is unavailable); it is reported as
    unavailable with the reason, and the other metrics are scored."""


def require(module: str, extra: str):
    """Import an optional module or raise `MissingDependencyError` naming the extra.

    >>> require("json", "core").__name__
    'json'
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"The optional package '{module}' is not installed; install it with "
            f"`pip install 'medtemporal[{extra}]'`."
        ) from exc
