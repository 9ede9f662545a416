"""Temporal Entity F1 (Libra, ACL Findings 2025): do two reports name the same temporal change words?

Exactly as Libra's released scorer defines it (X-iZhang/Libra@0d6c56a:libra/eval/temporal_f1.py, Apache-2.0):

1. each text is cleaned as Libra's ``clean_text`` (:15-36): newlines, underscores and dashes become spaces,
   three placeholder patterns go, characters other than word characters, spaces and ``.,:;()-`` go,
   runs of spaces collapse;
2. its entities are the *set* of `KEYWORDS` (:6-13) found as whole words (``\\b…\\b``) in the lowercased text:
   no stemming, counts and the findings they modify ignored (:38-56);
3. per sample (:79-101): reference without entities → 1.0 when the output has none either, else ε;
   otherwise P = (TP+ε)/(|out|+ε), R = (TP+ε)/(|ref|+ε), F1 = 2PR/(P+R+ε), with ε = 1e-10;
4. the score is the mean of the per-sample F1 (:133).

An empty or invalid answer: Libra's formula gives it 1.0 where the reference names no change (step 3), more than
any answer that names a change there. So the headline ``temporal_entity_f1`` scores an empty answer 0 (the rule
every report metric follows: docs/report-metrics.md), and ``temporal_entity_f1_libra`` is Libra's formula as
released, shown beside it; the two differ only on empty answers.

RadEval's ``temporal`` metric differs: it also unions Stanza radiology-NER entities (FACTS §6.1); this one is
Libra's, which its README numbers (Temporal_entity_score) come from.

>>> round(temporal_entity_f1_one("Stable cardiomegaly, new effusion.", "Effusion is new; heart unchanged."), 4)
0.5
>>> temporal_entity_f1_one("Lungs are clear.", ""), temporal_entity_f1_one("Lungs are clear.", "", empty=0.0)
(1.0, 0.0)
>>> sorted(temporal_entities("Worsening, NEW and re-expanded (expanded) lungs; stably"))
['expanded', 'new', 'stably', 'worsening']
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from medtemporal.registry import register
from medtemporal.schema import Item
from medtemporal.scoring.clinical.texts import report_pairs
from medtemporal.scoring.metrics import Answer

KEYWORDS = frozenset({
    "bigger", "change", "cleared", "constant", "decrease", "decreased", "decreasing", "elevated", "elevation",
    "enlarged", "enlargement", "enlarging", "expanded", "greater", "growing", "improved", "improvement",
    "improving", "increase", "increased", "increasing", "larger", "new", "persistence", "persistent",
    "persisting", "progression", "progressive", "reduced", "removal", "resolution", "resolved", "resolving",
    "smaller", "stability", "stable", "stably", "unchanged", "unfolded", "worse", "worsen", "worsened",
    "worsening", "unaltered",
})
"""Libra's 44 temporal keywords (libra/eval/temporal_f1.py:6-13)."""
EPSILON = 1e-10
"""Libra's ε (``calculate_tem_score(..., epsilon=1e-10)``)."""

_CLEAN = (
    (re.compile(r"\n+"), " "),
    (re.compile(r"[_-]+"), " "),
    (re.compile(r"\(___, __, __\)"), ""),
    (re.compile(r"---, ---, ---"), ""),
    (re.compile(r"\(__, __, ___\)"), ""),
    (re.compile(r"[_-]+"), " "),
    (re.compile(r"[^\w\s.,:;()-]"), ""),
    (re.compile(r"\s{2,}"), " "),
)
"""Libra's ``clean_text`` steps in order (temporal_f1.py:27-35, and radiology_report.py:21-33 for its other
metrics); the last one is followed by ``strip``."""
_WORDS = re.compile(r"\b(" + "|".join(re.escape(w) for w in sorted(KEYWORDS)) + r")\b")


def libra_clean(text: str) -> str:
    """``text`` as Libra's scorers clean it (``clean_text``; radiology_report.py lowercases before it).

    >>> libra_clean("Heart: normal -- no ___ effusion!\\n")
    'Heart: normal no effusion'
    """
    for pattern, replacement in _CLEAN:
        text = pattern.sub(replacement, text)
    return text.strip()


def temporal_entities(text: str) -> set[str]:
    """The set of `KEYWORDS` that ``text`` names as whole words, after Libra's cleaning."""
    return {m.group().lower() for m in _WORDS.finditer(libra_clean(text).lower())}


def temporal_spans(text: str) -> list[tuple[int, int, str]]:
    """Where `KEYWORDS` occur as whole words in ``text`` itself: ``(start, end, keyword)`` for highlighting.

    Offsets are into ``text`` as given, so only Libra's length-keeping cleaning steps apply (newlines, dashes
    and underscores count as spaces); a keyword that only its deletions would join (``im*proved``) is not
    marked, though `temporal_entities` counts it.

    >>> temporal_spans("New effusion; stable heart, re-expanded lung.")
    [(0, 3, 'new'), (14, 20, 'stable'), (31, 39, 'expanded')]
    """
    spaced = re.sub(r"[\n_-]", " ", text).lower()
    return [(m.start(), m.end(), m.group()) for m in _WORDS.finditer(spaced)]


def temporal_entity_f1_one(reference: str, output: str, epsilon: float = EPSILON, empty: float | None = None) -> float:
    """Libra's per-sample Temporal Entity F1 of ``output`` against ``reference`` (see the module doc); ``empty``,
    when given, is the score of an empty output instead of Libra's."""
    if empty is not None and not output.strip():
        return empty
    ref, out = temporal_entities(reference), temporal_entities(output)
    if not ref:
        return 1.0 if not out else epsilon
    tp = len(ref & out)
    precision = (tp + epsilon) / (len(out) + epsilon)
    recall = (tp + epsilon) / (len(ref) + epsilon)
    return 2 * precision * recall / (precision + recall + epsilon)


_INFO = dict(higher_is_better=True, aggregation="mean", percent=True, needs="nothing (44 keywords; CPU, instant)",
             source="Libra libra/eval/temporal_f1.py")


@register("metric", "temporal_entity_f1", **_INFO, settings=lambda: {"empty_answer": 0.0},
          description="Temporal Entity F1 (Libra's formula): F1 of the sets of 44 temporal keywords in output and "
                      "reference; an empty or invalid answer scores 0")
def temporal_entity_f1(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample Temporal Entity F1 against ``item.reference``, an empty or missing answer 0 (the module doc)."""
    refs, outs = report_pairs(items, answers)
    return np.fromiter((temporal_entity_f1_one(r, o, empty=0.0) for r, o in zip(refs, outs)), float, len(refs))


@register("metric", "temporal_entity_f1_libra", **_INFO, settings=lambda: {"empty_answer": "Libra's formula"},
          description="Temporal Entity F1 exactly as Libra releases it: an empty answer scores 1.0 where the "
                      "reference names no change (reference value, beside the headline)")
def temporal_entity_f1_libra(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample Temporal Entity F1 by Libra's formula, an empty or missing answer as an empty report."""
    refs, outs = report_pairs(items, answers)
    return np.fromiter((temporal_entity_f1_one(r, o) for r, o in zip(refs, outs)), float, len(refs))
