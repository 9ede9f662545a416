"""TemMed-Bench's text rules: condition-change sentences, report normalisation, statements.

A *condition-change sentence* holds one of the paper's keywords (appendix A.1)
in any inflection: a word starting with the keyword's stem (the keyword less a
final ``e``: ``increas`` matches increase/increased/increasing), except
``thin``, which must be thin/thins/thinned/thinning/thinner (so that "thing"
and "think" do not count). A *target report* is an impression in which every
sentence is such a sentence. Nouns formed on a keyword's stem match with it
("progression", "improvement") and others do not ("resolution", "stability"):
the paper lists keywords "in any tense" (appendix A.1, ``seeds/001`` line 131),
not their nouns, and a substring search for its list ("unchange" is listed as
a stem) splits these words the same way; the release's selection code is not
published.

Image-pair statements are matched by ``(change keyword) … (pathology keyword)``
within a sentence: the first pathology after a change keyword with no other
change keyword between them and at most `MAX_GAP` words apart; a ``no``,
``not`` or ``without`` up to two words before the keyword is part of the
statement. Each statement gets a *direction*: ``worsened`` (increase, worsen,
progress, deteriorate, exacerbate), ``improved`` (decrease, improve, reduce,
resolve) or ``unchanged`` (stable, unchange, persist, and a negated
``change``); other statements (thicken, thin, a bare or negated directional
keyword) get none and are never used as targets or distractors.

>>> is_change_sentence("Interval worsening of the left effusion")
True
>>> normalize_report("STABLE  cardiomegaly.   no change in 1.5 cm nodule")
'Stable cardiomegaly. No change in 1.5 Cm nodule'
>>> [(s.text, s.direction) for s in find_statements("Improving mild cardiogenic edema.")]
[('improving mild cardiogenic edema', 'improved')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping

CHANGE_KEYWORDS: tuple[str, ...] = (
    "stable", "unchange", "change", "persist", "increase", "decrease", "improve", "worsen",
    "thicken", "thin", "progress", "deteriorate", "reduce", "resolve", "exacerbate",
)
"""The paper's condition-change keywords (appendix A.1), in its order."""

_EXACT = {"thin": r"thin(?:s|ned|ning|ner|nest)?\b"}


def _keyword_regex(keyword: str) -> str:
    if keyword in _EXACT:
        return _EXACT[keyword]
    stem = keyword[:-1] if keyword.endswith("e") else keyword
    return re.escape(stem) + r"[a-z]*"


CHANGE_RE = re.compile(r"\b(?:" + "|".join(f"(?P<{k}>{_keyword_regex(k)})" for k in CHANGE_KEYWORDS) + ")", re.I)
"""Matches a change keyword in any inflection; the group name is the keyword."""

DIRECTIONS: Mapping[str, str] = {
    "increase": "worsened", "worsen": "worsened", "progress": "worsened", "deteriorate": "worsened",
    "exacerbate": "worsened",
    "decrease": "improved", "improve": "improved", "reduce": "improved", "resolve": "improved",
    "stable": "unchanged", "unchange": "unchanged", "persist": "unchanged",
}
"""Change keyword → direction (``change`` only when negated: ``unchanged``)."""

PATHOLOGY_PATTERNS: Mapping[str, str] = {
    "atelectasis": r"atelecta(?:sis|ses|tic)",
    "cardiomegaly": r"cardiomegaly",
    "cardiomediastinum": r"cardiomediastin(?:um|al)",
    "consolidation": r"consolidations?|consolidative",
    "edema": r"o?edema",
    "effusion": r"effusions?",
    "fracture": r"fractures?",
    "lesion": r"lesions?",
    "opacity": r"opacit(?:y|ies)|opacification",
    "pneumonia": r"pneumonias?",
    "pneumothorax": r"pneumothora(?:x|ces)",
}
"""Default pathology keywords, from the CheXpert label vocabulary (the paper's Table 7 is
missing from our copy), with the inflections they match."""

Patterns = Mapping[str, re.Pattern[str]]
"""Pathology name → compiled pattern, as `pathology_patterns` returns them."""

