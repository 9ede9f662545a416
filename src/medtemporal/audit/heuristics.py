"""Structural answer heuristics: rules that pick an answer from the text of one item alone.

Each rule scores every answer of an item from its question and option texts
(no images, no labels); the highest score is the rule's pick, ties going to the
answer the training folds gave most often. None of them names a benchmark:
they are the shortcuts a test-wise reader tries on any multiple-choice test
("the longest option", "the option the distractors were derived from", "the
null option", "the option that shares the question's words").

>>> from medtemporal.schema import Item
>>> item = Item.create(benchmark="b", task="t", subtype="s", images=(), question="Q?", answer_type="choice",
...                    answer="B", options={"A": "a b", "B": "a b c", "C": "None of them are true."})
>>> RULES["longest"](item)["C"] > RULES["longest"](item)["A"], RULES["null_option"](item)["C"]
(True, 1.0)
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable, Iterable, Sequence

from medtemporal.schema import Item

TOKEN = re.compile(r"[a-z0-9]+")
VISIT = re.compile(r"\bt\d+\b")
NULL = re.compile(r"^\s*(none\b|no\b|there (is|are) no\b|neither\b|not\b)", re.IGNORECASE)
NEGATION = re.compile(r"\b(no|not|without|absent|never|none|neither)\b|n't\b", re.IGNORECASE)

Scores = dict[str, float]
Rule = Callable[[Item], Scores]


def answers(item: Item) -> tuple[str, ...]:
    """The closed answers of ``item``: its option letters, or Yes/No."""
    return tuple(item.options) if item.answer_type == "choice" else ("Yes", "No")


def tokens(text: str) -> set[str]:
    """Lower-cased word tokens of ``text``."""
    return set(TOKEN.findall(text.lower()))


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _central(item: Item, pattern: re.Pattern[str] | None = None) -> Scores:
    """Mean Jaccard overlap of each option with the other options (all words, or those matching ``pattern``)."""
    sets = {k: (set(pattern.findall(v.lower())) if pattern else tokens(v)) for k, v in item.options.items()}
    out = {}
    for k, s in sets.items():
        others = [_jaccard(s, t) for j, t in sets.items() if j != k]
        out[k] = sum(others) / len(others) if others else 0.0
    return out


def _unique_words(item: Item) -> Scores:
    sets = {k: tokens(v) for k, v in item.options.items()}
    return {k: float(len(s - set().union(*(t for j, t in sets.items() if j != k)))) for k, s in sets.items()}


def _choice_rules() -> dict[str, Rule]:
    return {
        "longest": lambda it: {k: float(len(v)) for k, v in it.options.items()},
        "shortest": lambda it: {k: -float(len(v)) for k, v in it.options.items()},
        "null_option": lambda it: {k: float(bool(NULL.search(v))) for k, v in it.options.items()},
        "not_null_option": lambda it: {k: -float(bool(NULL.search(v))) for k, v in it.options.items()},
        "most_like_others": _central,
        "least_like_others": lambda it: {k: -v for k, v in _central(it).items()},
        "visits_most_like_others": lambda it: _central(it, VISIT),
        "visits_least_like_others": lambda it: {k: -v for k, v in _central(it, VISIT).items()},
        "most_unique_words": _unique_words,
        "question_overlap": lambda it: {k: _jaccard(tokens(it.question), tokens(v)) for k, v in it.options.items()},
    }


def _yesno_rules() -> dict[str, Rule]:
    def negated(it: Item) -> Scores:
        neg = bool(NEGATION.search(it.question))
        return {"Yes": float(not neg), "No": float(neg)}

    return {
        "negation_means_no": negated,
        "negation_means_yes": lambda it: {k: 1.0 - v for k, v in negated(it).items()},
        "long_question_yes": lambda it: {"Yes": float(len(it.question)), "No": 0.0},
        "long_question_no": lambda it: {"Yes": 0.0, "No": float(len(it.question))},
    }


_BY_TYPE: dict[str, dict[str, Rule]] = {"choice": _choice_rules(), "yesno": _yesno_rules()}
RULES: dict[str, Rule] = {**_BY_TYPE["choice"], **_BY_TYPE["yesno"]}
"""Every rule by name; `rules_for` picks those that apply to an answer type."""
PRIOR = "answer_prior"
"""The name of the rule "always the answer the training folds gave most often" (no text at all)."""


def rules_for(answer_type: str) -> dict[str, Rule]:
    """The rules that apply to items of ``answer_type`` (``choice`` or ``yesno``); read-only."""
    return _BY_TYPE["choice" if answer_type == "choice" else "yesno"]


def commonest(given: Iterable[str]) -> list[str]:
    """The distinct answers of ``given``, most frequent first (ties in answer order): the prior rule's ranking.

    >>> commonest(["B", "A", "B", "C", "A"])
    ['A', 'B', 'C']
    """
    return [a for a, _ in sorted(Counter(given).items(), key=lambda kv: (-kv[1], kv[0]))]


def score_table(items: "Sequence[Item]") -> dict[str, dict[str, Scores]]:
    """Every applicable rule's scores for each item, by item id (computed once, reused by every fold)."""
    return {it.id: {name: rule(it) for name, rule in rules_for(it.answer_type).items()} for it in items}

