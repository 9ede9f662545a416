import asyncio

import pytest

from medtemporal.backends.base import GenerateConfig, ImagePart, Request, Response, TextPart
from medtemporal.benchmark import load
from medtemporal.prompts import PromptSet
from medtemporal.protocols.direct import Direct
from medtemporal.protocols.stagewise import StageWise
from helpers.tiny import make_tiny_benchmark


class RecordingPrompts(PromptSet):
    """The built-in prompts, remembering which templates were rendered."""

    def __init__(self) -> None:
        super().__init__()
        self.rendered: set[str] = set()

    def render(self, name: str, **values: object) -> str:
        self.rendered.add(name)
        return super().render(name, **values)


def _record(replies):
    seen: list[Request] = []

    async def generate(request: Request) -> Response:
        seen.append(request)
        return Response(replies[len(seen) - 1])

    return seen, generate


def test_direct_sends_captioned_images_in_visit_order_then_question(tmp_path):
    bench = load(make_tiny_benchmark(tmp_path))
    item = bench.items[0]
    seen, generate = _record(["B"])
    solution = asyncio.run(Direct().solve(item, bench.image_root, generate, GenerateConfig()))
    assert solution.output == "B"
    (request,) = seen
    parts = request.messages[0].parts
    captions = [p.text for p in parts[:-1] if isinstance(p, TextPart)]
    images = [p.path.name for p in parts if isinstance(p, ImagePart)]
    assert captions == ["T1:", "T2:", "T3:", "T4:", "T5:"]
    assert images == [f"p0_{v}.png" for v in range(1, 6)]
    assert item.question in parts[-1].text and "E. No appearance" in parts[-1].text
    assert request.choices == ("A", "B", "C", "D", "E") and request.key == "single_emergence"
    assert request.answer_format == "{}"  # the tiny benchmark declares no answer format


def test_stagewise_decides_from_descriptions_without_images(tmp_path):
    bench = load(make_tiny_benchmark(tmp_path))
    item = bench.items[0]
    seen, generate = _record(["T1 → T2: new opacity.", "A"])
    solution = asyncio.run(StageWise().solve(item, bench.image_root, generate, GenerateConfig()))
    assert solution.output == "A"
    describe, decide = seen
    assert describe.n_images == 5 and describe.choices is None
    assert "T4 → T5" in describe.messages[0].parts[-1].text
    assert decide.n_images == 0
    assert "T1 → T2: new opacity." in decide.messages[0].parts[0].text
    assert [c["stage"] for c in solution.calls] == ["describe", "decide"]


def test_stagewise_stage_one_sees_the_choices_and_target_abnormalities(tmp_path):
    """Figures 17-24 of the MI-CXR paper: stage 1 describes what the problem's choices name."""
    bench = load(make_tiny_benchmark(tmp_path))
    item = bench.items[0]
    item = item.model_copy(update={"meta": {**item.meta, "abnormalities": ["pleural effusion", "pneumothorax"]}})
    seen, generate = _record(["T1-T2: effusion appears.", "B"])
    asyncio.run(StageWise().solve(item, bench.image_root, generate, GenerateConfig()))
    describe = seen[0].messages[0].parts[-1].text
    decide = seen[1].messages[0].parts[0].text
    for text in (describe, decide):
        assert all(f"{k}. {v}" in text for k, v in item.options.items())
        assert "Target Abnormalities: pleural effusion, pneumothorax" in text
    assert "Do not choose an answer yet" in describe and "##" not in describe


@pytest.mark.parametrize("task", ["TEL", "ICR", "GTS", "ICR-V"])
def test_stagewise_declares_every_template_it_renders(tmp_path, task):
    """The runner records the hashes of `Solver.templates`; a template left out would go unrecorded."""
    bench = load(make_tiny_benchmark(tmp_path))
    item = bench.items[0].model_copy(update={"task": task})
    prompts = RecordingPrompts()
    asyncio.run(StageWise(prompts).solve(item, bench.image_root, _record(["x", "A"])[1], GenerateConfig()))
    assert prompts.rendered and prompts.rendered <= set(StageWise.templates)
