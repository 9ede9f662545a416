"""The transformers backend on a tiny Idefics3 model built here from a config (no download).

The second architecture (Gemma 3) and the load settings are tested in ``test_hf_settings.py``.
"""

import asyncio
import json

import numpy as np
import pytest
from helpers.tiny import make_tiny_benchmark
from helpers.tiny_vlms import build_tiny_idefics3
from PIL import Image

from medtemporal.backends import load
from medtemporal.backends.base import (
    GenerateConfig,
    ImagePart,
    Message,
    Request,
    TextPart,
)
from medtemporal.errors import InvalidInputError
from medtemporal.runner import run

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return build_tiny_idefics3(tmp_path_factory.mktemp("tiny-idefics3"))


@pytest.fixture(scope="module")
def backend(tiny_model):
    return load(f"hf:{tiny_model}", device="cpu", batch_size=4, dtype="float32")


def _images(tmp_path, n):
    rng = np.random.default_rng(1)
    paths = []
    for i in range(n):
        path = tmp_path / f"v{i}.png"
        Image.fromarray(rng.integers(0, 255, (48, 40, 3), dtype=np.uint8)).save(path)
        paths.append(path)
    return paths


def _request(paths, question, max_tokens=6):
    parts = []
    for i, path in enumerate(paths, 1):
        parts += [TextPart(f"T{i}:"), ImagePart(path)]
    return Request((Message("user", (*parts, TextPart(question))),), GenerateConfig(max_tokens=max_tokens))


def test_prompt_uses_the_model_chat_template_with_every_image(backend, tmp_path):
    paths = _images(tmp_path, 4)
    made = backend.images.made
    prepared = backend._prepare(_request(paths[:3], "Which interval?"))
    assert prepared.text.startswith("<|im_start|>User: T1:<image> T2:<image> T3:<image> Which interval?")
    assert prepared.text.endswith("Assistant:") and len(prepared.images) == 3
    # a sliding window shows each image again: it is decoded once
    slid = backend._prepare(_request(paths[1:], "Which interval?"))
    assert backend.images.made - made == 4 and slid.images[:2] == prepared.images[1:]


def test_batched_generation_matches_one_by_one_and_counts_tokens(backend, tmp_path):
    paths = _images(tmp_path, 5)
    requests = [_request(paths[i : i + 2 + i % 2], f"Question {i}? Answer with the letter.") for i in range(4)]
    requests.append(_request(paths[:3], "Longer question that pads the batch. Answer with the letter.", 6))

    async def together():
        return await asyncio.gather(*(backend.generate(r) for r in requests))

    async def alone():
        return [await backend.generate(r) for r in requests]

    before = len(backend.batcher.batches)
    batched = asyncio.run(together())
    assert max(backend.batcher.batches[before:]) > 1
    single = asyncio.run(alone())
    assert [r.text for r in batched] == [r.text for r in single]
    for response, request in zip(batched, requests, strict=True):
        assert response.input_tokens > 4 * request.n_images  # four image tokens per image, plus text
        assert 0 <= response.output_tokens <= 6
        assert response.model == backend.name
    identity = backend.identity()
    assert identity["model_type"] == "idefics3" and identity["dtype"] == "float32" and len(identity["revision"]) == 16


def test_runs_through_the_runner_end_to_end(tiny_model, tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=4)
    summary = run(bench, f"hf:{tiny_model}", tmp_path / "run", cache_path=tmp_path / "c.sqlite", progress=False,
                  config=GenerateConfig(max_tokens=4), backend_options={"device": "cpu", "batch_size": 4})
    assert summary.done == 4 and summary.n_errors == 0
    lines = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert all(p["raw_output"] is not None and p["input_tokens"] > 20 for p in lines)
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["model"]["identity"]["model_type"] == "idefics3" and config["model"]["served"] == [str(tiny_model)]
    # a second run is served from the cache: same outputs, no generation
    again = run(bench, f"hf:{tiny_model}", tmp_path / "run2", cache_path=tmp_path / "c.sqlite", progress=False,
                config=GenerateConfig(max_tokens=4), backend_options={"device": "cpu", "batch_size": 4})
    assert again.cache_hits == 4 and again.requests == 0


def test_a_model_that_is_not_image_text_to_text_is_one_clear_sentence(tmp_path):
    transformers.LlamaConfig(vocab_size=16, hidden_size=8, intermediate_size=8, num_hidden_layers=1,
                             num_attention_heads=1).save_pretrained(tmp_path / "text-only")
    with pytest.raises(InvalidInputError, match="is not an image-text-to-text model transformers can load"):
        load(f"hf:{tmp_path / 'text-only'}", device="cpu")
    with pytest.raises(InvalidInputError, match="Cannot load a model from"):
        load(f"hf:{tmp_path / 'nowhere'}", device="cpu")
