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

from medtemporal.backends.base import GenerateConfig, ImagePart, Message, Request, TextPart
from medtemporal.prompts import PromptSet
from medtemporal.protocols.base import Generate, Solution, Solver, answer_request
from medtemporal.protocols.direct import question_prompt
from medtemporal.protocols.side_model import SideModel
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
        self._side = SideModel(captioner)

    def side_models(self) -> tuple[SideModel, ...]:
        return (self._side,)

    async def describe(self, item: Item, image_root: Path, generate: Generate,
                       config: GenerateConfig) -> tuple[list[str], str, list[dict[str, Any]]]:
        """Per-image descriptions (time order), the temporal summary and the calls made."""
        describe = self.prompts.render("caption_image")
        calls: list[dict[str, Any]] = []
        descriptions = []
        for k, ref in enumerate(item.images, 1):
            request = Request((Message("user", (ImagePart(image_root / ref.path), TextPart(describe))),), config)
            out = await self._side.generate(request, generate)
            descriptions.append(out.text.strip())
            calls.append({"stage": "caption", "image": k, "output": out.text})
        prompt = self.prompts.render("caption_summary", n_images=len(item.images), descriptions=listed(descriptions))
        summary = await self._side.generate(Request((Message("user", (TextPart(prompt),)),), config), generate)
        calls.append({"stage": "summary", "output": summary.text})
        return descriptions, summary.text.strip(), calls

    async def solve(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig) -> Solution:
        descriptions, summary, calls = await self.describe(item, image_root, generate, config)
        template, question = question_prompt(item, self.prompts)
        text = self.prompts.render("caption_then_reason", n_images=len(item.images),
                                   descriptions=listed(descriptions), summary=summary, prompt=question)
        response = await generate(answer_request(item, [TextPart(text)], config))
        calls.append({"stage": "answer", "template": template, "output": response.text})
        return Solution(response.text, calls)


def listed(descriptions: list[str], label: str = "Image {k}: ") -> str:
    """Descriptions one per line, each after its label (``Image 1: ...``; appendix F writes ``Image1: ...``)."""
    return "\n".join(label.format(k=k) + d for k, d in enumerate(descriptions, 1))
