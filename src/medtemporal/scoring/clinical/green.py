"""GREEN (Ostmeier et al., Findings of EMNLP 2024): an LLM counts the clinically significant errors of a report.

The GREEN model (``StanfordAIMI/GREEN-radllama2-7b``, or any model trained for the task) is served by any
backend and asked through `medtemporal.backends.session.ModelSession` by the judge engine
(`medtemporal.scoring.judge.judge_answers`), so its calls are guarded, cached, retried and resumable from the
run's ``judgements.jsonl``: ``medtemporal score RUN --green URI`` (e.g. ``--green hf:StanfordAIMI/GREEN-radllama2-7b``
or ``--green openai+http://localhost:8000/v1:StanfordAIMI/GREEN-radllama2-7b`` for a vLLM server started with
``--chat-template`` `CHAT_TEMPLATE`). As GREEN's ``green_score/green.py`` (Stanford-AIMI/GREEN@d72c195):

- the prompt is its ``make_prompt`` (template ``green``), each report cut to its first 300 words;
- decoding is greedy (temperature 0); GREEN caps prompt and answer at 2,048 tokens together, we cap the answer at
  `MAX_TOKENS`;
- ``parse_error_counts`` reads the counts of the six clinically significant error types ``(a)``–``(f)`` (among them
  "(e) mentioning a comparison that isn't in the reference" and "(f) omitting a comparison detailing a change from a
  prior study") and the number of matched findings; GREEN = matched / (matched + significant errors), 0 when
  nothing matched (``compute_green``), averaged over reports.

One departure, on purpose: a reply without a ``[Matched Findings]`` section is counted *unparseable* and left out
(reported in the ``green`` block of ``scores.json``), where GREEN's code would score it 0. A missing answer scores 0
without a call (it matches nothing). The reference-and-empty calibration rows of the judge engine are not asked.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from medtemporal.backends.base import GenerateConfig, Request
from medtemporal.errors import UnavailableError
from medtemporal.prompts import PromptSet
from medtemporal.registry import register
from medtemporal.runs import RunFolder
from medtemporal.schema import Item
from medtemporal.scoring.text_metrics import reference_of
from medtemporal.scoring.judge import Judge, Judgement, Rubric, Verdict, reduce_judged
from medtemporal.scoring.metrics import Answer

MAX_WORDS = 300
"""GREEN's ``make_prompt(max_len=300)``: each report's first 300 words."""
MAX_TOKENS = 1024
"""Our cap on a GREEN answer (GREEN's ``generate(max_length=2048)`` bounds prompt and answer together)."""
ERROR_TYPES = ("a", "b", "c", "d", "e", "f")
CRITERIA = ("matched", *ERROR_TYPES)
"""What a GREEN verdict holds: matched findings, then the count of each clinically significant error type."""
CHAT_TEMPLATE = Path(__file__).with_name("green_chat_template.jinja")
"""GREEN's chat layout (``<|user|>`` … ``</s>`` ``<|assistant|>``, green.py:113) for an OpenAI-compatible server."""

_SECTION = r"\[{}\]:\s*(.*?)(?:\n\s*\n|\Z)"


def _section(text: str, title: str) -> str | None:
    found = re.search(_SECTION.format(re.escape(title)), text, re.DOTALL)
    return None if found is None else found.group(1)


def parse_green(text: str | None) -> tuple[int, ...] | None:
    """``(matched, a, b, c, d, e, f)`` from a GREEN reply as GREEN's ``parse_error_counts`` reads it, or None when
    the reply has no ``[Matched Findings]`` section.

    >>> parse_green("[Clinically Significant Errors]:\\n(a) False report: 1. effusion\\n(b) Missing: 0.\\n\\n"
    ...             "[Matched Findings]:\\n2. cardiomegaly; edema")
    (2, 1, 0, 0, 0, 0, 0)
    """
    if text is None:
        return None
    if "[Explanation]:" in text:  # GREEN's clean_responses keeps what follows the explanation header
        text = text.split("[Explanation]:", 1)[1]
    text = text.replace("</s>", "").replace("<unk>", "")
    matched_text = _section(text, "Matched Findings")
    if matched_text is None:
        return None
    counts = re.findall(r"^\b\d+\b(?=\.)", matched_text)
    matched = int(counts[0]) if counts and not matched_text.startswith("No") else 0
    errors = [0] * len(ERROR_TYPES)
    significant = _section(text, "Clinically Significant Errors")
    if significant is not None and not significant.startswith("No"):
        lines = sorted(re.findall(r"\([a-f]\) .*", significant))
        prefixes = [f"({t}) " for t in ERROR_TYPES]
        if not lines:
            lines = sorted(re.findall(r"\([1-6]\) .*", significant))
            prefixes = [f"({k}) " for k in range(1, 7)]
        for position, prefix in enumerate(prefixes):
            for line in lines:
                if line.startswith(prefix):
                    count = re.findall(r"(?<=: )\b\d+\b(?=\.)", line)
                    if count:
                        errors[position] = int(count[0])
    return (matched, *errors)


def green_value(scores: Mapping[str, int]) -> float:
    """GREEN of one verdict: matched / (matched + significant errors), 0 when nothing matched (``compute_green``)."""
    matched = scores.get("matched", 0)
    return 0.0 if matched == 0 else matched / (matched + sum(scores.get(t, 0) for t in ERROR_TYPES))


@dataclass(frozen=True)
class GreenRubric(Rubric):
    """GREEN's prompt with both reports cut to `MAX_WORDS` words."""

    def request(self, item: Item, answer: str, config: GenerateConfig, prompts: PromptSet) -> Request:
        shorten = lambda text: " ".join(text.split()[:MAX_WORDS])  # noqa: E731
        return super().request(item.model_copy(update={"reference": shorten(reference_of(item))}), shorten(answer),
                               config, prompts)


RUBRIC = GreenRubric(name="GREEN (Stanford-AIMI/GREEN green_score)", user="green", criteria=CRITERIA,
                     parse=parse_green, parser="GREEN parse_error_counts; no [Matched Findings] section = unparseable")


def green_judge(uri: str, **policy: Any) -> Judge:
    """The GREEN model ``uri`` as the judge engine asks it: greedy, at most `MAX_TOKENS` tokens."""
    return Judge(uri, temperature=0.0, max_tokens=MAX_TOKENS, **policy)


_VERDICTS: ContextVar[Mapping[str, Verdict] | None] = ContextVar("green_verdicts", default=None)


@contextmanager
def green_verdicts(verdicts: Mapping[str, Verdict]) -> Iterator[None]:
    """Within this block ``green_score`` reads these verdicts (item id → verdict of its answer)."""
    token = _VERDICTS.set(verdicts)
    try:
        yield
    finally:
        _VERDICTS.reset(token)


def stored_verdicts(run_dir: str | Path, judge_id: str) -> dict[str, Verdict]:
    """The verdicts of GREEN pass ``judge_id`` as ``judgements.jsonl`` holds them (item id → its answer's verdict),
    read without writing (`medtemporal compare` of two runs scored with ``--green``)."""
    out: dict[str, Verdict] = {}
    for line in RunFolder(run_dir).judgements(Judgement).records():
        if line.judge == judge_id and line.kind == "answer" and line.status != "error":
            out[line.item_id] = Verdict(line.scores, line.status)
    return out


@register("metric", "green_score", higher_is_better=True, aggregation=reduce_judged, percent=True, on_request=True,
          request="score --green URI",
          needs="a GREEN model served by any backend (GREEN-radllama2-7b: 7B, a GPU)",
          source="GREEN (Ostmeier et al. 2024), Stanford-AIMI/GREEN green_score",
          description="GREEN: matched findings / (matched + clinically significant errors), by a GREEN model")
def green_score(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample (GREEN, judged) from the GREEN verdicts in force (`green_verdicts`); unparseable replies and
    failed calls are not judged.

    Raises:
        UnavailableError: no GREEN pass: score with ``--green URI``.
    """
    verdicts = _VERDICTS.get()
    if verdicts is None:
        raise UnavailableError("green_score needs a GREEN model; score with `medtemporal score RUN --green URI` "
                               "(e.g. hf:StanfordAIMI/GREEN-radllama2-7b).")
    out = np.zeros((len(items), 2))
    for row, item in enumerate(items):
        verdict = verdicts.get(item.id)
        if verdict is not None and verdict.status in ("ok", "missing"):
            out[row] = (green_value(verdict.scores or {}), 1.0)
    return out
