"""medtemporal's warnings collected while a command runs and told once at its end, grouped by kind.

Scoring warns per group and metric (`UndefinedMetricWarning`: "accuracy over subtype:x covers a
single patient…"), so one run can raise dozens of lines that would cut through a progress bar.
`collect_warnings` keeps them instead; `WarningSummary.text` says how many of each kind there
were, with a few of the groups they concern:

    medtemporal: 26 warnings
      24 × covers a single patient, so it has no clustered confidence interval (accuracy over subtype:a, …)
      2 × no items, so its score is NaN (accuracy over subtype:c, accuracy over subtype:d)

Other packages' warnings pass through as Python shows them, without the source line that raised them.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from medtemporal.errors import UndefinedMetricWarning

EXAMPLES = 3
"""Subjects named per kind before "…"."""


@dataclass
class WarningSummary:
    """Kind → the subjects (groups, runs) it was raised for, in order of arrival."""

    kinds: dict[str, list[str]] = field(default_factory=dict)

    def add(self, message: Warning | str) -> None:
        """Count one warning under its kind (`UndefinedMetricWarning.problem`, else its text)."""
        problem = getattr(message, "problem", "") or str(message)
        self.kinds.setdefault(problem, []).append(getattr(message, "subject", ""))

    def text(self, prefix: str = "medtemporal: ") -> str:
        """The summary (empty when nothing was collected)."""
        total = sum(len(s) for s in self.kinds.values())
        if not total:
            return ""
        lines = [f"{prefix}{total} warning{'s' if total > 1 else ''}"]
        for problem, subjects in sorted(self.kinds.items(), key=lambda kv: -len(kv[1])):
            named = list(dict.fromkeys(s for s in subjects if s))
            shown = ", ".join(named[:EXAMPLES]) + (", …" if len(named) > EXAMPLES else "")
            lines.append(f"  {len(subjects)} × {problem}" + (f" ({shown})" if shown else ""))
        return "\n".join(lines)


@contextmanager
def collect_warnings() -> Iterator[WarningSummary]:
    """Gather medtemporal's warnings raised inside the block into a summary (every `UndefinedMetricWarning`,
    not once per place); the warnings of other packages are shown as usual, less their source line."""
    summary = WarningSummary()
    with warnings.catch_warnings():
        shown = warnings.showwarning
        warnings.simplefilter("always", UndefinedMetricWarning)

        def keep(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001 (the stdlib's)
            if category.__module__.split(".")[0] == "medtemporal":
                summary.add(message)
            else:  # without the library's source line, which says nothing to a user
                shown(message, category, filename, lineno, file, "")

        warnings.showwarning = keep
        yield summary
