"""Stage-wise probing (MI-CXR appendix E.2): describe the intervals, then decide.

Stage 1 sees every image, the problem, its answer choices and (for items
about several abnormalities) the target abnormalities, as the paper's figures
17-24 show them, and writes one description per consecutive interval under a
task-specific guideline; it is told not to answer. Stage 2 sees only those
descriptions with the problem and its choices, and picks one option. Both
outputs are kept in the prediction's ``calls``.

The guideline of each task is a template named by the protocol's option ``guidelines`` (task → template, key
``"*"`` for other tasks; one name for every task): the user's ``--protocol-option guidelines=NAME``, else the
family's (`medtemporal.contract.RunDefaults.protocol_options`; MI-CXR's for TEL, ICR and GTS). A family that
names none is refused before anything runs, never given another paper's guideline.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from medtemporal.backends.base import GenerateConfig, Message, Request, TextPart
from medtemporal.contract import BenchmarkSpec, spec
from medtemporal.errors import InvalidInputError
from medtemporal.protocols.base import Generate, Solution, Solver, answer_request, image_parts
from medtemporal.prompts import PromptSet
from medtemporal.protocols.direct import format_options
from medtemporal.registry import register
from medtemporal.schema import Item


def intervals(n_images: int) -> str:
    """``T1 → T2, T2 → T3, ...`` for ``n_images`` visits."""
    return ", ".join(f"T{i} → T{i + 1}" for i in range(1, n_images))


@register("protocol", "stagewise", description="two stages: interval descriptions with images, then a text-only decision")
class StageWise(Solver):
    """Describe interval changes with the images, then decide from the descriptions alone."""

    name = "stagewise"
    templates = ("stagewise_describe", "stagewise_decide")

    def __init__(self, prompts: PromptSet | None = None, guidelines: str | Mapping[str, str] | None = None) -> None:
        super().__init__(prompts)
        self.guidelines = {"*": guidelines} if isinstance(guidelines, str) else guidelines

    def templates_for(self, bench: BenchmarkSpec, tasks: Collection[str]) -> tuple[str, ...]:
        """Every guideline template in force for ``bench``, once each task's guideline is checked (see `guideline`)."""
        for task in tasks:
            guideline(bench, task, self.guidelines)
        return tuple(dict.fromkeys(_chosen(bench, self.guidelines).values()))

    async def solve(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig) -> Solution:
        n = len(item.images)
        guideline_text = self.prompts.render(guideline(spec(item.benchmark), item.task, self.guidelines))
        shown = {"question": item.question, "options": format_options(item.options), "targets": targets(item),
                 "n_images": n}
        describe = self.prompts.render("stagewise_describe", intervals=intervals(n), guideline=guideline_text,
                                       **shown)
        first = await generate(
            Request((Message("user", (*image_parts(item.images, image_root), TextPart(describe))),), config, item=item.id)
        )
        decide = self.prompts.render("stagewise_decide", descriptions=first.text.strip(), **shown)
        second = await generate(answer_request(item, [TextPart(decide)], config))
        calls = [{"stage": "describe", "output": first.text}, {"stage": "decide", "output": second.text}]
        return Solution(second.text, calls)


def guideline(bench: BenchmarkSpec, task: str, given: Mapping[str, str] | None = None) -> str:
    """The guideline template for ``task`` (or for every task, key ``"*"``): in ``given`` (the protocol's
    ``guidelines`` option), else in ``bench``'s default options of this protocol.

    Raises:
        InvalidInputError: neither names one for ``task``.
    """
    name = BenchmarkSpec.for_task(_chosen(bench, given), task)
    if name is None:
        raise InvalidInputError(
            f"Benchmark {bench.name!r} names no stage-wise guideline for task {task!r} "
            "(RunDefaults.protocol_options), so --protocol stagewise cannot run it; choose another protocol or "
            "name one with --protocol-option guidelines=TEMPLATE."
        )
    return name


def _chosen(bench: BenchmarkSpec, given: Mapping[str, str] | None) -> Mapping[str, str]:
    """Task → guideline template: ``given``, else ``bench``'s default ``guidelines`` option of this protocol."""
    return given if given is not None else bench.defaults.protocol_options.get(StageWise.name, {}).get("guidelines", {})


def targets(item: Item) -> str:
    """``Target Abnormalities: a, b`` when the item names several (figure 22), else empty."""
    names = item.meta.get("abnormalities")
    if isinstance(names, list) and len(names) > 1:
        return "Target Abnormalities: " + ", ".join(str(n) for n in names)
    return ""
