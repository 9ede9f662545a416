"""Question wording by an LLM (paper appendix C: GPT-4o-mini wrote the questions), facts by rule.

With ``--llm URI`` the builder asks a model to word each item's
question (prompt ``eltlm_question_wording``) from the rule-decided reference
answer, the question type and, for reasoning items, the abnormality. The
reference answer is never the model's: a rule decided it (`build`). A worded
question is kept only when it is one line ending in "?", at most
`MAX_WORDS` words, names the abnormality (reasoning), and quotes no sentence
of the reference; otherwise the template question stays (counted as
``question_model_rejected``). Calls go through a model session (`medtemporal.backends.session.complete`)
(credentialed-data guard, response cache: a rebuild asks nothing again).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Sequence

from medtemporal.family import DataUse, GenerateConfig, Item, Message, PromptSet, Request, TextPart, complete
from medtemporal.benchmarks.eltlm.build import NUMBER_WORDS, sentences
from medtemporal.benchmarks.eltlm.release import BENCHMARK

PROMPT = "eltlm_question_wording"
MAX_WORDS = 60
KINDS = {"perception": "temporal perception question (what changed between the examinations)",
         "reasoning": "temporal reasoning question (how a finding evolved and what that course means)"}


def prompt_sha256(prompts: PromptSet | None = None) -> str:
    """sha256 of the wording template as used (recorded in the manifest)."""
    return hashlib.sha256((prompts or PromptSet()).text(PROMPT).encode("utf-8")).hexdigest()


def request_for(item: Item, prompts: PromptSet, seed: int) -> Request:
    """The wording request of one item (temperature 0, the build seed)."""
    entity = item.meta.get("entity")
    focus = f" The question is about the {entity}." if entity else ""
    text = prompts.render(PROMPT, n_words=NUMBER_WORDS.get(len(item.images), str(len(item.images))),
                          kind=KINDS[item.task], focus=focus, reference=item.reference or str(item.answer))
    return Request((Message("user", (TextPart(text),)),), GenerateConfig(temperature=0.0, max_tokens=160, seed=seed))


def acceptable(item: Item, question: str) -> bool:
    """Whether a worded question passes the rules in the module docstring."""
    q = question.strip()
    if not q or "\n" in q or not q.endswith("?") or len(q.split()) > MAX_WORDS:
        return False
    entity = item.meta.get("entity")
    if entity and entity.lower() not in q.lower():
        return False
    quoted = [s.rstrip(".").lower() for s in sentences(item.reference or "") if len(s.split()) >= 4]
    return not any(s in q.lower() for s in quoted)


def word_questions(
    items: Sequence[Item], uri: str, *, licence: str, seed: int, allow_remote_data: bool = False,
    cache_path: str | Path | None = None, prompts: PromptSet | None = None,
) -> tuple[list[Item], Counter[str]]:
    """``items`` with model-worded questions where acceptable, and counts of kept and rejected wordings."""
    prompts = prompts or PromptSet()
    texts = complete(uri, [request_for(i, prompts, seed) for i in items], use=DataUse(BENCHMARK, licence, allow_remote_data),
                     cache_path=cache_path, desc="questions")
    counts: Counter[str] = Counter()
    out = []
    for item, text in zip(items, texts, strict=True):
        if acceptable(item, text):
            counts["question_model_kept"] += 1
            body = item.model_dump(exclude={"id"})
            body["question"] = text.strip()
            body["meta"] = {**item.meta, "question_source": uri}
            out.append(Item.create(**body))
        else:
            counts["question_model_rejected"] += 1
            out.append(item)
    return out, counts
