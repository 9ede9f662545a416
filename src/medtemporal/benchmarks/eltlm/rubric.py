"""ELTLM's judging rubric (paper ``seeds/003`` appendix A, Table 3) and its metrics.

The rubric is a system role (template ``llm_judge_system``) and a user template
with ``[Question]``, ``[Model Answer]`` and ``[Reference Answer]`` blocks and
two binary criteria, Accuracy and Completeness (template ``llm_judge``); the
judge is told to output only two labelled lines, which `parse_verdict` reads
strictly. The core judge engine (`medtemporal.scoring.judge`) applies it for
``medtemporal score RUN --judge URI``. Metrics ``judge_accuracy`` and
``judge_completeness`` are the share of judged answers scoring 1 (Table 2).

``scripted-judge:overlap`` stands in for a model judge offline (demos, tests):
it reads the ``[Model Answer]`` and ``[Reference Answer]`` blocks and answers in
the rubric's format from ROUGE-L (``rouge_score``, stemming): Accuracy 1 when
the F-measure reaches ``accuracy_f`` (default 0.5), Completeness 1 when the
recall reaches ``completeness_recall`` (default 0.6). It is not a judge of
clinical truth.
"""

from __future__ import annotations

import re
from typing import Any

from medtemporal.family import Backend, Request, RequestError, Response, TextPart, UnknownNameError, register
from medtemporal.scoring.judge import Rubric, judged_share, reduce_judged

_LABELS = ("accuracy", "completeness")
_LINE = re.compile(
    r"^[\s>*_#`-]*(?:\d+[.)]\s*)?[*_`]*\s*(accuracy|completeness)\s*(?:\(\s*0\s*/\s*1\s*\))?\s*[*_`]*\s*[:=：]"
    r"\s*[*_`]*\s*([01])(?:\s*/\s*1)?(?![\d.,]\d|\d)(.*)$",
    re.IGNORECASE,
)
_MENTION = re.compile(r"\b(accuracy|completeness)\b", re.IGNORECASE)


def parse_verdict(text: str | None) -> tuple[int, int] | None:
    """(accuracy, completeness) from a judge's output, or None when it cannot be read strictly.

    Each score must sit on its own line as ``Label: 0|1`` (``Label (0/1): 1``,
    ``**Accuracy:** 1``, ``Accuracy: 1/1`` and a numbered or bulleted line are
    read; prose on other lines is ignored). A missing label, a label whose
    line carries no 0/1 score, two different scores for one label, or both
    labels on one line make the output unparseable.

    >>> parse_verdict("Accuracy: 1\\nCompleteness: 0")
    (1, 0)
    >>> parse_verdict("Accuracy: 1") is None
    True
    """
    if not text:
        return None
    found: dict[str, set[int]] = {k: set() for k in _LABELS}
    for line in text.splitlines():
        mentions = {m.lower() for m in _MENTION.findall(line)}
        match = _LINE.match(line)
        if match:
            label = match.group(1).lower()
            if _MENTION.search(match.group(3)) and mentions >= set(_LABELS):
                return None  # both labels on one line
            found[label].add(int(match.group(2)))
        elif mentions and re.match(r"^[\s>*_#`-]*(?:\d+[.)]\s*)?[*_`]*\s*(accuracy|completeness)\s*[*_`]*\s*[:=：]",
                                   line, re.IGNORECASE):
            return None  # a label line whose score is not 0 or 1
    if any(len(v) != 1 for v in found.values()):
        return None
    return found["accuracy"].pop(), found["completeness"].pop()


RUBRIC = Rubric(
    name="ELTLM appendix A, Table 3: binary Accuracy and Completeness",
    system="llm_judge_system",
    user="llm_judge",
    criteria=_LABELS,
    parse=parse_verdict,
    parser="strict two-line (medtemporal.benchmarks.eltlm.rubric.parse_verdict)",
)

register("metric", "judge_accuracy", higher_is_better=True, aggregation=reduce_judged, percent=True,
         needs_judge=True, description="LLM judge Accuracy (ELTLM appendix A): share of judged answers scored 1; "
         "unparseable verdicts left out and counted apart")(judged_share("accuracy"))
register("metric", "judge_completeness", higher_is_better=True, aggregation=reduce_judged, percent=True,
         needs_judge=True, description="LLM judge Completeness (ELTLM appendix A): share of judged answers "
         "scored 1; unparseable verdicts left out and counted apart")(judged_share("completeness"))


_BLOCK = re.compile(
    r"\[Model Answer\]\n(?P<answer>.*?)\n\[Reference Answer\]\n(?P<reference>.*?)\n\nEvaluation Criteria:", re.DOTALL
)


class ScriptedJudge(Backend):
    """Verdicts from answer/reference overlap, in the judge's output format."""

    cacheable = False

    def __init__(self, uri: str, accuracy_f: float = 0.5, completeness_recall: float = 0.6) -> None:
        super().__init__(uri=uri, concurrency=16)
        self.accuracy_f = accuracy_f
        self.completeness_recall = completeness_recall

    async def generate(self, request: Request) -> Response:
        text = "\n".join(p.text for m in request.messages for p in m.parts if isinstance(p, TextPart))
        match = _BLOCK.search(text)
        if match is None:
            raise RequestError(f"{self.uri} judges only requests written with the llm_judge prompt.",
                               reason="not_a_judge_request")
        from rouge_score import rouge_scorer

        answer, reference = match.group("answer").strip(), match.group("reference").strip()
        score = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True).score(reference, answer)["rougeL"]
        accuracy = int(bool(answer) and score.fmeasure >= self.accuracy_f)
        completeness = int(bool(answer) and score.recall >= self.completeness_recall)
        return Response(f"Accuracy: {accuracy}\nCompleteness: {completeness}", model=self.uri)

    def identity(self) -> dict[str, Any]:
        return {"uri": self.uri, "accuracy_f": self.accuracy_f, "completeness_recall": self.completeness_recall}


@register("backend", "scripted-judge", description="a scripted LLM-judge stand-in from ROUGE-L overlap (demos, tests)",
          example="scripted-judge:overlap")
def load_scripted_judge(uri: str, target: str, *, accuracy_f: float = 0.5,
                        completeness_recall: float = 0.6) -> Backend:
    """The scripted judge named by ``target`` (only ``overlap``)."""
    if target != "overlap":
        raise UnknownNameError(f"Unknown scripted judge {target!r}. Available: overlap.")
    return ScriptedJudge(uri, accuracy_f, completeness_recall)
