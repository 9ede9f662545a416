"""TemMed VQA questions: balanced yes/no, answer fixed before any question is written.

A VQA candidate is a report sentence holding a statement with a direction
(see `temmed_text.find_statements`); its first such statement is what the
question asks about. Polarity (Yes/No, half each) and the direction the
question names are assigned first (`select`), so that each named direction is
answered Yes about as often as No. Then the question is written either

- offline by `template_question`: "Has the <finding> <improved | worsened |
  remained unchanged> since the last visit?", naming the statement's own
  direction for Yes and another direction for No, so Yes and No questions
  share one surface form; or
- by a model (the paper's approach, appendix A.2) through any backend URI, with
  the ``temmed_vqa_rephrase`` prompt asking for a question whose answer is the
  assigned one. Calls are cached in the response cache; an output that is not
  one question (a line ending in "?") falls back to the template, and the
  item records which wrote it. The model never decides the answer.
"""

from __future__ import annotations

import random
import re
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Sequence

from medtemporal.backends.base import GenerateConfig, Message, Request, TextPart
from medtemporal.benchmarks.llm_calls import generate_texts, open_backend
from medtemporal.benchmarks.temmed.text import CHANGE_RE, Statement
from medtemporal.runner.cache import ResponseCache, default_cache_path

VERBS = {"improved": "improved", "worsened": "worsened", "unchanged": "remained unchanged"}
_LEADING = {"in", "of", "the", "a", "an", "interval", "and", "to", "with", "for", "since"}


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

    Answer and named direction are chosen together, greedily: each question takes
    the choice that most evens out Yes and No among the questions naming the same
    direction, so that a question's wording alone says little about its answer
    (otherwise the common "remained unchanged" would mostly mean Yes). Ties are
    broken by ``rng``.

    Args:
        candidates: (instance index, sentence, its first directed statement), in build order.
        n: How many questions; None or more than there are takes all.
        rng: Seeded generator; the only source of randomness.
    """
    pool = list(candidates)
    rng.shuffle(pool)
    chosen = pool if n is None else pool[:n]
    budget = {"No": len(chosen) // 2, "Yes": len(chosen) - len(chosen) // 2}
    named: dict[tuple[str, str], int] = {(a, d): 0 for a in budget for d in VERBS}
    drafts = []
    for instance, sentence, st in chosen:
        if st.direction is None:
            raise ValueError(f"VQA candidate {st.text!r} has no direction to ask about")
        options = [("Yes", st.direction)] if budget["Yes"] else []
        options += [("No", d) for d in sorted(VERBS) if d != st.direction] if budget["No"] else []
        # how far the option's (answer, direction) lags behind the other answer for that direction
        lag = {o: named[("No" if o[0] == "Yes" else "Yes", o[1])] - named[o] for o in options}
        best = max(lag.values())
        answer, asked = rng.choice([o for o in options if lag[o] == best])
        budget[answer] -= 1
        named[(answer, asked)] += 1
        drafts.append(Draft(instance, sentence, st, answer, asked))
    drafts.sort(key=lambda d: (d.instance, d.sentence, d.statement.text))
    return drafts


def finding_phrase(statement: Statement) -> str:
    """The finding a statement is about: its text after the change word, without leading
    function words ("decrease in left pleural effusion" → "left pleural effusion")."""
    m = CHANGE_RE.search(statement.text)
    words = statement.text[m.end() :].split() if m else statement.text.split()
    while words and words[0] in _LEADING:
        words.pop(0)
    return " ".join(words) or statement.pathology


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
