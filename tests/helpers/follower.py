"""A scripted, instruction-following stand-in for a VLM, for round trips through other tools (not a model).

Its reply is a function of the prompt text alone, so the same prompt gets the same reply in
``medtemporal run`` (backend ``follower:`` here) and in VLMEvalKit or lmms-eval (`Follower.reply`), and
scores can only differ if the tools disagree on the prompt or on reading the reply. It recognises the
item whose question (and option texts, where listed) the prompt contains (from the benchmark's ``items.jsonl``; plain
dicts, so it also runs where medtemporal is not installed), answers right for about half of the items
(by a hash of the item id), and writes its answer in the format the prompt asks for: TemMed's
"My answer is [option]", "'Yes' or 'No'", SkillQA's JSON order, a bare option letter, or a sentence.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

WRONG_TEXT = "No significant interval change."


def read_items(bench: str | Path) -> list[dict[str, Any]]:
    """The items of a benchmark folder as dicts."""
    return [json.loads(line) for line in (Path(bench) / "items.jsonl").read_text(encoding="utf-8").splitlines() if line]


class Follower:
    """Replies to prompts about ``items`` (dicts with ``id, question, options, answer_type, answer``)."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = sorted(items, key=lambda it: -len(it["question"]))

    def match(self, text: str) -> dict[str, Any] | None:
        """The item whose question appears in ``text`` (longest first), preferring one whose option texts all
        appear too (prompts that name the options by letter only, such as TemMed's pairs, do not list them)."""
        found = [item for item in self.items if item["question"] in text]
        listed = [item for item in found if all(v in text for v in item["options"].values())]
        return (listed or found or [None])[0]

    def reply(self, text: str) -> str:
        """The reply to a prompt."""
        item = self.match(text)
        if item is None:
            return "I cannot tell which question this is."
        right = int(hashlib.sha256(item["id"].encode()).hexdigest()[:8], 16) % 2 == 0
        letters = sorted(item["options"])
        if item["answer_type"] == "ordering":
            order = list(item["answer"]) if right else list(reversed(item["answer"]))
            return json.dumps({"order": order, "explanation": "The frames follow the procedure from first to last step."})
        if item["answer_type"] == "yesno" or "'Yes' or 'No'" in text:
            return item["answer"] if right else ("No" if item["answer"] == "Yes" else "Yes")
        if letters:
            letter = item["answer"] if right else next(x for x in letters if x != item["answer"])
            return f"My answer is {letter}." if "My answer is [option]" in text else letter
        return item["answer"] if right else WRONG_TEXT


def register_backend() -> None:
    """Register ``follower:<benchmark folder>`` as a medtemporal backend (idempotent)."""
    from medtemporal.backends.base import Backend, Request, Response, TextPart
    from medtemporal.registry import names, register

    if "follower" in names("backend"):
        return

    class FollowerBackend(Backend):
        cacheable = False

        def __init__(self, uri: str, bench: str) -> None:
            super().__init__(uri=uri, concurrency=8)
            self.follower = Follower(read_items(bench))

        async def generate(self, request: Request) -> Response:
            text = "\n".join(p.text for m in request.messages for p in m.parts if isinstance(p, TextPart))
            return Response(self.follower.reply(text))

    register("backend", "follower", description="scripted instruction follower for interop tests (not a model)",
             example="follower:/path/to/bench")(lambda uri, target, **_: FollowerBackend(uri, target))
