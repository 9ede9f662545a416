"""ELTLM's lexical metric: ROUGE-L F1 of the response against the Standard Answer (paper §3.4, Table 2).

The paper names ROUGE-L F1 and reports it in 0–1 but gives no implementation
(FACTS §3.3). We use ``rouge_score``'s ``RougeScorer(["rougeL"],
use_stemmer=True)`` with its default tokenizer (lower case, alphanumeric
tokens), ``score(reference, response)["rougeL"].fmeasure`` per item, averaged;
an invalid or missing answer scores 0. These settings are recorded in the
metric's description in ``scores.json``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from medtemporal.family import Answer, Item, register

SETTINGS = {"package": "rouge-score", "types": ["rougeL"], "use_stemmer": True, "tokenizer": "default",
            "value": "fmeasure"}


@lru_cache(maxsize=1)
def _scorer() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(SETTINGS["types"], use_stemmer=SETTINGS["use_stemmer"])


def rouge_l_f1_of(reference: str, response: str | None) -> float:
    """ROUGE-L F1 of one response (0.0 for none).

    >>> rouge_l_f1_of("No significant interval change.", "no significant interval change")
    1.0
    """
    if not response:
        return 0.0
    return float(_scorer().score(reference, response)["rougeL"].fmeasure)


@register("metric", "rouge_l_f1", higher_is_better=True, aggregation="mean", percent=True,
          description=f"ROUGE-L F1 against the reference, as the ELTLM paper scores it, 0-1; settings {SETTINGS}")
def rouge_l_f1(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-item ROUGE-L F1 of the answer against ``item.reference`` (or ``item.answer``)."""
    return np.fromiter((rouge_l_f1_of(i.reference or str(i.answer), a if isinstance(a, str) else None)
                        for i, a in zip(items, answers, strict=True)), float, len(items))
