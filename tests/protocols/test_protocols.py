import asyncio
import hashlib
import json
from pathlib import Path

import pytest

from medtemporal.backends.base import GenerateConfig, ImagePart, Request, Response, TextPart
from medtemporal.benchmark import load, save
from medtemporal.contract import spec
from medtemporal.errors import InvalidInputError
from medtemporal.prompts import PromptSet
from medtemporal.protocols.direct import Direct
from medtemporal.protocols.stagewise import StageWise
from medtemporal.runner import run
from helpers.tiny import make_tiny_benchmark, tiny_items


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


def _micxr(item, **update):
    """``item`` as an MI-CXR item (the family whose spec names the stage-wise guidelines)."""
    return item.model_copy(update={"benchmark": "mi-cxr", **update})


def test_stagewise_decides_from_descriptions_without_images(tmp_path):
    bench = load(make_tiny_benchmark(tmp_path))
    item = _micxr(bench.items[0])
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
    item = _micxr(item, meta={**item.meta, "abnormalities": ["pleural effusion", "pneumothorax"]})
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
    """The runner records the hashes of `Solver.templates` and `templates_for`; one left out would go unrecorded."""
    bench = load(make_tiny_benchmark(tmp_path))
    item = _micxr(bench.items[0], task=task)
    prompts = RecordingPrompts()
    solver = StageWise(prompts)
    asyncio.run(solver.solve(item, bench.image_root, _record(["x", "A"])[1], GenerateConfig()))
    declared = {*solver.templates, *solver.templates_for(spec("mi-cxr"), {task})}
    assert prompts.rendered and prompts.rendered <= declared
    assert f"mi_cxr_stagewise_guideline_{task.split('-')[0].lower()}" in prompts.rendered


STAGEWISE_BEFORE = {
    "TEL": "e4811554d56a7871", "TEL+targets": "f74dd113876ae741", "ICR": "2d25714c87b5154d",
    "ICR+targets": "54a84d842eebb371", "ICR-V": "2d25714c87b5154d", "ICR-V+targets": "54a84d842eebb371",
    "GTS": "aee419a187961e1d", "GTS+targets": "661a8309b82fb267",
}
"""sha256 (16 hex digits) of both stage-wise requests (text and image paths) of an MI-CXR item per task, with and
without target abnormalities, as main 21ae791 sent them when the guidelines were keyed in the core protocol."""


def test_stagewise_sends_micxr_the_same_bytes_as_before_the_guidelines_moved_to_its_spec():
    base = tiny_items(1)[0]
    got = {}
    for task in ("TEL", "ICR", "ICR-V", "GTS"):
        for meta in ({}, {"abnormalities": ["pleural effusion", "pneumothorax"]}):
            item = _micxr(base, task=task, meta={**base.meta, **meta})
            seen, generate = _record(["T1 → T2: new opacity.", "B"])
            asyncio.run(StageWise().solve(item, Path("/data"), generate, GenerateConfig()))
            sent = [[p.text if isinstance(p, TextPart) else str(p.path) for m in r.messages for p in m.parts]
                    for r in seen]
            got[f"{task}{'+targets' if meta else ''}"] = hashlib.sha256(
                json.dumps(sent, ensure_ascii=False).encode()).hexdigest()[:16]
    assert got == STAGEWISE_BEFORE


def test_a_micxr_stagewise_run_records_the_same_templates_as_before(tmp_path):
    bench = make_tiny_benchmark(tmp_path)
    manifest = load(bench).manifest.model_copy(update={"benchmark": "mi-cxr"})
    save(bench, [_micxr(i) for i in tiny_items(3)], manifest)
    run(bench, "baseline:random", tmp_path / "r", protocol="stagewise", progress=False)
    templates = json.loads((tmp_path / "r" / "config.json").read_text())["protocol"]["templates"]
    assert templates == {"mcq_direct": "7a920330031dd92b", "stagewise_decide": "4517ab090febe557",
                         "stagewise_describe": "f9f9b53e4745927b", "mi_cxr_stagewise_guideline_gts": "3d115122ffdc2f1e",
                         "mi_cxr_stagewise_guideline_icr": "17fbc8a30c6ae50c", "mi_cxr_stagewise_guideline_tel": "ee6382522409a1c9"}


def test_stagewise_refuses_a_family_whose_spec_names_no_guideline(tmp_path):
    """The tiny test family names none: it is refused in one sentence before anything is written."""
    bench = make_tiny_benchmark(tmp_path)
    sentence = ("Benchmark 'tiny' names no stage-wise guideline for task 'TEL' (RunDefaults.protocol_options), "
                "so --protocol stagewise cannot run it; choose another protocol or name one with "
                "--protocol-option guidelines=TEMPLATE.")
    with pytest.raises(InvalidInputError) as exc:
        run(bench, "baseline:random", tmp_path / "r", protocol="stagewise", progress=False)
    assert str(exc.value) == sentence and not (tmp_path / "r" / "config.json").exists()
    item = load(bench).items[0]
    seen, generate = _record(["x", "A"])
    with pytest.raises(InvalidInputError, match="names no stage-wise guideline"):
        asyncio.run(StageWise().solve(item, Path("/data"), generate, GenerateConfig()))
    assert seen == []
