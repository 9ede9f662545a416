"""TemMed VQA questions: balanced yes/no, answer fixed before any question is written.

Every sentence of a test report is a VQA candidate, as the paper has it
(§2.3: "each sentence in the reports is a condition change description
sentence, it can be rephrased as a question"): its first directed statement
(`temmed_text.find_statements`) is what the question asks about, or, when it
has none, the sentence itself about its first change keyword
(`sentence_statement`; a plain change such as a placement is ``changed``). Polarity (Yes/No, half each) and the direction the
question names are assigned first (`select`), so that each named direction is
answered Yes exactly as often as No about each finding. Then the question is written either

- offline by `template_question`: "Has the <finding> <improved | worsened |
  remained unchanged | changed> since the last visit?", naming the statement's
  own direction for Yes and a definitely false one for No (`NO_ASK`), so Yes
  and No questions share one surface form, the finding named without size or
  severity words; or
- by a model (the paper's approach, appendix A.2) through any backend URI, with
  the ``temmed_vqa_rephrase`` prompt asking for a question whose answer is the
  assigned one. Calls are cached in the response cache; an output that is not
  one question (a line ending in "?") falls back to the template, and the
  item records which wrote it. The model never decides the answer.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Mapping, Sequence

import numpy as np

from medtemporal.family import DataUse, GenerateConfig, Message, Request, TextPart, complete
from medtemporal.benchmarks.temmed.text import CHANGE_RE, NEGATION, Statement, direction_of

VERBS = {"improved": "improved", "worsened": "worsened", "unchanged": "remained unchanged", "changed": "changed"}
"""Direction → the verb phrase a question names it with."""
NO_ASK: dict[str, tuple[str, ...]] = {
    "improved": ("worsened", "unchanged"),
    "worsened": ("improved", "unchanged"),
    "unchanged": ("improved", "worsened", "changed"),
    "changed": ("unchanged",),
}
"""A sentence's direction → the directions a question answered No may name (each definitely false:
"changed" is never asked of an improvement or a worsening, which it would describe)."""
_LEADING = {"in", "of", "the", "a", "an", "interval", "and", "to", "with", "for", "since"}
_TRAILING = {"has", "have", "is", "are", "been", "was", "were", "now", "the", "and", "in", "of"}
SEVERITY = {
    "trace", "minimal", "tiny", "small", "mild", "mildly", "moderate", "moderately", "large", "severe", "severely",
    "extensive", "massive", "slight", "slightly", "marked", "markedly", "new", "newly", "amount", "now",
    "significant", "significantly", "substantial", "substantially", "little", "minimally", "somewhat",
}
"""Size and severity words, left out of the finding a question names: with the named direction they
would tell the answer ("... now small" goes with an improvement)."""


@dataclass(frozen=True)
class Draft:
    """A selected VQA candidate with its answer, before its question is written."""

    instance: int
    """Index of the test instance."""
    sentence: str
    statement: Statement
    answer: str
    """``Yes`` or ``No``."""
    asked: str
    """The direction the question names (the statement's own for Yes)."""


SIDES = ("left", "right", "bilateral")
"""Laterality words; with the finding's last word they key the cells `plan_cells` balances."""


def balance_key(statement: Statement) -> str:
    """The finding a question names, as balanced: the last word of `finding_phrase` and its side, if any
    ("right lower lobe opacity" → "opacity right")."""
    words = finding_phrase(statement).split() or [""]
    side = next((w for w in words if w in SIDES), "")
    return f"{words[-1]} {side}".strip()


def plan_cells(
    available: Mapping[tuple[str, str], int], n: int | None
) -> tuple[dict[tuple[str, str], int], dict[tuple[str, str, str], int]]:
    """How many Yes questions each (direction, finding) cell gets, and how many No questions its sentences
    send naming each other direction, so that every named direction is answered Yes exactly as often as
    No *about each finding*.

    A Yes question names its sentence's own direction ``d``; a No question about a sentence of direction
    ``s`` names a ``t`` of ``NO_ASK[s]``. For every finding ``k`` and direction ``t`` the Yes questions
    ``y[t, k]`` must equal the No questions naming ``t`` about ``k``, and a cell asks no more sentences
    than it has. An integer program (`scipy.optimize.milp`) keeps the most sentences that allows, first
    within each cell's proportional share of ``n``, then beyond it up to ``n``. A finding whose sentences
    all have one direction cannot be asked at all (its questions would always be answered the same way),
    nor can more of a direction than the others of its finding can balance.

    Returns:
        ``y[(d, k)]`` and ``x[(s, t, k)]``, zero entries left out.

    >>> y, x = plan_cells({("unchanged", "effusion"): 3, ("improved", "effusion"): 1}, None)
    >>> sum(y.values()), sum(x.values())  # the lone improvement balances one Yes question, no more
    (1, 1)
    """
    from scipy.optimize import Bounds, LinearConstraint, milp  # here: importing scipy.optimize takes 0.5 s

    cells = sorted(c for c, v in available.items() if v > 0)
    keys = sorted({k for _, k in cells})
    ys = cells
    xs = [(s, t, k) for s, k in cells for t in NO_ASK[s] if (t, k) in available and available[(t, k)] > 0]
    nv = len(ys) + len(xs)
    total = sum(available[c] for c in cells)
    want = total if n is None else min(n, total)
    if not nv or not keys:
        return {}, {}
    col = {v: j for j, v in enumerate([*ys, *xs])}
    balance = np.zeros((len(ys), nv))  # y[t, k] - sum_s x[s, t, k] = 0
    usage = np.zeros((len(cells), nv))  # y[s, k] + sum_t x[s, t, k] <= available[s, k]
    for i, (t, k) in enumerate(ys):
        balance[i, col[(t, k)]] = 1
        usage[i, col[(t, k)]] = 1
    for s, t, k in xs:
        balance[ys.index((t, k)), col[(s, t, k)]] = -1
        usage[cells.index((s, k)), col[(s, t, k)]] = 1
    share = {c: available[c] for c in cells}
    if want < total:  # largest remainder over the cells
        exact = {c: want * available[c] / total for c in cells}
        share = {c: int(exact[c]) for c in cells}
        for c in sorted(cells, key=lambda c: (-(exact[c] - share[c]), c))[: want - sum(share.values())]:
            share[c] += 1
    upper = np.r_[[-(-available[c] // 2) for c in ys], np.full(len(xs), np.inf)]  # Yes: at most half a cell
    floor = np.zeros(len(cells))
    for limit in (share, {c: available[c] for c in cells}):
        rows = [LinearConstraint(balance, 0, 0), LinearConstraint(usage, floor, [limit[c] for c in cells]),
                LinearConstraint(np.ones(nv), 0, want)]
        res = milp(-np.ones(nv), constraints=rows, integrality=np.ones(nv), bounds=Bounds(0, upper))
        values = np.rint(res.x).astype(int)
        floor = usage @ values
        if values.sum() >= want:
            break
    y = {c: int(values[col[c]]) for c in ys if values[col[c]]}
    x = {c: int(values[col[c]]) for c in xs if values[col[c]]}
    return y, x


def select(candidates: Sequence[tuple[int, str, Statement]], n: int | None, rng: random.Random,
           exclusions: Counter[str] | None = None) -> list[Draft]:
    """Pick up to ``n`` candidates (all when None), their answers and the direction each question names.

    How many sentences of each direction and finding (`balance_key`) are asked Yes, and how many ask No
    naming each other direction, come from `plan_cells`, so that each named direction (the subtype) is
    answered Yes exactly as often as No about each finding: neither the named change nor the finding
    named gives the answer away. (Balanced per direction only, "Has the position worsened?" was always
    No and the side named leaned one way: `vqa_worsened` 57% blind on a phantom build.) Every sentence
    is eligible and the ones asked are drawn at random; sentences that cannot be balanced are left out
    and counted in ``exclusions`` (``vqa_left_out_for_balance``).

    Args:
        candidates: (instance index, sentence, its statement with a direction), in build order.
        n: How many questions; None or more than there are takes all.
        rng: Seeded generator; the only source of randomness.
        exclusions: Where to count sentences left out to keep the balance.
    """
    pool = list(candidates)
    for _, _, st in pool:
        if st.direction not in NO_ASK:
            raise ValueError(f"VQA candidate {st.text!r} has no direction to ask about")
    rng.shuffle(pool)
    by_cell: dict[tuple[str, str], list[tuple[int, str, Statement]]] = {}
    for c in pool:
        by_cell.setdefault((c[2].direction, balance_key(c[2])), []).append(c)
    y, x = plan_cells({cell: len(v) for cell, v in by_cell.items()}, n)
    drafts = []
    for (d, k), members in by_cell.items():
        asks = [("Yes", d)] * y.get((d, k), 0) + [("No", t) for t in NO_ASK[d] for _ in range(x.get((d, t, k), 0))]
        rng.shuffle(asks)
        drafts += [Draft(i, sentence, st, answer, asked) for (i, sentence, st), (answer, asked) in zip(members, asks)]
    left = min(len(pool), len(pool) if n is None else n) - len(drafts)
    if exclusions is not None and left:
        exclusions["vqa_left_out_for_balance"] += left
    drafts.sort(key=lambda d: (d.instance, d.sentence, d.statement.text))
    return drafts


def sentence_statement(sentence: str, index: int) -> Statement | None:
    """The whole ``sentence`` as a statement about its first change keyword (for sentences whose change
    names no known pathology): direction as `text.find_statements` gives it, ``changed`` for a plain
    change without one (placement, thickening), None for a negated directional word."""
    m = CHANGE_RE.search(sentence)
    if m is None:
        return None
    keyword = m.lastgroup or ""
    negated = NEGATION.search(sentence, 0, m.start()) is not None
    direction = direction_of(keyword, negated)
    if direction is None and not negated and keyword != "change" or keyword == "change" and not negated:
        direction = "changed"
    return None if direction is None else Statement(sentence.lower(), keyword, "", direction, index)


def finding_phrase(statement: Statement) -> str:
    """The finding a statement is about, without change, size or severity words: its text after the
    change word ("decrease in left pleural effusion" → "left pleural effusion"), or before it when
    nothing follows ("the left basilar atelectasis has resolved" → "left basilar atelectasis")."""
    m = CHANGE_RE.search(statement.text)
    after = statement.text[m.end():] if m else statement.text
    before = statement.text[: m.start()] if m else ""
    text = after if re.search(r"[a-z]", re.sub(r"\bnow\b.*", "", after)) else before
    text = re.sub(r",?\s*now\b.*$", "", text)  # "increased opacity, now severe"
    words = [w for w in re.findall(r"[a-z0-9/-]+", text.lower()) if w not in SEVERITY and not CHANGE_RE.fullmatch(w)]
    while words and words[0] in _LEADING | {"no", "not", "without"}:
        words.pop(0)
    while words and words[-1] in _TRAILING | _LEADING:
        words.pop()
    return " ".join(words) or statement.pathology or "findings"


def template_question(draft: Draft) -> str:
    """The offline question for ``draft``.

    >>> from medtemporal.benchmarks.temmed.text import find_statements
    >>> st = find_statements("Decrease in left pleural effusion.")[0]
    >>> template_question(Draft(0, "", st, "No", "worsened"))
    'Has the left pleural effusion worsened since the last visit?'
    """
    phrase = finding_phrase(draft.statement)
    last = phrase.split()[-1]
    plural = last.endswith("s") and not last.endswith(("sis", "ss", "us"))
    verb = "Have" if plural else "Has"
    return f"{verb} the {phrase} {VERBS[draft.asked]} since the last visit?"


def parse_question(text: str) -> str | None:
    """The question in a model's reply: its first non-empty line, unquoted, if it ends in "?"."""
    for line in text.splitlines():
        line = line.strip().strip("\"'“”").strip()
        if line:
            line = re.sub(r"^(?:question\s*:\s*)", "", line, flags=re.I)
            return line if line.endswith("?") and len(line) > 3 else None
    return None


def rephrase(
    drafts: Sequence[Draft],
    uri: str,
    prompt: str,
    *,
    licence: str,
    allow_remote_data: bool = False,
    cache_path: Path | None = None,
) -> list[tuple[str, str]]:
    """Questions for ``drafts`` written by the model at ``uri``; returns (question, source) pairs.

    Args:
        drafts: Selected candidates with their answers.
        uri: Model URI (see `medtemporal.backends.load`).
        prompt: The ``temmed_vqa_rephrase`` template text (``$sentence``, ``$answer``).
        licence: The source data's licence; credentialed text goes to a remote endpoint only
            with ``allow_remote_data``.
        allow_remote_data: The user's explicit permission to send credentialed text off this network.
        cache_path: Response cache file (default: the shared one).
    """
    template = Template(prompt)
    config = GenerateConfig(temperature=0.0, max_tokens=128)
    requests = [
        Request((Message("user", (TextPart(template.substitute(sentence=d.sentence, answer=d.answer).strip()),)),),
                config)
        for d in drafts
    ]
    texts = complete(uri, requests, use=DataUse("temmed", licence, allow_remote_data),  # type: ignore[arg-type]
                     cache_path=cache_path, desc="VQA questions")
    out = []
    for draft, text in zip(drafts, texts):
        question = parse_question(text)
        out.append((question, f"model:{uri}") if question
                   else (template_question(draft), "template (model output unusable)"))
    return out
