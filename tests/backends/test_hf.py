"""The transformers backend on a tiny Idefics3 model built here from a config (no download)."""

import asyncio
import json

import numpy as np
import pytest
from helpers.tiny import make_tiny_benchmark
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

SPECIALS = [
    "<|endoftext|>", "<|im_start|>", "<end_of_utterance>", "<fake_token_around_image>", "<image>", "<global-img>"
]
CHAT_TEMPLATE = (
    "<|im_start|>{% for m in messages %}{{ m['role'] | capitalize }}:"
    "{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>{% elif c['type'] == 'text' %} {{ c['text'] }}"
    "{% endif %}{% endfor %}<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}"
)


def build_tiny_idefics3(folder):
    """A random-weight Idefics3 (SmolVLM architecture) with a BPE tokenizer trained on a few sentences."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3Processor,
        PreTrainedTokenizerFast,
    )
    from transformers.models.idefics3.image_processing_pil_idefics3 import (
        Idefics3ImageProcessorPil,
    )

    grid = [f"<row_{i}_col_{j}>" for i in range(1, 7) for j in range(1, 7)]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=SPECIALS + grid, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    corpus = ["User: Which interval? Answer with the letter A B C D E. Assistant: The answer is C."] * 3
    tok.train_from_iterator(corpus, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|im_start|>", eos_token="<end_of_utterance>", pad_token="<|endoftext|>"
    )
    ids = {s: tokenizer.convert_tokens_to_ids(s) for s in SPECIALS}
    image_processor = Idefics3ImageProcessorPil(
        size={"longest_edge": 64}, max_image_size={"longest_edge": 32}, do_image_splitting=False
    )
    Idefics3Processor(image_processor=image_processor, tokenizer=tokenizer, image_seq_len=4,
                      chat_template=CHAT_TEMPLATE).save_pretrained(folder)
    text = {"model_type": "llama", "vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 1024,
            "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<end_of_utterance>"],
            "pad_token_id": ids["<|endoftext|>"]}
    vision = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
              "image_size": 32, "patch_size": 8}
    config = Idefics3Config(text_config=text, vision_config=vision, scale_factor=2, image_token_id=ids["<image>"],
                            pad_token_id=ids["<|endoftext|>"])
    torch.manual_seed(0)
    model = Idefics3ForConditionalGeneration(config)
    model.generation_config.eos_token_id = ids["<end_of_utterance>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.save_pretrained(folder)
    return folder


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
