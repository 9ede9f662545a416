"""Baselines that expose 3D-RAD: answers read from the question text alone (URI scheme ``rad3d``).

``rad3d:history`` reads the bracketed history of a Task 6 question: any 1 →
A (Refractory) if the last earlier value is 1, else B (Resolved); all 0 → D
(No Abnormality). ``rad3d:history-any``: any 1 → A, else D. A question without
a history gets the "absent" answer (D with four options, B = No for Task 4),
so Task 4 and 5 rows score as ``baseline:constant-B`` / ``constant-D``.
On the released files (FACTS §1.1): Task 6 macro 75.92 and 70.18.
"""

from __future__ import annotations

from typing import Any, Sequence

from medtemporal.family import Backend, Request, RequestError, Response, TextPart, UnknownNameError, register
from medtemporal.benchmarks.rad3d.release import parse_history

RULES = ("history", "history-any")


def history_answer(question: str, choices: Sequence[str], rule: str = "history") -> str:
    """The baseline's letter for ``question`` (see the module doc).

    >>> history_answer("Prior x timeline: [1, 0]. ...", "ABCD"), history_answer("Is x present?", "AB")
    ('B', 'B')
    """
    history = parse_history(question)
    if history is None or len(choices) < 4:
        return "D" if len(choices) >= 4 else "B"
    if not any(history):
        return "D"
    if rule == "history-any":
        return "A"
    return "A" if history[-1] else "B"


class HistoryBaseline(Backend):
    """Answers Task 6 from the history in its text (no image is looked at)."""

    cacheable = False
    takes_volumes = True  # looks at no image
    reads_images = False
    answers_open = False  # answers from the choices only

    def __init__(self, uri: str, rule: str) -> None:
        super().__init__(uri=uri, concurrency=64)
        self.rule = rule

    async def generate(self, request: Request) -> Response:
        if not request.choices:
            raise RequestError(f"{self.uri} answers only closed questions.", reason="no_answer_space")
        text = " ".join(p.text for m in request.messages for p in m.parts if isinstance(p, TextPart))
        return Response(request.answer_format.format(history_answer(text, request.choices, self.rule)), model=self.uri)

    def identity(self) -> dict[str, Any]:
        return {"uri": self.uri, "rule": self.rule}


@register("backend", "rad3d", description="3D-RAD question-only baselines: history, history-any",
          example="rad3d:history")
def load_rad3d_baseline(uri: str, target: str) -> Backend:
    """``rad3d:history`` or ``rad3d:history-any``."""
    if target not in RULES:
        raise UnknownNameError(f"Unknown 3D-RAD baseline {target!r}; available: {', '.join(RULES)}.")
    return HistoryBaseline(uri, target)
