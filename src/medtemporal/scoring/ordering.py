"""Ordering answers: the extraction rule ``ordering`` and the metric ``pairwise_accuracy``.

An ``ordering`` item asks for its identifiers (the keys of ``item.options``,
in the order shown) in the right order; ``item.answer`` is that order. An
extracted answer is *valid* only when every identifier appears exactly once
(ClinicalSkillQA §2.1: "missing, duplicated, or invalid identifiers are
regarded as invalid outputs"); anything else is invalid (None), scored 0 and
counted in its own column. Exact-order accuracy is the shared ``accuracy``
metric (its chance level is 1/n!).

>>> from medtemporal.schema import Item
>>> item = Item.create(benchmark="x", task="ordering", subtype="s", images=[], question="?",
...     options={k: f"Frame {k}" for k in "ABCD"}, answer_type="ordering", answer=list("DBAC"))
>>> split_ordering(item, 'Order: D → B → A → C. Frame D shows the closed device.').order
['D', 'B', 'A', 'C']
>>> split_ordering(item, '{"order": ["D","B","A","C"], "explanation": "Pads go on first."}').rationale
'Pads go on first.'
>>> ordering(item, "D, B, A, D") is None
True
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from medtemporal.registry import register
from medtemporal.schema import Item
from medtemporal.scoring.extraction import normalise
from medtemporal.scoring.metrics import Answer

ORDER_KEYS = ("order", "ordering", "final_order", "predicted_order", "temporal_order", "sequence", "answer", "frames")
"""Keys of a JSON answer that hold the order, in the order they are looked for."""
RATIONALE_KEYS = ("explanation", "rationale", "reasoning", "reason", "justification")
"""Keys of a JSON answer that hold the rationale."""

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_SEP = r"(?:[ \t]*(?:,|;|→|->|=>|⇒|>|–|—|-|\bthen\b|\band\b|&)[ \t]*|[ \t]+)"
_LABEL = re.compile(
    r"(?:\b(?:final|predicted|correct|proposed|temporal|chronological|my)\s+)?"
    r"\b(?:order(?:ing)?|sequence|answer)\b(?:\s+of\s+(?:the\s+)?frames)?"
    r"\s*(?:(?:is|should\s+be|would\s+be|will\s+be)\s*:?|:|=)\s*",
    re.I,
)
_FINAL = re.compile(r"\bfinal\b", re.I)


@dataclass(frozen=True)
class OrderingParse:
    """What an output says: the order (None: invalid), its rationale, the rule tier that decided, and the
    identifiers the deciding statement lists even when they are not a valid order (None: it names none)."""

    order: list[str] | None
    rationale: str
    tier: str | None
    tokens: list[str] | None = None


def identifiers(item: Item) -> list[str]:
    """The identifiers of an ordering item in the order shown (the keys of ``item.options``)."""
    return list(item.options) if item.options else sorted(map(str, item.answer))


@lru_cache(maxsize=256)
def _token(ids: tuple[str, ...]) -> re.Pattern[str]:
    """A token: one of ``ids`` (case-insensitively), optionally after "Frame"/"Image", optionally quoted
    or bracketed, or with an image extension; or any other single letter (kept only when it is a
    capital: an unknown identifier, which makes the order invalid)."""
    known = "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
    return re.compile(r"(?:(?:frame|image|img)\s*)?[\"'“”‘’(\[]?"
                      rf"(?P<t>{known}|[A-Z])(?:\.(?:jpe?g|png))?[\"'“”‘’)\]]?(?![\w'’])", re.I)


_SEPARATOR = re.compile(_SEP, re.I)
_OPEN = re.compile(r"[\s\"'“”(\[{]*")
_CLOSE = re.compile(r"[\"'“”)\]}]*")
_COMPACT = re.compile(r"[\"'“”]?([A-Z]{2,12})[\"'“”]?(?![\w'’])")


def _sequence_at(text: str, pos: int, ids: Sequence[str]) -> tuple[list[str], int] | None:
    """The tokens of a sequence starting at ``pos`` ("D, B, A, C", "[D → B → A → C]", "DBAC"), and its end."""
    folded = {i.casefold() for i in ids}
    at = _OPEN.match(text, pos).end()
    compact = _COMPACT.match(text, at)
    if (compact and all(len(i) == 1 for i in ids) and len(compact.group(1)) == len(ids)
            and all(c.casefold() in folded for c in compact.group(1))):
        return list(compact.group(1)), compact.end()
    token = _token(tuple(ids))
    tokens: list[str] = []
    while (t := token.match(text, at)) is not None and (t.group("t").casefold() in folded or t.group("t").isupper()):
        tokens.append(t.group("t"))
        at = t.end()
        s = _SEPARATOR.match(text, at)
        if s is None or token.match(text, s.end()) is None:
            break
        at = s.end()
    return (tokens, _CLOSE.match(text, at).end()) if tokens else None


def _canonical(tokens: Sequence[str], ids: Sequence[str]) -> list[str] | None:
    """``tokens`` mapped onto ``ids`` (case-insensitively) when they are a permutation of them, else None."""
    by_fold = {i.casefold(): i for i in ids}
    mapped = [t if t in ids else by_fold.get(t.casefold()) for t in tokens]
    if None in mapped or len(mapped) != len(ids) or sorted(mapped) != sorted(ids):  # type: ignore[type-var]
        return None
    return mapped  # type: ignore[return-value]


def _json_candidates(text: str) -> list[tuple[object, int, int]]:
    """JSON values (objects or lists) in fenced blocks or standing in the text, with their spans."""
    found: list[tuple[object, int, int]] = []
    decoder = json.JSONDecoder()
    for m in _FENCE.finditer(text):
        inner = m.group(1).strip()
        try:
            found.append((json.loads(inner), m.start(), m.end()))
        except ValueError:
            continue
    if found:
        return found
    for m in re.finditer(r"[{\[]", text):
        if any(s <= m.start() < e for _, s, e in found):
            continue
        try:
            value, end = decoder.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(value, (dict, list)):
            found.append((value, m.start(), end))
    return found


def _from_json(value: object, ids: Sequence[str]) -> tuple[list[str] | None, str | None] | None:
    """(the identifiers it lists, or None; rationale) from a JSON answer with an order key or a list of
    identifiers; None if it has neither."""
    rationale = None
    if isinstance(value, dict):
        lowered = {str(k).casefold(): v for k, v in value.items()}
        rationale = next((str(lowered[k]) for k in RATIONALE_KEYS if isinstance(lowered.get(k), str)), None)
        raw = next((lowered[k] for k in ORDER_KEYS if k in lowered), None)
        if raw is None:
            return None
    else:
        raw = value
    if isinstance(raw, list) and all(isinstance(x, (str, int)) for x in raw):
        tokens = [re.sub(r"^(?:frame|image)\s*|\.(?:jpe?g|png)$", "", str(x).strip(), flags=re.I) for x in raw]
        folded = {i.casefold() for i in ids}
        if raw is value and not all(t.casefold() in folded or re.fullmatch("[A-Z]", t) for t in tokens):
            return None  # a bare list of something else (words in a rationale)
        return tokens, rationale
    if isinstance(raw, str):
        seq = _sequence_at(raw, 0, ids)
        return (seq[0] if seq is not None and not raw[seq[1]:].strip(" .") else None), rationale
    return (None, rationale) if not isinstance(value, list) else None


def _named(tokens: Sequence[str], ids: Sequence[str]) -> list[str]:
    """``tokens`` with known identifiers written as in ``ids`` (case-insensitively); others unchanged."""
    by_fold = {i.casefold(): i for i in ids}
    return [t if t in ids else by_fold.get(t.casefold(), t) for t in tokens]


def _decide(found: list[tuple[list[str], int, int]], ids: Sequence[str]) -> tuple[list[str] | None, list[str], int, int] | None:
    """The first tier's verdict: (the order when all sequences found agree and are a permutation, else None;
    the last sequence's identifiers; its span)."""
    if not found:
        return None
    canon = {tuple(c) if (c := _canonical(t, ids)) else None for t, _, _ in found}
    order = canon.pop() if len(canon) == 1 else None
    tokens, start, end = found[-1]
    return (list(order) if order else None), _named(tokens, ids), start, end


