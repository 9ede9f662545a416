"""Load settings of the transformers backend, and a second architecture (Gemma 3, MedGemma's) built from a config."""

import asyncio
import json

import numpy as np
import pytest
from helpers.tiny import make_tiny_benchmark
from helpers.tiny_vlms import build_tiny_gemma3, build_tiny_idefics3
from PIL import Image

from medtemporal.backends import load
from medtemporal.backends.base import GenerateConfig, ImagePart, Message, Request, TextPart
from medtemporal.errors import InvalidInputError
from medtemporal.runner import run

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def gemma3(tmp_path_factory):
    return build_tiny_gemma3(tmp_path_factory.mktemp("tiny-gemma3"))


def _request(tmp_path, n, question="Which interval?"):
    rng = np.random.default_rng(n)
    parts = []
    for i in range(n):
        path = tmp_path / f"g{n}_{i}.png"
        Image.fromarray(rng.integers(0, 255, (48, 40, 3), dtype=np.uint8)).save(path)
        parts += [TextPart(f"T{i + 1}:"), ImagePart(path)]
    return Request((Message("user", (*parts, TextPart(question))),), GenerateConfig(max_tokens=5))


def test_gemma3_puts_each_image_where_its_caption_is_and_batches_like_one_by_one(gemma3, tmp_path):
    backend = load(f"hf:{gemma3}", device="cpu", dtype="float32", batch_size=4, attn_implementation="eager")
    requests = [_request(tmp_path, n, f"Question {n}?") for n in (1, 2, 3)]
    text = backend._prepare(requests[1]).text
    assert "user\nT1:<start_of_image>T2:<start_of_image>Question 2?<end_of_turn>" in text

    async def together():
        return await asyncio.gather(*(backend.generate(r) for r in requests))

    batched = asyncio.run(together())
    assert max(backend.batcher.batches) > 1
    single = [asyncio.run(backend.generate(r)) for r in requests]
    assert [r.text for r in batched] == [r.text for r in single]
    # each image becomes boi + 4 soft tokens + eoi: one more image, at least six more input tokens
    assert batched[2].input_tokens - batched[1].input_tokens >= 6
    assert backend.identity()["model_type"] == "gemma3"
    assert backend.settings()["attn_implementation"] == "eager"


def test_settings_reach_the_model_and_the_run_config(gemma3, tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=2)
    options = {"device": "cpu", "batch_size": 2, "attn_implementation": "eager", "trust_remote_code": False}
    summary = run(bench, f"hf:{gemma3}", tmp_path / "run", no_cache=True, progress=False,
                  config=GenerateConfig(max_tokens=3), backend_options=options)
    assert summary.done == 2
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    settings = config["model"]["settings"]
    assert settings["attn_implementation"] == "eager" and settings["trust_remote_code"] is False
    assert settings["batch_size"] == 2 and settings["device"] == "cpu" and settings["device_map"] is None


def test_device_map_places_the_model_through_accelerate(gemma3):
    pytest.importorskip("accelerate")
    backend = load(f"hf:{gemma3}", dtype="float32", device_map={"": "cpu"})
    settings = backend.settings()
    assert settings["device_map"] == {"": "cpu"} and settings["device"] == "cpu"
    assert {p.device.type for p in backend.model.parameters()} == {"cpu"}


def test_processor_kwargs_change_what_the_model_sees_and_its_identity(tmp_path):
    folder = build_tiny_idefics3(tmp_path / "idefics3")
    request = _request(tmp_path, 1)
    plain = load(f"hf:{folder}", device="cpu", dtype="float32")
    split = load(f"hf:{folder}", device="cpu", dtype="float32", processor_kwargs={"do_image_splitting": True})
    # splitting the image into tiles adds the tiles' image tokens to the prompt
    n_plain = asyncio.run(plain.generate(request)).input_tokens
    n_split = asyncio.run(split.generate(request)).input_tokens
    assert n_split > n_plain
    assert "processor_kwargs" not in plain.identity()
    assert split.identity()["processor_kwargs"] == {"do_image_splitting": True}
    with pytest.raises(InvalidInputError, match="processor_kwargs must be a JSON object"):
        load(f"hf:{folder}", device="cpu", processor_kwargs="size=5")
