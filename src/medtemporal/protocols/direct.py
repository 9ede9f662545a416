"""Direct zero-shot prompting: all images in order, the question, one call."""

from __future__ import annotations

from pathlib import Path

from medtemporal.backends.base import GenerateConfig, TextPart
from medtemporal.contract import BenchmarkSpec, spec
from medtemporal.prompts import PromptSet
from medtemporal.protocols.base import Generate, Solution, Solver, answer_request, image_parts
from medtemporal.registry import register
from medtemporal.schema import Item


def format_options(options: dict[str, str]) -> str:
    """Options as ``A. text`` lines in letter order."""
    return "\n".join(f"{letter}. {text}" for letter, text in options.items())


def question_prompt(item: Item, prompts: PromptSet) -> tuple[str, str]:
    """The benchmark's template for ``item``'s task, rendered; returns (template name, text)."""
    name = BenchmarkSpec.for_task(spec(item.benchmark).prompts, item.task, "mcq_direct")
    text = prompts.render(
        name, question=item.question, options=format_options(item.options), n_images=len(item.images)
    )
    return name, text


@register("protocol", "direct", description="zero-shot: images in order, question, one call")
class Direct(Solver):
    """One call with every image, captioned, then the question."""

    name = "direct"

    async def solve(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig) -> Solution:
        template, text = question_prompt(item, self.prompts)
        parts = (*image_parts(item.images, image_root), TextPart(text))
        response = await generate(answer_request(item, parts, config))
        return Solution(response.text, [{"template": template, "output": response.text}])
