"""Reading a model's stage-1 interval descriptions (appendix E.2): which text is about which interval, and
which kind of change it names. Used by the analyses and by the scripted error judge."""

from __future__ import annotations

import re

CHANGE_WORDS = {
    "emergence": r"\bnew(ly)?\b|\bappear|\bemerg|\bdevelop",
    "resolution": r"\bresol|\bdisappear|\bclear(ed|s)?\b|\bno longer\b",
    "worsening": r"\bworse|\bincreas|\bprogress|\benlarg",
    "improvement": r"\bimprov|\bdecreas|\bsmaller\b|\breduc",
    "unchanged": r"\bunchanged\b|\bstable\b|\bno (interval )?change\b|\bpersist|\bremains? absent\b",
}
"""Words of a stage-1 description that name a kind of change (matched case-insensitively)."""
SAME = {"absent": "unchanged", "persistent": "unchanged"}
"""Annotated changes that a description names with another kind ("remains absent" is no change)."""


def interval_texts(text: str, n: int = 5) -> list[str | None]:
    """The text about each consecutive interval (``T1 → T2``, ``T1-T2``, ``T1 to T2``, ``between T1 and T2``)."""
    marks = []
    for i in range(1, n):
        pattern = rf"T{i}\s*(→|->|–|-|to|and)\s*T{i + 1}\b"
        match = re.search(pattern, text)
        marks.append(match.start() if match else None)
    found = sorted(m for m in marks if m is not None)
    out: list[str | None] = []
    for m in marks:
        if m is None:
            out.append(None)
            continue
        end = next((x for x in found if x > m), len(text))
        out.append(text[m:end])
    return out