def split_ordering(item: Item, text: str) -> OrderingParse:
    """Split an output into the order it commits to and its rationale (the rest of the output).

    The output is normalised (Unicode NFKC, ``<think>`` blocks and markdown
    emphasis removed). Tiers are tried in order; the first that finds an
    order decides, and its order must hold every identifier exactly once
    (else invalid, with no fall-through to later tiers):

    1. JSON: a fenced or standing JSON object with an order key (`ORDER_KEYS`:
       ``{"order": ["D","B","A","C"], "explanation": "…"}``; a string value
       such as ``"D → B → A → C"`` is read as tier 3 reads a line), or a bare
       JSON list of identifiers. The rationale is its `RATIONALE_KEYS` value,
       else the text around the JSON.
    2. Labelled statements: ``Final order: …`` first, then ``Order: …``,
       ``The correct sequence is …``, ``Answer: …``; every statement of the tier
       must name the same order.
    3. A line that is nothing but a sequence, or the output's opening
       sequence followed by the end of its sentence.
    4. A numbered list (``1. Frame D: …``, ``2) B …``) read from 1 upwards.

    A sequence is identifiers (case-insensitive; optionally ``Frame D``,
    ``"D"``, ``[D]`` or ``D.jpg``) separated by commas, semicolons, arrows
    (``→ -> => >``), dashes, "then", "and" or spaces, optionally in brackets;
    or, for one-character identifiers, all of them run together (``DBAC``).
    Any other capital letter in a sequence is an unknown identifier (invalid).
    Outside JSON, the rationale is the output with the decided sequence (and
    its label) removed; for a numbered list, the whole output.
    """
    ids = identifiers(item)
    text = normalise(text)
    for value, start, end in _json_candidates(text):
        parsed = _from_json(value, ids)
        if parsed is None:
            continue
        tokens, rationale = parsed
        rest = (text[:start] + " " + text[end:]).strip()
        return OrderingParse(_canonical(tokens, ids) if tokens else None, rationale if rationale is not None else rest,
                             "json", _named(tokens, ids) if tokens else None)
    finals, labelled = [], []
    for m in _LABEL.finditer(text):
        seq = _sequence_at(text, m.end(), ids)
        if seq is None or not _ends_sentence(text, seq[1]):
            continue
        target = finals if _FINAL.search(text, m.start(), m.end()) else labelled
        target.append((seq[0], m.start(), seq[1]))
    lines = []
    for m in re.finditer(r"^[ \t]*(?:[-*•>][ \t]+)?", text, re.M):
        seq = _sequence_at(text, m.end(), ids)
        if seq is None or len(seq[0]) < 2:
            continue
        end_of_line = text.find("\n", seq[1])
        end_of_line = len(text) if end_of_line < 0 else end_of_line
        if not text[seq[1]:end_of_line].strip(" .") or (m.start() == 0 and _ends_sentence(text, seq[1])):
            lines.append((seq[0], m.start(), seq[1]))
    for tier, found in (("final", finals), ("statement", labelled), ("line", lines), ("list", _numbered(text, ids))):
        decided = _decide(found, ids)
        if decided is not None:
            order, tokens, start, end = decided
            rest = text[:start] + " " + text[end:] if tier != "list" else text
            return OrderingParse(order, re.sub(r"[ \t]+", " ", rest).strip(" \n."), tier, tokens)
    return OrderingParse(None, text, None)


