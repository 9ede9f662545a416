"""The wording of MI-CXR items: question templates, option texts and null options.

TEL wording follows the released file (``micxr_test.jsonl``) where it shows a
qtype, and the paper's figures 10, 11, 18 and 19 otherwise:

* ``single_emergence`` — "During which interval does sub-diaphragmatic air new
  appearance occur?" / "There is no new appearance of sub-diaphragmatic air"
  (released file); resolution and the first/second forms follow the same
  pattern with "disappearance" and "first"/"second" (figures 10, 18);
* ``resolution_to_emergence`` — released file; ``emergence_to_resolution`` —
  figure 11 (question) and figure 19 (null option);
* GTS single — released file ("Which statement best describes the
  interval-based temporal changes of atelectasis across the study sequence?",
  "None of them are true."); GTS multi — figure 14; ICR — figure 12; ICR
  variant — figure 15.

Summaries and statements are generated from change types by templates whose
phrases are mutually exclusive, so a statement is true exactly when its change
types equal the annotated ones: "improves"/"worsens" always mean the
abnormality is present at both visits, "resolves" and "newly appears" mean its
presence changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from medtemporal.benchmarks.mi_cxr.windows import (
    ABSENT,
    EMERGENCE,
    IMPROVEMENT,
    PERSISTENT,
    RESOLUTION,
    UNCHANGED,
    WORSENING,
    Track,
)


@dataclass
class Draft:
    """The text of one item before it becomes an `Item`: question, options A–E, answer, meta."""

    question: str
    options: dict[str, str]
    answer: str
    meta: dict[str, Any] = field(default_factory=dict)


LETTERS = ("A", "B", "C", "D")
"""Letters of the four substantive options; E (`balance.NULL_LETTER`) is always the null option."""
ARROW = "\u2192"
INTERVALS = tuple(f"T{i} {ARROW} T{i + 1}" for i in range(1, 5))
"""``T1 → T2`` … ``T4 → T5``: the interval options of TEL, in order A–D."""

TEL: dict[str, tuple[str, str]] = {
    "single_emergence": (
        "During which interval does {e} new appearance occur?",
        "There is no new appearance of {e}",
    ),
    "single_resolution": (
        "During which interval does {e} disappearance occur?",
        "There is no disappearance of {e}",
    ),
    "multiple_emergence_1": (
        "During which interval does {e} first new appearance occur?",
        "There is no new appearance of {e}",
    ),
    "multiple_emergence_2": (
        "During which interval does {e} second new appearance occur?",
        "There is no second new appearance of {e}",
    ),
    "multiple_resolution_1": (
        "During which interval does {e} first disappearance occur?",
        "There is no disappearance of {e}",
    ),
    "multiple_resolution_2": (
        "During which interval does {e} second disappearance occur?",
        "There is no second disappearance of {e}",
    ),
    "emergence_to_resolution": (
        "Which pair of studies correctly captures the interval during which {e} first appears and "
        "subsequently resolves?",
        "There is no sequential emergence to resolution",
    ),
    "resolution_to_emergence": (
        "Which pair of studies shows that {e} first disappears and then reappears after a period of absence?",
        "There is no sequential resolution to emergence observed",
    ),
}
"""TEL qtype → (question, null option) with ``{e}`` the abnormality."""

GTS_SINGLE_QUESTION = "Which statement best describes the interval-based temporal changes of {e} across the study sequence?"
GTS_MULTI_QUESTION = "Which statement correctly describes the interval-based trajectory of abnormality across the study sequence?"
GTS_NULL = "None of them are true."
ICR_QUESTION = "Which statement correctly describes the interval changes?"
ICR_NULL = "None of the statements are true."
ICRV_QUESTION = "Between image T{a} and T{b}, which statements correctly describe the interval change?"
ICRV_NULL = "None of them are true."

_TRAJECTORY: dict[str, tuple[str, str]] = {
    EMERGENCE: ("newly appears", "newly appears"),
    RESOLUTION: ("resolves", "resolves"),
    WORSENING: ("worsens", "progressively worsens"),
    IMPROVEMENT: ("improves but persists", "progressively improves but persists"),
    UNCHANGED: ("persists unchanged", "persists unchanged"),
    ABSENT: ("remains absent", "remains absent"),
    PERSISTENT: ("persists", "persists"),
}
"""Change type → (verb phrase over one interval, over a run of intervals)."""

_STATEMENT: dict[str, str] = {
    EMERGENCE: "has newly appeared",
    RESOLUTION: "has resolved",
    WORSENING: "has worsened",
    IMPROVEMENT: "has improved but persists",
}
"""Directional change type → ICR statement predicate."""

_VARIANT: dict[str, str] = {
    EMERGENCE: "is newly developed on this study",
    RESOLUTION: "has resolved",
    WORSENING: "was already present and has markedly worsened",
    IMPROVEMENT: "has markedly improved but is still present",
}
"""Directional change type → ICR-variant statement predicate (figure 16's four categories)."""


def describe(track: Track) -> str:
    """The abnormality as options name it: laterality (when annotated) and entity."""
    return f"{track.laterality} {track.entity}" if track.laterality else track.entity


def span(first: int, last: int) -> str:
    """Words for intervals ``first..last`` (0-based): 'between T1 and T2' or 'from T1 through T3'."""
    if first == last:
        return f"between T{first + 1} and T{first + 2}"
    return f"from T{first + 1} through T{last + 2}"


def trajectory(desc: str, changes: Sequence[str]) -> str:
    """One sentence summarising an abnormality's change types over the four intervals.

    Runs of equal change types are merged; at most one semicolon.

    >>> trajectory("left pleural effusion", ["emergence", "worsening", "worsening", "resolution"])
    'Between T1 and T2, the left pleural effusion newly appears; then from T2 through T4 it progressively worsens, and between T4 and T5 it resolves.'
    >>> trajectory("pneumothorax", ["absent"] * 4)
    'From T1 through T5, the pneumothorax remains absent.'
    """
    runs: list[tuple[int, int, str]] = []
    for i, change in enumerate(changes):
        if runs and runs[-1][2] == change:
            runs[-1] = (runs[-1][0], i, change)
        else:
            runs.append((i, i, change))

    def phrase(run: tuple[int, int, str]) -> str:
        single, many = _TRAJECTORY[run[2]]
        return single if run[0] == run[1] else many

    head = f"{span(runs[0][0], runs[0][1])}, the {desc} {phrase(runs[0])}"
    head = head[0].upper() + head[1:]
    tail = [f"{span(a, b)} it {phrase((a, b, c))}" for a, b, c in runs[1:]]
    if not tail:
        return head + "."
    if len(tail) == 1:
        return f"{head}; then {tail[0]}."
    return f"{head}; then {', '.join(tail[:-1])}, and {tail[-1]}."


def statement(desc: str, interval: int, change: str) -> str:
    """An ICR statement: 'Between T2 and T3, the pleural effusion has worsened.'"""
    return f"Between T{interval + 1} and T{interval + 2}, the {desc} {_STATEMENT[change]}."


def variant_statement(desc: str, change: str) -> str:
    """An ICR-variant statement: 'The right pleural effusion has resolved.'"""
    return f"The {desc} {_VARIANT[change]}."


def pair(a: int, b: int) -> str:
    """A pair option as the released file writes it: ``T2, T4`` (1-based visits)."""
    return f"T{a}, T{b}"
