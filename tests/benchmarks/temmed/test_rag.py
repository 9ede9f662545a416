"""TemMed protocols: reference layout, top-k, the top-1 hack, the image ablations, and a full run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from helpers.temmed import temmed_bench, temmed_data  # noqa: F401 (fixtures)

from medtemporal.backends.base import GenerateConfig, ImagePart, Request, RequestError, Response
from medtemporal.benchmark import load
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.prompts import PromptSet
from medtemporal.benchmarks.temmed.rag import RagMultimodal, RagText, RandomCurrent, RandomHistorical, RetrievalTop1
from medtemporal.registry import lookup


def _solve(solver, item, root: Path) -> tuple[str, list[Request]]:
    seen: list[Request] = []

    async def generate(request: Request) -> Response:
        seen.append(request)
        return Response("My answer is A" if item.task == "image_pair" else "Yes")

    solution = asyncio.run(solver.solve(item, root, generate, GenerateConfig()))
    return solution.output, seen


async def _reply(request: Request) -> Response:
    return Response("Stable.")


def _layout(request: Request) -> list[str]:
    return ["IMG:" + str(p.path) if isinstance(p, ImagePart) else "TXT:" + p.text for p in request.messages[0].parts]


@pytest.mark.parametrize("k", [1, 3, 5])
def test_multimodal_shows_k_reference_pairs_then_the_item(temmed_bench: Path, k: int) -> None:
    bench = load(temmed_bench)
    item = next(i for i in bench.items if i.task == "vqa")
    _, (request,) = _solve(RagMultimodal(k=k), item, bench.image_root)
    layout = _layout(request)
    images = [x[4:] for x in layout if x.startswith("IMG:")]
    refs = item.meta["retrieval"]["pairwise"][:k]
    want = [str(bench.image_root / p) for r in refs for p in (r["historical"], r["current"])]
    want += [str(bench.image_root / ref.path) for ref in item.images]
    assert images == want
    text = "\n".join(x for x in layout if x.startswith("TXT:"))
    assert all(r["report"] in text for r in refs)
    assert text.rstrip().endswith(f"Question: {item.question}")
    before_target = layout[layout.index("IMG:" + want[-2]) - 1]
    assert before_target.endswith("Last visit image:")
    assert request.choices == ("Yes", "No")


def test_text_rag_shows_reports_only_and_can_use_another_retriever(temmed_bench: Path) -> None:
    bench = load(temmed_bench)
    item = next(i for i in bench.items if i.task == "report")
    solution = asyncio.run(RagText(k=2, retriever="image").solve(item, bench.image_root, _reply, GenerateConfig()))
    assert solution.calls[0]["retriever"] == "image"
    assert solution.calls[0]["references"] == [r["id"] for r in item.meta["retrieval"]["image"][:2]]
    _, (request,) = _solve(RagText(k=2, retriever="image"), item, bench.image_root)
    layout = _layout(request)
    assert sum(x.startswith("IMG:") for x in layout) == 2
    text = "\n".join(layout)
    assert "Report 1:" in text and "Report 2:" in text
    assert "You are provided with 2 reference X-ray image reports:" in text and "based on these examples." in text
    assert item.meta["retrieval"]["image"][1]["report"] in text
    _, (single,) = _solve(RagText(), item, bench.image_root)
    single_text = "\n".join(_layout(single))
    # top-1 is the release's prompt verbatim (Eval/Report_GPT_RAG_Report.py, Text1-Text4)
    assert ("You are a professional radiologist. You are provided with a reference X-ray image report:\nReport: "
            in single_text and "generate reports based on this example.\n\nNow, you are given two new X-ray images "
            "from another patient:" in single_text and "##" not in single_text)
    with pytest.raises(InvalidInputError, match="no 'text' references"):
        _solve(RagText(retriever="text"), item, bench.image_root)


@pytest.mark.parametrize("solver", [RagText, RagMultimodal])
def test_rag_declares_every_template_it_renders(temmed_bench: Path, solver) -> None:
    rendered: set[str] = set()

    class Recording(PromptSet):
        def render(self, name: str, **values: object) -> str:
            rendered.add(name)
            return super().render(name, **values)

    bench = load(temmed_bench)
    for task in ("vqa", "report", "image_pair"):
        _solve(solver(Recording()), next(i for i in bench.items if i.task == task), bench.image_root)
    assert rendered == set(solver.templates)


def test_image_pair_rag_uses_statement_retrieval(temmed_bench: Path) -> None:
    bench = load(temmed_bench)
    item = next(i for i in bench.items if i.task == "image_pair")
    _, (request,) = _solve(RagMultimodal(retriever="pairwise"), item, bench.image_root)
    layout = _layout(request)
    assert sum(x.startswith("IMG:") for x in layout) == 2 + 6
    assert request.answer_format == "My answer is {}." and request.choices == ("A", "B", "C")
    assert item.meta["retrieval"]["tfidf"][0]["report"] in "\n".join(layout)
    assert any(x.endswith("A:\nLast visit image:") for x in layout)


def test_top1_hack_copies_the_top_report_without_a_model(temmed_bench: Path) -> None:
    bench = load(temmed_bench)
    report = next(i for i in bench.items if i.task == "report")
    output, requests = _solve(RetrievalTop1(), report, bench.image_root)
    assert output == report.meta["retrieval"]["pairwise"][0]["report"] and requests == []
    with pytest.raises(RequestError, match="report-generation items only"):
        _solve(RetrievalTop1(), next(i for i in bench.items if i.task == "vqa"), bench.image_root)


@pytest.mark.parametrize(("solver", "role"), [(RandomHistorical(), "historical"), (RandomCurrent(), "current")])
def test_ablations_replace_one_image(temmed_bench: Path, solver, role: str) -> None:
    bench = load(temmed_bench)
    item = next(i for i in bench.items if i.task == "vqa")
    _, (request,) = _solve(solver, item, bench.image_root)
    images = [str(p.path) for p in request.messages[0].parts if isinstance(p, ImagePart)]
    new = str(bench.image_root / item.meta["ablation"][f"random_{role}"])
    keep = next(r for r in item.images if r.role != role)
    assert new in images and str(bench.image_root / keep.path) in images and len(images) == 2


def test_options_are_checked() -> None:
    with pytest.raises(InvalidInputError, match="k=6 is out of range"):
        RagText(k=6)
    with pytest.raises(InvalidInputError, match="not a number"):
        RagText(k="many")
    with pytest.raises(InvalidInputError, match="Unknown retriever"):
        RagMultimodal(retriever="bm25")
    assert lookup("protocol", "rag-multimodal").obj is RagMultimodal


def test_runner_records_rag_predictions_and_scores_them(temmed_bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", str(temmed_bench), "--model", "baseline:random", "--protocol", "rag-multimodal",
                 "--tasks", "vqa,image_pair", "--out", str(out), "--no-progress"]) == 0
    lines = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    vqa = [x for x in lines if x["extraction"] == "temmed_yesno@2"]
    assert vqa and all(x["calls"][0]["template"] == "temmed_rag_mm_vqa" for x in vqa)
    scores = json.loads((out / "scores.json").read_text())
    assert {s["metric"] for s in scores["scores"]} >= {"accuracy", "yesno_macro_f1"}
