"""The report's glossary: the tasks and subtypes its runs hold, each named as the paper names it.

Entries come from each family's `BenchmarkSpec.glossary` (name or fnmatch pattern → text); a name the family
does not explain is listed without text, so every column label of the tables is at least listed. Tasks come
first, then subtypes, each in natural order (``task5_b`` … ``task5_h``, ``multiple_emergence_1`` before ``_2``).
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Sequence

from medtemporal.contract import spec
from medtemporal.errors import UnknownNameError
from medtemporal.report.tables import ReportRun, markdown_table
from medtemporal.report.escaping import html_text


def natural(text: str) -> tuple[object, ...]:
    """A sort key that orders the numbers inside names by value.

    >>> sorted(["task10", "task9", "b_2", "b_10"], key=natural)
    ['b_2', 'b_10', 'task9', 'task10']
    """
    return tuple(int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", text))


def _explain(glossary: dict[str, str], name: str) -> str:
    if name in glossary:
        return glossary[name]
    return next((text for pattern, text in glossary.items() if fnmatchcase(name, pattern)), "")


def glossary_rows(runs: Sequence[ReportRun]) -> list[tuple[str, str, str]]:
    """(kind, name, what it is) of every task, then every subtype, of the runs, each once, naturally sorted."""
    tasks: dict[str, str] = {}
    subtypes: dict[str, str] = {}
    for run in runs:
        try:
            glossary = dict(spec(str(run.scores.run.benchmark)).glossary)
        except UnknownNameError:  # a plugin family no longer installed: its names without text
            glossary = {}
        for task in run.scores.layout:
            tasks.setdefault(task.task, _explain(glossary, task.task))
            for subtype in task.subtypes:
                if subtype != task.task:
                    subtypes.setdefault(subtype, _explain(glossary, subtype))
    return ([("task", n, tasks[n]) for n in sorted(tasks, key=natural)]
            + [("subtype", n, subtypes[n]) for n in sorted(subtypes, key=natural)])


def glossary_markdown(runs: Sequence[ReportRun]) -> str:
    """The glossary as a Markdown section (empty when the runs hold no task)."""
    rows = glossary_rows(runs)
    if not rows:
        return ""
    return "## Glossary\n\n" + markdown_table(["Name", "Kind", "What it is"], [[n, k, t] for k, n, t in rows]) + "\n"


def glossary_html(runs: Sequence[ReportRun]) -> str:
    """The glossary as an HTML section: a scrolling two-column table whose text wraps."""
    rows = glossary_rows(runs)
    if not rows:
        return ""
    body = "".join(f'<tr><td>{html_text(n)}</td><td class="wrap">{html_text(t or "–")}'
                   f'{" <em>(subtype)</em>" if k == "subtype" and t else ""}</td></tr>' for k, n, t in rows)
    return ('<h2 id="glossary">Glossary: tasks and subtypes</h2><div class="scroll"><table class="glossary"><thead>'
            f"<tr><th>Name</th><th>What it is</th></tr></thead><tbody>{body}</tbody></table></div>")
