"""TemMed VQA questions: balanced yes/no, answer fixed before any question is written.

Every sentence of a test report is a VQA candidate, as the paper has it
(§2.3: "each sentence in the reports is a condition change description
sentence, it can be rephrased as a question"): its first directed statement
(`temmed_text.find_statements`) is what the question asks about, or, when it
has none, the sentence itself about its first change keyword
(`sentence_statement`; a plain change such as a placement is ``changed``). Polarity (Yes/No, half each) and the direction the
question names are assigned first (`select`), so that each named direction is
answered Yes about as often as No. Then the question is written either

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
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Mapping, Sequence

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from medtemporal.backends.base import GenerateConfig, Message, Request, TextPart
from medtemporal.benchmarks.llm_calls import generate_texts, open_backend
from medtemporal.benchmarks.temmed.text import CHANGE_RE, NEGATION, Statement, direction_of
from medtemporal.runner.cache import ResponseCache, default_cache_path

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


def _edges() -> list[tuple[str, str]]:
    """The pairs of directions a No question may swap both ways (every `NO_ASK` pair is symmetric)."""
    return sorted({tuple(sorted((s, t))) for s, ts in NO_ASK.items() for t in ts})  # type: ignore[misc]


def plan_counts(available: Mapping[str, int], n: int | None) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """How many sentences of each direction to ask, and how many No questions go each way along each pair.

    A No question about a sentence of direction ``s`` names a direction ``t``
    of ``NO_ASK[s]``. Each named direction is answered Yes exactly as often as
    No when, for every direction, the sentences kept equal the No questions
    naming it plus those it sends elsewhere: the kept counts ``k`` must be the
    degrees of a load ``e`` on the pairs of `_edges` (``k[s] = sum of e over
    the pairs holding s``), each pair's load split into No questions one way
    and the other. An integer program (`scipy.optimize.milp`) keeps the most
    sentences that allows, first within each direction's proportional share
    of ``n``, then beyond it up to ``n``; a direction over half the sentences
    cannot all be kept (its No questions would outnumber the Yes questions of
    the others).

    Returns:
        The kept count of each direction, and the load of each pair.

    >>> plan_counts({"unchanged": 6, "improved": 2, "worsened": 2}, None)[0]
    {'changed': 0, 'improved': 2, 'unchanged': 4, 'worsened': 2}
    """
    dirs = sorted(NO_ASK)
    edges = _edges()
    total = sum(available.get(d, 0) for d in dirs)
    want = total if n is None else min(n, total)
    share = {d: available.get(d, 0) for d in dirs}
    if want < total:  # largest remainder over the available counts
        exact = {d: want * share[d] / total for d in dirs}
        share = {d: int(exact[d]) for d in dirs}
        for d in sorted(dirs, key=lambda d: (-(exact[d] - share[d]), d))[: want - sum(share.values())]:
            share[d] += 1
    nv = len(edges) + len(dirs)
    degree = np.zeros((len(dirs), nv))
    for j, (a, b) in enumerate(edges):
        degree[dirs.index(a), j] = degree[dirs.index(b), j] = 1
    for i in range(len(dirs)):
        degree[i, len(edges) + i] = -1
    cost = np.r_[np.zeros(len(edges)), -np.ones(len(dirs))]
    floor = np.zeros(len(dirs))
    for upper in (share, {d: available.get(d, 0) for d in dirs}):
        rows = [LinearConstraint(degree, 0, 0), LinearConstraint(np.r_[np.zeros(len(edges)), np.ones(len(dirs))], 0, want)]
        lower = np.r_[np.zeros(len(edges)), floor]
        upper_ = np.r_[np.full(len(edges), np.inf), [upper[d] for d in dirs]]
        res = milp(cost, constraints=rows, integrality=np.ones(nv), bounds=Bounds(lower, upper_))
        kept = np.rint(res.x[len(edges):]).astype(int)
        floor = kept.astype(float)
        if kept.sum() >= want:
            break
    load = {e: int(round(v)) for e, v in zip(edges, res.x[: len(edges)])}
    return {d: int(k) for d, k in zip(dirs, kept)}, load


def select(candidates: Sequence[tuple[int, str, Statement]], n: int | None, rng: random.Random,
           exclusions: Counter[str] | None = None) -> list[Draft]:
    """Pick up to ``n`` candidates (all when None), their answers and the direction each question names.

    How many sentences of each direction are asked, and how many No questions
    name each other direction, come from `plan_counts`, so that each named
    direction (the subtype) is answered Yes exactly as often as No and half
    the answers are No: the answer prior of a subtype is then 50%. (With the
    answers dealt half and half at random, a direction over half the sentences
    — "unchanged" on CheXpert Plus — left the No questions naming the others
    in excess.) Every sentence is eligible and the ones asked are drawn at
    random; sentences of a direction over its share are left out and counted
    in ``exclusions`` (``vqa_direction_over_half``). Which sentence gets Yes
    and which direction each No names is then chosen per finding word (the
    last word of `finding_phrase`), each taking the answer whose questions
    about that finding lack it most, so the finding named says little about
    the answer either. Ties are broken by ``rng``.

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
    kept, load = plan_counts(Counter(st.direction for _, _, st in pool), n)
    taken: Counter[str] = Counter()
    chosen = []
    for c in pool:
        if taken[c[2].direction] < kept[c[2].direction]:
            taken[c[2].direction] += 1
            chosen.append(c)
    left = min(len(pool), len(pool) if n is None else n) - len(chosen)
    if exclusions is not None and left:
        exclusions["vqa_direction_over_half"] += left
    quota: Counter[tuple[str, str]] = Counter()  # (sentence direction, named direction) → No questions left
    for (a, b), e in load.items():
        first = rng.random() < 0.5
        quota[(a, b)] += e // 2 + (e % 2 if first else 0)
        quota[(b, a)] += e // 2 + (e % 2 if not first else 0)
    yes_left = Counter({d: kept[d] - sum(v for (s, _), v in quota.items() if s == d) for d in kept})
    named: Counter[tuple[str, str, str]] = Counter()  # (answer, named direction, finding word)
    drafts = []
    for instance, sentence, st in chosen:
        head = (finding_phrase(st).split() or [""])[-1]
        own = st.direction
        options = [("Yes", own)] if yes_left[own] > 0 else []
        options += [("No", t) for t in NO_ASK[own] if quota[(own, t)] > 0]

        def lack(option: tuple[str, str]) -> tuple[int, int]:  # how much the named direction lacks this answer
            answer, d = option
            other = "No" if answer == "Yes" else "Yes"
            spare = yes_left[own] if answer == "Yes" else quota[(own, d)]
            return (named[(other, d, head)] - named[(answer, d, head)], spare)

        best = max(lack(o) for o in options)
        answer, asked = rng.choice([o for o in options if lack(o) == best])
        if answer == "Yes":
            yes_left[own] -= 1
        else:
            quota[(own, asked)] -= 1
        named[(answer, asked, head)] += 1
        drafts.append(Draft(instance, sentence, st, answer, asked))
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
    backend = open_backend(uri, "temmed", licence, allow_remote_data)
    template = Template(prompt)
    config = GenerateConfig(temperature=0.0, max_tokens=128)
    requests = [
        Request((Message("user", (TextPart(template.substitute(sentence=d.sentence, answer=d.answer).strip()),)),),
                config)
        for d in drafts
    ]
    with ResponseCache(cache_path or default_cache_path()) if backend.cacheable else nullcontext() as cache:
        texts = generate_texts(backend, requests, cache, desc="VQA questions")
    out = []
    for draft, text in zip(drafts, texts):
        question = parse_question(text)
        out.append((question, f"model:{uri}") if question
                   else (template_question(draft), "template (model output unusable)"))
    return out
