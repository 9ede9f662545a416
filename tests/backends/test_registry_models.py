"""Every architecture the model registry runs through ``hf:``, for real: a tiny random-weight model built here from
a config, on the longest item of every registered family, end to end through the runner.

Checked for each architecture and family: the run answers the item; every image the protocol sends reaches the
processor, in the request's order, decoded once, with its caption before it in the prompt; a request over the
model's image limit or context length fails with one sentence (no traceback, nothing cut silently).
"""

from __future__ import annotations

import asyncio
import json

import pytest
from helpers.families import FAMILIES, family_benches  # noqa: F401  (session fixture)
from helpers.tiny_vlms import (
    build_tiny_gemma3,
    build_tiny_idefics3,
    build_tiny_internvl,
    build_tiny_llava,
    build_tiny_qwen2vl,
    build_tiny_qwen3vl,
    build_tiny_qwen25vl,
)

from medtemporal.backends import load
from medtemporal.backends.base import ImagePart, Request, TextPart
from medtemporal.backends.session import DataUse, ModelSession
from medtemporal.benchmark import load as load_benchmark
from medtemporal.benchmark import save
from medtemporal.contract import spec
from medtemporal.models import entries
from medtemporal.models.catalog import TESTED
from medtemporal.prompts import PromptSet
from medtemporal.registry import lookup
from medtemporal.runner import run

pytest.importorskip("torch")
pytest.importorskip("transformers")

BUILDERS = {"gemma3": build_tiny_gemma3, "qwen2_vl": build_tiny_qwen2vl, "qwen2_5_vl": build_tiny_qwen25vl,
            "qwen3_vl": build_tiny_qwen3vl, "llava": build_tiny_llava, "internvl": build_tiny_internvl,
            "idefics3": build_tiny_idefics3}
"""transformers ``model_type`` → the builder of a tiny random-weight model of it."""
EVERY = ("gemma3", "qwen2_5_vl")
"""Architectures run on every family in the fast suite (MedGemma's and Lingshu's / HuatuoGPT-Vision's)."""
LONGEST = ("mi-cxr", "skillqa", "longitudinal-rrg")


def test_every_architecture_the_registry_runs_through_hf_is_built_here():
    native = {e.architecture for e in entries()
              if e.hub_id and e.adapter is None and not e.unsupported and "volume_input" not in e.hf_options}
    assert native and native <= set(BUILDERS)
    claimed = {arch for arch, what in TESTED.items() if "every family" in what}
    assert claimed == native  # what `medtemporal models` says is tested is what this file runs


@pytest.fixture(scope="module")
def longest(family_benches, tmp_path_factory):  # noqa: F811
    """Each family's item whose default protocol sends the most images, as a one-item benchmark folder."""
    root = tmp_path_factory.mktemp("longest")
    out = {}
    for family, path in family_benches.items():
        bench = load_benchmark(path)
        solver = lookup("protocol", spec(family).defaults.protocol).obj(prompts=PromptSet())
        item = max(bench.items, key=lambda i: (solver.max_images(i), len(json.dumps(i.meta, default=str))))
        out[family] = (save(root / family, [item], bench.manifest), bench.image_root, solver.max_images(item))
    return out


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def backend(request, tmp_path_factory):
    folder = BUILDERS[request.param](tmp_path_factory.mktemp(request.param))
    backend = load(f"hf:{folder}", device="cpu", dtype="float32", batch_size=4)
    yield backend
    asyncio.run(backend.aclose())


class _Seen:
    """What reached the model: each prepared request and the images each processor call received."""

    def __init__(self, backend) -> None:  # noqa: ANN001
        self.prepared: list[tuple[Request, object]] = []
        self.processed: list[list] = []
        prepare, processor = backend._prepare, backend.processor

        def spy_prepare(request: Request):  # noqa: ANN202
            prepared = prepare(request)
            self.prepared.append((request, prepared))
            return prepared

        class Processor:
            def __getattr__(self, name):  # noqa: ANN001, ANN204
                return getattr(processor, name)

            def __call__(inner, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN204, N805
                self.processed.extend(kwargs.get("images") or [])
                return processor(*args, **kwargs)

        backend._prepare, backend.processor = spy_prepare, Processor()
        self.undo = lambda: (backend.__dict__.pop("_prepare"), setattr(backend, "processor", processor))


def _runs_every_image_in_order(backend, longest, tmp_path, families) -> None:  # noqa: ANN001
    for family in families:
        bench, image_root, shown = longest[family]
        seen = _Seen(backend)
        try:
            summary = run(bench, backend, tmp_path / family, progress=False, no_cache=True, score=False,
                          image_root=image_root, config={"max_tokens": 2})
        finally:
            seen.undo()
        assert (summary.done, summary.n_errors) == (1, 0), (family, summary.error_examples)
        request, prepared = seen.prepared[-1]
        assert len(prepared.images) == request.n_images >= shown, family  # 3D-RAD: a volume's slices
        # decoded once each, in the request's order, and handed to the processor as they are
        assert all(a is backend.images.get(p) for a, p in zip(prepared.images, request.image_paths)), family
        assert len(seen.processed) == 1 and all(a is b for a, b in zip(seen.processed[0], prepared.images)), family
        captions = [prev.text for m in request.messages for prev, part in zip(m.parts, m.parts[1:])
                    if isinstance(part, ImagePart) and isinstance(prev, TextPart)]
        at = 0
        for caption in captions:  # each image's caption, in order, in the rendered prompt
            at = prepared.text.index(caption.strip(), at) + 1


def test_the_longest_item_of_every_family_runs_with_every_image_in_order(backend, longest, tmp_path):
    """Every family on the architectures most of the registry uses; on the others, the families with the longest
    requests (MI-CXR's five studies, SkillQA's frames, longitudinal-rrg's prior report; the rest: marked slow)."""
    _runs_every_image_in_order(backend, longest, tmp_path, FAMILIES if backend.identity()["model_type"] in EVERY
                               else [f for f in FAMILIES if f in LONGEST])


@pytest.mark.slow
def test_the_other_families_run_on_every_architecture(backend, longest, tmp_path):
    if backend.identity()["model_type"] not in EVERY:
        _runs_every_image_in_order(backend, longest, tmp_path, [f for f in FAMILIES if f not in LONGEST])


def test_over_the_image_limit_or_the_context_one_sentence_fails_the_item(backend, longest, tmp_path):
    bench, image_root, shown = max(longest.values(), key=lambda v: v[2])
    session = ModelSession(backend, use=DataUse("x", "synthetic"), no_cache=True, owned=False)
    backend.max_images = shown - 1
    try:
        summary = run(bench, session.backend, tmp_path / "images", progress=False, no_cache=True, score=False,
                      image_root=image_root, config={"max_tokens": 2})
    finally:
        backend.max_images = None
    assert summary.errors == {"too_many_images": 1}
    message = summary.error_examples["too_many_images"]
    assert f"has {shown} images but" in message and "\n" not in message
    text = backend.model.config.get_text_config()
    limit, text.max_position_embeddings = text.max_position_embeddings, 16
    try:
        summary = run(bench, backend, tmp_path / "context", progress=False, no_cache=True, score=False,
                      image_root=image_root, config={"max_tokens": 2})
    finally:
        text.max_position_embeddings = limit
    assert summary.errors == {"context_too_long": 1}, summary.error_examples
    message = summary.error_examples["context_too_long"]
    assert "more than the 16 that" in message and "\n" not in message and "Traceback" not in message
