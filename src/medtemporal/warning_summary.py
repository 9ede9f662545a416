"""medtemporal's warnings collected while a command runs and told once at its end, one line per kind.

Scoring warns per group and metric (`UndefinedMetricWarning`: "accuracy over subtype:x covers a
single patient…"), so one run can raise dozens of warnings that would cut through a progress bar.
`collect_warnings` keeps them instead; `WarningSummary.text` gives one line per kind, with how many
scores it concerns and a few of them:

    medtemporal: note: 24 scores over a single patient: no clustered confidence interval (accuracy over subtype:a, …)
    medtemporal: note: 2 scores over no items: NaN (accuracy over subtype:c, accuracy over subtype:d)

A kind that the command has already told in its own output (the reasons a metric is unavailable, which the
score table names) is dropped from the summary with `told`. Other packages' warnings pass through as Python
shows them, without the source line that raised them.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from medtemporal.errors import UndefinedMetricWarning

EXAMPLES = 3
"""Subjects named per kind before "…"."""


@dataclass
class WarningSummary:
    """Kind → the subjects (groups, runs) it was raised for, in order of arrival."""

    kinds: dict[str, list[str]] = field(default_factory=dict)
    categories: dict[str, type[Warning]] = field(default_factory=dict)

    def add(self, message: Warning | str, category: type[Warning] = UserWarning) -> None:
        """Count one warning under its kind (`UndefinedMetricWarning.problem`, else its text)."""
        problem = getattr(message, "problem", "") or str(message)
        self.kinds.setdefault(problem, []).append(getattr(message, "subject", ""))
        self.categories.setdefault(problem, category)

    def drop(self, category: type[Warning]) -> None:
        """Forget the warnings of ``category`` (and its subclasses): the command has told them itself."""
        for problem in [p for p, c in self.categories.items() if issubclass(c, category)]:
            del self.kinds[problem], self.categories[problem]

    def text(self, prefix: str = "medtemporal: ") -> str:
        """The summary, one line per kind (empty when nothing was collected)."""
        lines = []
        for problem, subjects in sorted(self.kinds.items(), key=lambda kv: -len(kv[1])):
            named = list(dict.fromkeys(s for s in subjects if s))
            shown = ", ".join(named[:EXAMPLES]) + (", …" if len(named) > EXAMPLES else "")
            if named:
                n = len(named)
                lines.append(f"{prefix}note: {n} score{'s' if n > 1 else ''} {problem} ({shown})")
            else:
                lines.append(f"{prefix}warning: {problem}" + (f" ({len(subjects)} ×)" if len(subjects) > 1 else ""))
        return "\n".join(lines)


_ACTIVE: ContextVar[WarningSummary | None] = ContextVar("warning_summary", default=None)


def told(category: type[Warning]) -> None:
    """Drop ``category`` from the summary of the command running now (its output has just said them)."""
    summary = _ACTIVE.get()
    if summary is not None:
        summary.drop(category)


@contextmanager
def collect_warnings() -> Iterator[WarningSummary]:
    """Gather medtemporal's warnings raised inside the block into a summary (every `UndefinedMetricWarning`,
    not once per place); the warnings of other packages are shown as usual, less their source line."""
    summary = WarningSummary()
    token = _ACTIVE.set(summary)
    with warnings.catch_warnings():
        shown = warnings.showwarning
        warnings.simplefilter("always", UndefinedMetricWarning)

        def keep(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001 (the stdlib's)
            if category.__module__.split(".")[0] == "medtemporal":
                summary.add(message, category)
            else:  # without the library's source line, which says nothing to a user
                shown(message, category, filename, lineno, file, "")

        warnings.showwarning = keep
        try:
            yield summary
        finally:
            _ACTIVE.reset(token)
