"""Server-specific settings of the OpenAI-compatible and vLLM backends, and how they reach the run config."""

import asyncio
import json
import sys
import types

import pytest
from helpers.fake_openai import FakeOpenAI
from helpers.tiny import make_tiny_benchmark, tiny_items

from medtemporal.backends import load
from medtemporal.backends.base import Message, Request, TextPart
from medtemporal.benchmarks.temmed.rag import RagMultimodal, RagText
from medtemporal.errors import InvalidInputError
from medtemporal.protocols.direct import Direct
from medtemporal.runner import run


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI.start() as fake:
        yield fake


def test_extra_body_goes_into_every_request_and_the_run_config(server, tmp_path):
    server.reset()
    server.configure(keep_bodies=True)
    extra = {"top_k": 20, "chat_template_kwargs": {"enable_thinking": False}}
    bench = make_tiny_benchmark(tmp_path, n=2)
    summary = run(bench, server.uri(), tmp_path / "run", no_cache=True, progress=False,
                  backend_options={"extra_body": extra})
    assert summary.done == 2
    bodies = server.stats()["bodies"]
    assert len(bodies) == 2 and all(b["top_k"] == 20 and b["chat_template_kwargs"] == extra["chat_template_kwargs"]
                                    for b in bodies)
    assert all(b["temperature"] == 0.0 and b["model"] == "fake-vlm" for b in bodies)  # the run's own fields kept
    model = json.loads((tmp_path / "run" / "config.json").read_text())["model"]
    assert model["identity"]["extra_body"] == extra and model["settings"]["extra_body"] == extra
    server.configure(keep_bodies=False)


def test_extra_body_may_not_override_the_run_settings(server):
    with pytest.raises(InvalidInputError, match="extra_body may not set temperature"):
        load(server.uri(), extra_body={"temperature": 1.0})
    with pytest.raises(InvalidInputError, match="extra_body must be a JSON object"):
        load(server.uri(), extra_body="top_k=5")


class _FakeVLLM(types.ModuleType):
    """Stands in for the ``vllm`` package (which needs a GPU) to show what our backend asks of ``vllm.LLM``."""

    __version__ = "0.0-test"

    def __init__(self) -> None:
        super().__init__("vllm")
        self.engines: list[dict] = []
        test = self

        class LLM:
            def __init__(self, **kwargs):
                test.engines.append(kwargs)

            def chat(self, conversations, sampling_params, use_tqdm):
                out = types.SimpleNamespace(text=" The answer is A. ", token_ids=[1, 2, 3], finish_reason="stop")
                return [types.SimpleNamespace(outputs=[out], prompt_token_ids=[0] * 7) for _ in conversations]

        self.LLM = LLM
        self.SamplingParams = lambda **kw: kw


@pytest.fixture
def fake_vllm(monkeypatch):
    module = _FakeVLLM()
    monkeypatch.setitem(sys.modules, "vllm", module)
    return module


def test_vllm_engine_settings_and_image_limit_from_the_largest_item(fake_vllm, tmp_path):
    bench = make_tiny_benchmark(tmp_path, n=2)
    options = {"tensor_parallel_size": 2, "trust_remote_code": True, "max_model_len": 8192,
               "mm_processor_kwargs": {"max_pixels": 401408}}
    summary = run(bench, "vllm:/models/qwen", tmp_path / "run", no_cache=True, progress=False,
                  backend_options=options)
    assert summary.done == 2
    (engine,) = fake_vllm.engines
    assert engine["limit_mm_per_prompt"] == {"image": 5}  # five visits per tiny item, direct protocol
    assert (engine["tensor_parallel_size"], engine["trust_remote_code"], engine["max_model_len"]) == (2, True, 8192)
    assert engine["mm_processor_kwargs"] == {"max_pixels": 401408}
    model = json.loads((tmp_path / "run" / "config.json").read_text())["model"]
    assert model["settings"]["limit_mm_per_prompt"] == {"image": 5} and model["settings"]["tensor_parallel_size"] == 2
    assert model["identity"]["mm_processor_kwargs"] == {"max_pixels": 401408}


def test_vllm_explicit_max_images_wins_and_bad_settings_are_one_sentence(fake_vllm):
    backend = load("vllm:/m", max_images=12, images_needed=5)
    assert backend.max_images == 12 and fake_vllm.engines[-1]["limit_mm_per_prompt"] == {"image": 12}
    assert load("vllm:/m").max_images == 8  # nothing known: vLLM's old default
    with pytest.raises(InvalidInputError, match="tensor_parallel_size must be a whole number"):
        load("vllm:/m", tensor_parallel_size=0)
    response = asyncio.run(load("vllm:/m").generate(Request((Message("user", (TextPart("Hi"),)),))))
    assert (response.text, response.input_tokens, response.output_tokens) == ("The answer is A.", 7, 3)


def test_multimodal_rag_needs_room_for_each_reference_pair():
    item = tiny_items(1)[0]
    assert Direct().max_images(item) == 5
    assert RagText(k=3).max_images(item) == 5
    assert RagMultimodal(k=3).max_images(item) == 5 + 6 and RagMultimodal(k=5).max_images(item) == 15


def test_the_aiohttp_transport_gives_the_same_predictions_and_is_recorded(server, tmp_path, recwarn):
    server.reset()
    bench = make_tiny_benchmark(tmp_path, n=4)
    answers = {}
    for name in ("httpx", "aiohttp"):
        summary = run(bench, server.uri(), tmp_path / name, no_cache=True, progress=False,
                      backend_options={"http_client": name})
        assert summary.done == 4
        rows = [json.loads(line) for line in (tmp_path / name / "predictions.jsonl").open()]
        answers[name] = sorted((r["item_id"], r["request_hash"], r["raw_output"], r["error"]) for r in rows)
        config = json.loads((tmp_path / name / "config.json").read_text())
        assert config["model"]["settings"]["http_client"] == name
    assert answers["aiohttp"] == answers["httpx"] and len(answers["httpx"]) == 4
    assert sum(server.stats()["answered"].values()) == 8  # both transports reached the server
    assert not [w for w in recwarn if "Unclosed" in str(w.message)]
    with pytest.raises(InvalidInputError, match="http_client must be one of httpx, aiohttp"):
        load(server.uri(), http_client="requests")