_NUMBERED = re.compile(r"^[ \t]*(?:step[ \t]*)?(\d{1,2})[.):][ \t]*", re.M | re.I)


def _numbered(text: str, ids: Sequence[str]) -> list[tuple[list[str], int, int]]:
    """A numbered list 1., 2., … whose items each open with one identifier (``1. Frame D – …``)."""
    token, folded = _token(tuple(ids)), {i.casefold() for i in ids}
    by_number: list[tuple[int, str]] = []
    for m in _NUMBERED.finditer(text):
        t = token.match(text, m.end())
        if t is not None and (t.group("t").casefold() in folded or t.group("t").isupper()):
            by_number.append((int(m.group(1)), t.group("t")))
    run: list[str] = []
    for number, t in by_number:
        if number == len(run) + 1:
            run.append(t)
        elif run:
            break
    return [(run, 0, len(text))] if len(run) >= 2 else []


def _ends_sentence(text: str, end: int) -> bool:
    """Whether a sequence ending at ``end`` closes its sentence or line (".", ",", end, "because…")."""
    return re.match(r"[ \t]*(?:$|[.,;:!)\n]|\(|(?:because|since|as|as\s+follows|based)\b)", text[end:], re.I) is not None


@register("extractor", "ordering", version="2", answer_types=("ordering",),
          description="an order holding each identifier exactly once (JSON, labelled, or a bare sequence line); else invalid")
