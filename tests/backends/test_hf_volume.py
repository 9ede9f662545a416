"""The transformers backend in volume mode, on a tiny remote-code model written here (M3D-LaMed's convention)."""

import asyncio

import numpy as np
import pytest
from helpers.tiny_volume_lm import build_tiny_volume_lm

from medtemporal.backends import load
from medtemporal.backends.base import GenerateConfig, ImagePart, Message, Request, RequestError, TextPart
from medtemporal.backends.hf import volume_prompt
from medtemporal.errors import InvalidInputError

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_tiny_volume_lm(tmp_path_factory.mktemp("tiny-volume-lm"))


@pytest.fixture(scope="module")
def backend(model_dir):
    return load(f"hf:{model_dir}", volume_input="images", volume_tokens=8, trust_remote_code=True, device="cpu",
                dtype="float32")


def _request(*parts, max_tokens=40):
    return Request((Message("user", tuple(parts)),), GenerateConfig(max_tokens=max_tokens))


def test_the_volume_reaches_generate_as_one_5d_tensor(backend, tmp_path):
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(a, np.full((1, 4, 16, 12), 0.25, dtype=np.float32))
    np.save(b, np.random.default_rng(0).random((6, 8, 8)).astype(np.float32) * 0.8)  # D × H × W: a channel is added
    got = asyncio.run(backend.generate(_request(ImagePart(a), TextPart("Is there a nodule?"))))
    assert got.text == "8x4x16x12x2500" and got.finish_reason == "stop"  # 8 placeholders, the shape, the mean
    other = asyncio.run(backend.generate(_request(ImagePart(b), TextPart("Is there a nodule?"))))
    assert other.text == f"8x6x8x8x{round(float(np.load(b).mean()) * 10000)}"
    assert backend.takes_volumes and backend.identity()["volume_input"] == "images"
    assert backend.settings()["volume_tokens"] == 8


def test_the_prompt_is_plain_text_with_placeholders_where_the_volume_goes(backend, tmp_path):
    request = _request(TextPart("Scan:"), ImagePart(tmp_path / "v.npy"), TextPart("Question?"), TextPart("Answer:"))
    assert volume_prompt(request, "<p>" * 2) == "Scan:\n<p><p>Question?\nAnswer:"


def test_bad_volumes_and_options_are_one_sentence(backend, model_dir, tmp_path):
    png = tmp_path / "slice.png"
    png.write_bytes(b"not a volume")
    with pytest.raises(RequestError, match="not a .npy volume"):
        asyncio.run(backend.generate(_request(ImagePart(png), TextPart("?"))))
    flat = tmp_path / "flat.npy"
    np.save(flat, np.zeros((2, 3, 4, 4), dtype=np.float32))
    with pytest.raises(RequestError, match="1 x depth x height x width"):
        asyncio.run(backend.generate(_request(ImagePart(flat), TextPart("?"))))
    with pytest.raises(RequestError, match="reads one per request"):
        asyncio.run(backend.generate(_request(ImagePart(flat), ImagePart(flat), TextPart("?"))))
    with pytest.raises(InvalidInputError, match="volume_input must name a keyword"):
        load(f"hf:{model_dir}", volume_input="not a name", trust_remote_code=True, device="cpu")
    with pytest.raises(InvalidInputError, match="is not a causal language model transformers can load"):
        load(f"hf:{model_dir}", volume_input="images", device="cpu")  # remote code not trusted
