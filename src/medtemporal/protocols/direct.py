"""Direct zero-shot prompting: all images in order, the question, one call.

A backend that reads no pixels (the baselines: `Backend.reads_images` is False) needs no image files: a
benchmark imported without its images (MMXU's released questions, ``--no-verify-images``) runs, each missing
image named in the prompt instead ("Image PATH (not sent: this model reads no images)."), as 3D-RAD's ``ct``
protocol names volumes. Images that are there are sent as usual.
"""

from __future__ import annotations

from pathlib import Path

from medtemporal.backends.base import Backend, GenerateConfig, Part, TextPart
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
    _pixels = True

    def needs_images(self, backend: Backend) -> bool:
        """Only a backend that reads images needs the files (a baseline answers from the text alone)."""
        return backend.reads_images

    def check_backend(self, backend: Backend) -> None:
        """Note whether the backend reads pixels (if not, missing images are named, not sent)."""
        self._pixels = backend.reads_images

    def _parts(self, item: Item, image_root: Path) -> list[Part]:
        if self._pixels or all((image_root / ref.path).is_file() for ref in item.images):
            return image_parts(item.images, image_root)
        return [TextPart(f"{ref.label + ' ' if ref.label else ''}Image {ref.path} (not sent: this model reads no "
                         "images).") for ref in item.images]

    async def solve(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig) -> Solution:
        template, text = question_prompt(item, self.prompts)
        parts = (*self._parts(item, image_root), TextPart(text))
        response = await generate(answer_request(item, parts, config))
        return Solution(response.text, [{"template": template, "output": response.text}])