def ordering(item: Item, text: str) -> list[str] | None:
    """The order ``text`` commits to, or None (invalid); see `split_ordering`."""
    return split_ordering(item, text).order


def rationale(item: Item, text: str | None) -> str:
    """The rationale of an output: everything but the order (see `split_ordering`); "" when missing."""
    return split_ordering(item, text).rationale if text and text.strip() else ""


def adjacent_pairs_correct(truth: Sequence[str], predicted: Sequence[str] | None) -> int:
    """How many adjacent ground-truth pairs (I*_t, I*_t+1) come in that order in ``predicted``.

    ClinicalSkillQA §4.2: ``c_t = 1[pos(I*_t) < pos(I*_t+1)]``; the two frames need not be
    adjacent in the prediction, and a pair with an identifier missing from it is wrong.
    """
    if not predicted:
        return 0
    pos: dict[str, int] = {}
    for k, x in enumerate(predicted):
        pos.setdefault(x, k)  # first occurrence (the paper leaves duplicates unspecified; they are invalid here)
    return sum(1 for a, b in zip(truth, truth[1:]) if a in pos and b in pos and pos[a] < pos[b])


def reduce_pairwise(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Micro average: correct adjacent pairs / all adjacent pairs (columns 0 and 1 of the summed statistics)."""
    return sums[..., 0] / np.where(sums[..., 1] > 0, sums[..., 1], np.nan)


@register("metric", "pairwise_accuracy", higher_is_better=True, aggregation=reduce_pairwise, percent=True,
          chance=lambda item: 0.5,
          description="adjacent ground-truth pairs in the right relative order, micro-averaged over pairs "
          "(ClinicalSkillQA's Pairwise Accuracy); invalid and missing answers get no pair right")
def pairwise_accuracy(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample (correct adjacent pairs, n − 1); summed over a group and divided (micro average)."""
    stats = np.zeros((len(items), 2))
    for row, (item, answer) in enumerate(zip(items, answers, strict=True)):
        truth = list(item.answer)
        stats[row] = (adjacent_pairs_correct(truth, answer if isinstance(answer, list) else None), len(truth) - 1)
    return stats


@register("metric", "pairwise_accuracy_partial", higher_is_better=True, aggregation=reduce_pairwise, percent=True,
          reads_output=True, chance=lambda item: 0.5,
          description="pairwise accuracy in which an invalid order keeps the adjacent pairs it places right "
          "(a missing identifier's pairs are wrong; a repeated one counts at its first place): the other "
          "reading of ClinicalSkillQA's definition")
def pairwise_accuracy_partial(items: Sequence[Item], answers: Sequence[Answer],
                              outputs: Sequence[str | None]) -> np.ndarray:
    """Per-sample (correct adjacent pairs, n − 1), reading an invalid output's listed identifiers.

    §2.1 calls orders with missing, repeated or unknown identifiers invalid, while §4.2 says how a
    missing identifier's pairs score, which only matters if invalid orders are scored at all. This
    metric is that reading; `pairwise_accuracy` (invalid → no pair right) is the other. They agree
    on valid answers.
    """
    stats = np.zeros((len(items), 2))
    for row, (item, answer, output) in enumerate(zip(items, answers, outputs, strict=True)):
        listed = answer if isinstance(answer, list) else (split_ordering(item, output).tokens if output else None)
        truth = list(item.answer)
        stats[row] = (adjacent_pairs_correct(truth, listed), len(truth) - 1)
    return stats