MAX_GAP = 8
"""Most words allowed between a change keyword and its pathology."""

NEGATION = re.compile(r"\b(?:no|not|without)\s+(?:\w+\s+)?$", re.I)
_WORD = re.compile(r"[A-Za-z0-9]+")


def collapse(text: str) -> str:
    """Runs of whitespace as one space, stripped."""
    return re.sub(r"\s+", " ", text).strip()


def normalize_report(text: str) -> str:
    """The released report text: whitespace collapsed, lowercased, and the first letter
    after each ``.``/``!``/``?`` capitalised (so "1.5 cm" becomes "1.5 Cm", as released)."""

    def capitalise(piece: str) -> str:
        for i, ch in enumerate(piece):
            if ch.isalpha():
                return piece[:i] + ch.upper() + piece[i + 1 :]
        return piece

    return "".join(capitalise(p) for p in re.split(r"([.!?])", collapse(text).lower()))


def sentences(text: str) -> list[str]:
    """Sentences of ``text`` split on ``.!?``; fragments without a letter (list numbers) are dropped."""
    return [s.strip() for s in re.split(r"[.!?]", collapse(text)) if re.search(r"[A-Za-z]", s)]


def is_change_sentence(sentence: str) -> bool:
    """Whether ``sentence`` holds a condition-change keyword."""
    return CHANGE_RE.search(sentence) is not None


def is_target_report(impression: str) -> bool:
    """Whether the impression has sentences and every one is a condition-change sentence."""
    parts = sentences(impression)
    return bool(parts) and all(is_change_sentence(s) for s in parts)


def keyword_of(word: str) -> str | None:
    """The change keyword that ``word`` inflects, or None."""
    m = CHANGE_RE.match(word)
    return m.lastgroup if m and m.end() == len(word) else None


def pathology_patterns(keywords: Iterable[str] | None = None) -> dict[str, re.Pattern[str]]:
    """Compiled pathology patterns: the defaults, or ``keywords`` (a known name uses its default
    inflections; another word matches itself with an optional plural ``s``/``es``)."""
    names = list(PATHOLOGY_PATTERNS) if keywords is None else [k.strip().lower() for k in keywords if k.strip()]
    out = {}
    for name in names:
        body = PATHOLOGY_PATTERNS.get(name, re.escape(name) + r"(?:s|es)?")
        out[name] = re.compile(rf"\b(?:{body})\b", re.I)
    return out


@dataclass(frozen=True)
class Statement:
    """A ``(change keyword) … (pathology)`` span of one report sentence."""

    text: str
    """The span, lowercased (with a preceding negation)."""
    keyword: str
    pathology: str
    direction: str | None
    sentence: int
    """Index of the sentence in the report."""


def find_statements(report: str, patterns: Patterns | None = None) -> list[Statement]:
    """Every ``(change keyword) … (pathology)`` statement of ``report``, in reading order."""
    patterns = pathology_patterns() if patterns is None else patterns
    out = []
    for index, sentence in enumerate(sentences(report)):
        changes = list(CHANGE_RE.finditer(sentence))
        for n, m in enumerate(changes):
            stop = changes[n + 1].start() if n + 1 < len(changes) else len(sentence)
            hits = [(p.search(sentence, m.end(), stop), name) for name, p in patterns.items()]
            hits = [(h, name) for h, name in hits if h is not None]
            if not hits:
                continue
            hit, name = min(hits, key=lambda x: (x[0].start(), -x[0].end()))
            if len(_WORD.findall(sentence[m.end() : hit.start()])) > MAX_GAP:
                continue
            negation = NEGATION.search(sentence, 0, m.start())
            start = negation.start() if negation else m.start()
            keyword = m.lastgroup or ""
            out.append(Statement(sentence[start : hit.end()].lower(), keyword, name,
                                 direction_of(keyword, negation is not None), index))
    return out


def direction_of(keyword: str, negated: bool) -> str | None:
    """The direction of a change keyword (negated: preceded by no/not/without), None when it has none."""
    if keyword == "change":
        return "unchanged" if negated else None
    if negated:
        return None
    return DIRECTIONS.get(keyword)
