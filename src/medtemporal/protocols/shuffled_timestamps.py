"""Shuffled images with explicit dates (ELTLM §4.3.2, Fig. 4): does the model read time from labels?

The item's images are shown in a seeded random order other than the time
order (for two or more images), each captioned with the date it was taken
(``ImageRef.timestamp``: the study dates of the metadata, shifted as MIMIC
shifts them), and the prompt says to read them by date (template
``shuffled_timestamps`` around the family's own question prompt). The paper's
dates were synthetic (GPT-5-mini, appendix F); real dates keep the intervals
true. The order shown is kept in the prediction's ``calls``, so runs compare
item by item with the direct run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from medtemporal.backends.base import GenerateConfig, ImagePart, Part, TextPart
from medtemporal.errors import InvalidInputError
from medtemporal.prompts import PromptSet
from medtemporal.protocols.base import Generate, Solution, Solver, answer_request
from medtemporal.protocols.direct import question_prompt
from medtemporal.registry import register
from medtemporal.schema import Item, content_hash


def shuffled_order(item: Item, seed: int) -> list[int]:
    """A permutation of the item's image indices, fixed by ``seed`` and the item, not the identity when n ≥ 2."""
    n = len(item.images)
    rng = np.random.default_rng([seed, int(content_hash([item.id], 12), 16)])
    while True:
        order = [int(i) for i in rng.permutation(n)]
        if n < 2 or order != sorted(order):
            return order


@register("protocol", "shuffled-timestamps",
          description="images in seeded random order, each labelled with its date; the model reads by date")
class ShuffledTimestamps(Solver):
    """One call with the images shuffled and dated."""

    name = "shuffled-timestamps"
    templates = ("shuffled_timestamps",)

    def __init__(self, prompts: PromptSet | None = None, seed: int = 0) -> None:
        super().__init__(prompts)
        self.seed = seed

    async def solve(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig) -> Solution:
        if any(not ref.timestamp for ref in item.images):
            raise InvalidInputError(
                f"Item {item.id} has images without a date; shuffled-timestamps needs dated images "
                "(build the benchmark with its image metadata, e.g. --mimic-cxr-jpg)."
            )
        order = shuffled_order(item, self.seed)
        parts: list[Part] = []
        for i in order:
            ref = item.images[i]
            parts += [TextPart(f"Image taken on {ref.timestamp[:10]}:"), ImagePart(image_root / ref.path)]  # type: ignore[index]
        template, text = question_prompt(item, self.prompts)
        prompt = self.prompts.render("shuffled_timestamps", n_images=len(order), prompt=text)
        response = await generate(answer_request(item, (*parts, TextPart(prompt)), config))
        return Solution(response.text, [{"template": template, "shown_order": order, "output": response.text}])
