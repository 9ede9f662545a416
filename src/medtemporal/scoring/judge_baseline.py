"""A scripted judge backend for demos and tests: ``scripted-judge:overlap``.

It reads the ``[Model Answer]`` and ``[Reference Answer]`` blocks of a judge
request (`medtemporal.scoring.judge`, prompt ``llm_judge``) and answers in the
rubric's two-line format from ROUGE-L (``rouge_score``, stemming) between the
two: Accuracy 1 when the F-measure reaches ``accuracy_f`` (default 0.5),
Completeness 1 when the recall reaches ``completeness_recall`` (default 0.6).
An empty answer scores 0/0, the reference itself 1/1. It stands in for a
model judge where no network is allowed; it is not a judge of clinical truth.
"""

from __future__ import annotations

import re
from typing import Any

from medtemporal.backends.base import Backend, Request, RequestError, Response, TextPart
from medtemporal.errors import UnknownNameError
from medtemporal.registry import register

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
