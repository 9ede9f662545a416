"""Caption, then reason from text only (ELTLM §4.3.3, Fig. 5, appendix G).

A captioner describes each image alone (template ``caption_image``), then
writes a time-focused summary of the descriptions (``caption_summary``); the
answering model gets only the descriptions, the summary and the question
(``caption_then_reason`` around the family's question prompt), no images.
The captioner is the run's model unless ``captioner=URI`` names another
(the paper used GPT-5 and GPT-5-mini); its calls then go through its own
backend with retries and the shared response cache. The paper's caption
prompts are unpublished: these are ours. All stages are kept in ``calls``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medtemporal.backends.base import Backend, GenerateConfig, ImagePart, Message, Request, Response, TextPart
from medtemporal.prompts import PromptSet
from medtemporal.protocols.base import Generate, Solution, Solver, answer_request
from medtemporal.protocols.direct import question_prompt
from medtemporal.registry import register
from medtemporal.schema import Item


@register("protocol", "caption-then-reason",
          description="a captioner describes each image and summarises the series; the model answers from text only")
class CaptionThenReason(Solver):
    """Per-image descriptions and a temporal summary, then a text-only answer."""

    name = "caption-then-reason"
    templates = ("caption_image", "caption_summary", "caption_then_reason")

    def __init__(self, prompts: PromptSet | None = None, captioner: str | None = None) -> None:
        super().__init__(prompts)
        self.captioner = captioner
        self._backend: Backend | None = None
        self._cache: Any = None

    async def _caption(self, request: Request, generate: Generate) -> Response:
        if self.captioner is None:
            return await generate(request)
        from medtemporal.backends import load
        from medtemporal.runner.cache import ResponseCache, default_cache_path, request_key
        from medtemporal.runner.retry import RetryPolicy, call_with_retries

        if self._backend is None:
            self._backend = load(self.captioner)
            self._cache = ResponseCache(default_cache_path()) if self._backend.cacheable else None
        backend = self._backend
        key = request_key(backend.identity(), request)
        cached = self._cache.get(key) if self._cache is not None else None
        if cached is not None:
            return cached
        policy = RetryPolicy()
        response = await call_with_retries(lambda: backend.generate(request), policy,
                                           timeout_s=policy.timeout_s if backend.endpoint else None)
        if self._cache is not None:
            self._cache.put(key, response)
        return response

    async def solve(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig) -> Solution:
        describe = self.prompts.render("caption_image")
        calls: list[dict[str, Any]] = []
        descriptions = []
        for k, ref in enumerate(item.images, 1):
            out = await self._caption(Request((Message("user", (ImagePart(image_root / ref.path),
                                                                  TextPart(describe))),), config), generate)
            descriptions.append(f"Image {k}: {out.text.strip()}")
            calls.append({"stage": "caption", "image": k, "output": out.text})
        listed = "\n".join(descriptions)
        n = len(item.images)
        summary = await self._caption(Request((Message("user", (TextPart(self.prompts.render(
            "caption_summary", n_images=n, descriptions=listed)),)),), config), generate)
        calls.append({"stage": "summary", "output": summary.text})
        template, question = question_prompt(item, self.prompts)
        text = self.prompts.render("caption_then_reason", n_images=n, descriptions=listed,
                                   summary=summary.text.strip(), prompt=question)
        response = await generate(answer_request(item, [TextPart(text)], config))
        calls.append({"stage": "answer", "template": template, "output": response.text})
        return Solution(response.text, calls)
