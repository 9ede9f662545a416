"""Open questions (Tasks 1–3) written by a model from the report, then quality-filtered (``--llm``).

The paper (``seeds/004`` §3.2, A.4–A.5) has GPT-4o-mini write question-answer
pairs from each report's Findings and Impression with one prompt per task
(Figures 9–11), Task 3 only from the sentences that state a measurement, with
answers of about five words; then a model rates every pair on five
dimensions (Visual Verifiability, Specificity & Clarity, Answer
Appropriateness, Q-A Alignment, Linguistic Quality; Figure 15) from 1 to 5,
and pairs scoring under 3 on any dimension or under 3 on average are dropped.
The figures are images in the paper; our templates (``rad3d_qa_generate``,
``rad3d_qa_score``) follow this description, and their hashes go into the
manifest. The model words questions and answers; it never labels a closed
item. Calls are cached and retried (`medtemporal.backends.session.complete`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Sequence

from medtemporal.family import DataUse, GenerateConfig, Message, PromptSet, Request, TextPart, complete
from medtemporal.benchmarks.rad3d.labels import BENCHMARK, OPEN_SUBTASKS, TASKS
from medtemporal.benchmarks.rad3d.open_questions import OpenQA

DIMENSIONS = ("visual_verifiability", "specificity_clarity", "answer_appropriateness", "qa_alignment",
              "linguistic_quality")
MIN_SCORE = 3
INSTRUCTIONS = {
    "task1": "Ask what is observed: normal anatomy (Anatomical_observation) or pathology (Pathological_observation).",
    "task2": "Ask about abnormalities: their features, positions and types, and the diagnosis.",
    "task3": "Ask for the stated measurements: a diameter, a size (AxB mm) or a thickness, with its unit.",
}
_MEASURE = re.compile(r"\d+(?:[.,]\d+)?\s*(?:[x×]\s*\d+(?:[.,]\d+)?\s*)?(?:mm|cm)\b", re.I)
_SENTENCE = re.compile(r"[^.]+\.?")


def measurement_sentences(text: str) -> str:
    """The sentences of ``text`` that state a measurement (Task 3's first stage), joined by spaces."""
    return " ".join(s.strip() for s in _SENTENCE.findall(text or "") if _MEASURE.search(s))


def _json(text: str, kind: type) -> object | None:
    start, end = ("[", "]") if kind is list else ("{", "}")
    i, j = text.find(start), text.rfind(end)
    if i < 0 or j <= i:
        return None
    try:
        value = json.loads(text[i : j + 1])
    except ValueError:
        return None
    return value if isinstance(value, kind) else None


def parse_pairs(text: str, task: str) -> list[OpenQA]:
    """The valid pairs of a generation reply (known subtask, non-empty question and answer)."""
    out = []
    for rec in _json(text, list) or []:
        if not isinstance(rec, dict):
            continue
        sub, q, a = rec.get("subtask"), str(rec.get("question", "")).strip(), str(rec.get("answer", "")).strip()
        if sub in OPEN_SUBTASKS[task] and q and a:
            out.append(OpenQA(task, sub, q, a))
    return out


def keep(scores: dict | None) -> bool:
    """The paper's filter: every dimension at least 3 and the mean at least 3."""
    if not scores:
        return False
    try:
        values = [float(scores[d]) for d in DIMENSIONS]
    except (KeyError, TypeError, ValueError):
        return False
    return min(values) >= MIN_SCORE and sum(values) / len(values) >= MIN_SCORE


@dataclass
class Generated:
    """Kept pairs per report index, and what was dropped."""

    pairs: dict[int, list[OpenQA]]
    dropped: Counter[str]
    prompt_hashes: dict[str, str]


def _request(text: str, max_tokens: int) -> Request:
    return Request((Message("user", (TextPart(text),)),), GenerateConfig(temperature=0.0, max_tokens=max_tokens))


def generate_open(reports: Sequence[tuple[str, str]], tasks: Sequence[str], uri: str, *, licence: str,
                  allow_remote_data: bool = False, cache_path: Path | None = None,
                  prompts: PromptSet | None = None) -> Generated:
    """Model-written, quality-filtered open pairs for each (findings, impression) report."""
    prompts = prompts or PromptSet()
    gen, score = Template(prompts.text("rad3d_qa_generate")), Template(prompts.text("rad3d_qa_score"))
    jobs: list[tuple[int, str, str]] = []
    for k, (findings, impression) in enumerate(reports):
        full = f"Findings: {findings}\nImpression: {impression}"
        for task in tasks:
            text = measurement_sentences(findings) if task == "task3" else full
            if text:
                jobs.append((k, task, text))
    dropped: Counter[str] = Counter()
    use = DataUse(BENCHMARK, licence, allow_remote_data)
    replies = complete(uri, [_request(gen.substitute(
        task=TASKS[t][2], subtasks=", ".join(OPEN_SUBTASKS[t]), instructions=INSTRUCTIONS[t], report=text).strip(), 1024)
        for _, t, text in jobs], use=use, cache_path=cache_path, desc="3D-RAD questions")
    drafts = []
    for (k, task, text), reply in zip(jobs, replies):
        pairs = parse_pairs(reply, task)
        dropped["qa_reply_without_pairs"] += not pairs
        drafts += [(k, text, p) for p in pairs]
    ratings = complete(uri, [_request(score.substitute(report=text, question=p.question, answer=p.answer).strip(), 256)
                             for _, text, p in drafts], use=use, cache_path=cache_path, desc="3D-RAD quality scores")
    kept: dict[int, list[OpenQA]] = {}
    for (k, _, pair), rating in zip(drafts, ratings):
        if keep(_json(rating, dict)):
            kept.setdefault(k, []).append(pair)
        else:
            dropped["qa_below_quality_threshold"] += 1
    hashes = {name: prompts.hash(name) for name in ("rad3d_qa_generate", "rad3d_qa_score")}
    return Generated(kept, dropped, hashes)
