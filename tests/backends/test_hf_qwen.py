"""The transformers backend on tiny Qwen2-VL and Qwen2.5-VL models built here from a config (no download).

Qwen-VL models turn each image into its own grid of merged 14-pixel patches (``image_grid_thw``), sized by
the processor's ``min_pixels`` / ``max_pixels``. Checked: the processor loads without torchvision (the
video processor is left out), every image of a several-image request reaches the vision tower in the
request's order (also across a batch), and the resolution settings decide the grid.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json

import numpy as np
import pytest
from helpers.tiny import make_tiny_benchmark
from helpers.tiny_vlms import build_tiny_qwen2vl, build_tiny_qwen25vl
from PIL import Image

from medtemporal.backends import load
from medtemporal.backends.base import GenerateConfig, ImagePart, Message, Request, TextPart
from medtemporal.runner import run

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
BUILDERS = {"qwen2_vl": build_tiny_qwen2vl, "qwen2_5_vl": build_tiny_qwen25vl}


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def qwen(request, tmp_path_factory):
    return request.param, BUILDERS[request.param](tmp_path_factory.mktemp(request.param))


def _images(folder, sizes):
    """Distinct random images of the given (height, width)."""
    paths = []
    for n, (h, w) in enumerate(sizes):
        path = folder / f"q{n}_{h}x{w}.png"
        Image.fromarray(np.random.default_rng(n).integers(0, 255, (h, w, 3), dtype=np.uint8)).save(path)
        paths.append(path)
    return paths


def _request(paths, question="Which interval?"):
    parts = []
    for n, path in enumerate(paths, 1):
        parts += [TextPart(f"T{n}:"), ImagePart(path)]
    return Request((Message("user", (*parts, TextPart(question))),), GenerateConfig(max_tokens=3))


def _grid(processor, path):
    """The grid and pixel rows the processor makes for one image alone."""
    out = processor.image_processor(images=[Image.open(path).convert("RGB")], return_tensors="pt")
    return out["image_grid_thw"], out["pixel_values"]


def test_qwen_processor_loads_without_torchvision(qwen):
    model_type, folder = qwen
    backend = load(f"hf:{folder}", device="cpu", dtype="float32")
    assert backend.identity()["model_type"] == model_type
    if importlib.util.find_spec("torchvision") is None:  # the video processor needs it: left out
        assert type(backend.processor).__name__.endswith("ImagesOnly")
        assert not hasattr(backend.processor, "video_processor")


def test_every_image_reaches_the_vision_tower_in_order_across_a_batch(qwen, tmp_path):
    _, folder = qwen
    backend = load(f"hf:{folder}", device="cpu", dtype="float32", batch_size=2)
    seen = []
    visual = backend.model.model.visual
    handle = visual.register_forward_hook(lambda module, args, kwargs, out: seen.append(
        (kwargs.get("hidden_states", args[0] if args else None).detach().clone(),
         kwargs.get("grid_thw", args[1] if len(args) > 1 else None).clone())), with_kwargs=True)
    first = _images(tmp_path, [(56, 84), (84, 56), (56, 56)])  # three grids: 2x3, 3x2, 2x2 merged patches
    second = _images(tmp_path, [(112, 56), (56, 112)])
    requests = [_request(first), _request(second, "Which one?")]
    text = backend._prepare(requests[0]).text
    assert text.count("<|vision_start|><|image_pad|><|vision_end|>") == 3
    assert text.index("T1:") < text.index("T2:") < text.index("T3:") < text.index("Which interval?")

    async def together():
        return await asyncio.gather(*(backend.generate(r) for r in requests))

    try:
        asyncio.run(together())
    finally:
        handle.remove()
    assert max(backend.batcher.batches) == 2  # one generate call for both requests
    pixels, grids = seen[0]
    # requests are prepared in worker threads, so either may lead the batch; each keeps its images in order
    orders = [first + second, second + first]
    expected = next((e for e in ([_grid(backend.processor, p) for p in order] for order in orders)
                     if torch.equal(grids, torch.cat([g for g, _ in e]))), None)
    assert expected is not None, grids
    assert torch.allclose(pixels, torch.cat([p for _, p in expected]).to(pixels.dtype))


@pytest.mark.filterwarnings("ignore:Passing `min_pixels` and `max_pixels`:FutureWarning")
def test_min_and_max_pixels_decide_each_image_grid(qwen, tmp_path):
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import smart_resize

    _, folder = qwen
    paths = _images(tmp_path, [(84, 112), (112, 84)])
    tokens = {}
    # the model card's min_pixels / max_pixels, and transformers' newer spelling of the same bounds
    for name, settings in {"small": {"min_pixels": 28 * 28, "max_pixels": 56 * 56},
                           "large": {"size": {"shortest_edge": 112 * 112, "longest_edge": 168 * 168}}}.items():
        backend = load(f"hf:{folder}", device="cpu", dtype="float32", processor_kwargs=settings)
        assert backend.identity()["processor_kwargs"] == settings  # part of the model's identity (cache key)
        bounds = settings.get("size", {"shortest_edge": settings.get("min_pixels"),
                                       "longest_edge": settings.get("max_pixels")})
        merged = 0
        for path in paths:
            grid, _ = _grid(backend.processor, path)
            h, w = smart_resize(*Image.open(path).size[::-1], factor=28, min_pixels=bounds["shortest_edge"],
                                max_pixels=bounds["longest_edge"])
            assert grid.tolist() == [[1, h // 14, w // 14]]
            merged += h * w // (28 * 28)
        response = asyncio.run(backend.generate(_request(paths)))
        tokens[name] = (response.input_tokens, merged)
    (small, small_merged), (large, large_merged) = tokens["small"], tokens["large"]
    assert large_merged > small_merged and large - small == large_merged - small_merged  # one token per merged patch


def test_qwen_runs_five_visit_items_through_the_runner(qwen, tmp_path):
    _, folder = qwen
    bench = make_tiny_benchmark(tmp_path, n=3)
    summary = run(bench, f"hf:{folder}", tmp_path / "run", progress=False, no_cache=True,
                  config=GenerateConfig(max_tokens=3), backend_options={"device": "cpu", "batch_size": 3})
    assert summary.done == 3 and summary.n_errors == 0
    lines = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert all(p["input_tokens"] > 5 * 4 for p in lines)  # five images of at least four merged patches each
