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
from typing import Sequence

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


def select(candidates: Sequence[tuple[int, str, Statement]], n: int | None, rng: random.Random) -> list[Draft]:
    """Pick ``n`` candidates (all when None), half (rounded down) answered No, and the direction each names.

    Answers are dealt first (half No, shuffled); a Yes question names the
    sentence's own direction, and each No question then names, of the
    directions definitely false for its sentence (`NO_ASK`; those no Yes
    question names only when there is no other), the one whose
    questions most lack a No so far (overall, then about the same finding
    word: the last word of `finding_phrase`), so that each named direction is
    answered Yes about as often as No and the wording alone says little about
    the answer (otherwise "remained unchanged" would mostly mean Yes). Ties are
    broken by ``rng``.

    Args:
        candidates: (instance index, sentence, its statement with a direction), in build order.
        n: How many questions; None or more than there are takes all.
        rng: Seeded generator; the only source of randomness.
    """
    pool = list(candidates)
    rng.shuffle(pool)
    chosen = pool if n is None else pool[:n]
    answers = ["No"] * (len(chosen) // 2) + ["Yes"] * (len(chosen) - len(chosen) // 2)
    rng.shuffle(answers)
    named: Counter[tuple[str, str, str]] = Counter()
    heads = []
    for (_, _, st), answer in zip(chosen, answers):
        if st.direction not in NO_ASK:
            raise ValueError(f"VQA candidate {st.text!r} has no direction to ask about")
        heads.append((finding_phrase(st).split() or [""])[-1])
        if answer == "Yes":
            named[("Yes", st.direction, "")] += 1
            named[("Yes", st.direction, heads[-1])] += 1
    drafts = []
    for (instance, sentence, st), answer, head in zip(chosen, answers, heads):
        asked = st.direction
        if answer == "No":  # the false direction whose questions most lack a No, overall then for this finding

            def deficit(d: str) -> tuple[int, int]:
                return (named[("Yes", d, "")] - named[("No", d, "")], named[("Yes", d, head)] - named[("No", d, head)])

            false = [d for d in NO_ASK[st.direction] if named[("Yes", d, "")]] or list(NO_ASK[st.direction])
            best = max(deficit(d) for d in false)
            asked = rng.choice([d for d in false if deficit(d) == best])
            named[("No", asked, "")] += 1
            named[("No", asked, head)] += 1
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
