"""vLLM's offline engine in this process: ``vllm:/path/or/name``.

Requests go to ``LLM.chat`` as OpenAI-style conversations (images as data
URLs, in order, with their captions), batched like the transformers backend.
Needs the ``vllm`` extra, imported only when such a backend is loaded; to
serve a model to several runs, start ``vllm serve`` instead and use an
``openai+http://`` URI.
"""

from __future__ import annotations

import asyncio
from typing import Any

from medtemporal.backends.base import Backend, GenerateConfig, ImagePart, Request, Response
from medtemporal.backends.batching import MicroBatcher
from medtemporal.backends.images import DEFAULT_MAX_PIXELS, data_urls
from medtemporal.errors import InvalidInputError, require
from medtemporal.hf_models import loadable
from medtemporal.registry import register

DEFAULT_MAX_IMAGES = 8
"""``limit_mm_per_prompt`` when neither ``max_images`` nor the run says how many images a request carries."""


@register("backend", "vllm", description="vLLM offline engine (needs the vllm extra)",
          example="vllm:/models/Qwen2.5-VL-7B")
class VLLMBackend(Backend):
    """``vllm:PATH_OR_NAME``: a model run by vLLM's ``LLM`` engine in this process.

    Args:
        uri: the model URI.
        name: local folder or Hub name.
        max_images: most images per request, vLLM's ``limit_mm_per_prompt``; default: the most any request
            of the run carries (``images_needed``, from the benchmark's largest item under the protocol), else 8.
        batch_size: most requests per ``LLM.chat`` call.
        max_pixels: bound on width × height of each image.
        dtype: vLLM's ``dtype`` (``auto``, ``bfloat16`` ...).
        max_model_len: context length (default: the model's).
        gpu_memory_utilization: share of GPU memory vLLM may take.
        tensor_parallel_size: GPUs one replica spans (vLLM's tensor parallelism).
        trust_remote_code: run the model repository's own code.
        mm_processor_kwargs: keyword arguments of the model's multi-modal processor (e.g. ``max_pixels``
            for Qwen2-VL); they change what the model sees, so they are part of its identity.
        images_needed: set by the runner; see ``max_images``.
    """

    def __init__(
        self,
        uri: str,
        name: str,
        *,
        max_images: int | None = None,
        batch_size: int = 64,
        max_pixels: int | None = DEFAULT_MAX_PIXELS,
        dtype: str = "auto",
        max_model_len: int | None = None,
        gpu_memory_utilization: float = 0.9,
        tensor_parallel_size: int = 1,
        trust_remote_code: bool = False,
        mm_processor_kwargs: dict[str, Any] | None = None,
        images_needed: int | None = None,
    ) -> None:
        limit = max_images if max_images is not None else max(images_needed or DEFAULT_MAX_IMAGES, 1)
        super().__init__(uri=uri, max_images=limit, concurrency=2 * batch_size)
        if mm_processor_kwargs is not None and not isinstance(mm_processor_kwargs, dict):
            raise InvalidInputError(
                f"mm_processor_kwargs must be a JSON object, not {mm_processor_kwargs!r}; "
                """write e.g. --option 'mm_processor_kwargs={"max_pixels": 401408}'."""
            )
        if not isinstance(tensor_parallel_size, int) or tensor_parallel_size < 1:
            raise InvalidInputError(f"tensor_parallel_size must be a whole number of GPUs, not {tensor_parallel_size!r}.")
        vllm = require("vllm", "vllm")
        self._vllm = vllm
        self.name = name
        self.max_pixels = max_pixels
        self.images = data_urls(max_pixels)
        self.mm_processor_kwargs = dict(mm_processor_kwargs or {})
        self.engine_args: dict[str, Any] = {
            "model": name,
            "dtype": dtype,
            "max_model_len": max_model_len,
            "gpu_memory_utilization": gpu_memory_utilization,
            "tensor_parallel_size": tensor_parallel_size,
            "trust_remote_code": trust_remote_code,
            "limit_mm_per_prompt": {"image": limit},
            **({"mm_processor_kwargs": self.mm_processor_kwargs} if self.mm_processor_kwargs else {}),
        }
        """What ``vllm.LLM`` is built with (recorded in the run config)."""
        self.batch_size = batch_size
        local = loadable(name, what="model", fix="pass the folder of a local copy (vllm:/path/to/model)")
        self.llm = vllm.LLM(**{**self.engine_args, "model": local})
        self.batcher: MicroBatcher[tuple[list[dict[str, Any]], GenerateConfig], Response] = MicroBatcher(
            self._run_batch, batch_size
        )

    def identity(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "name": self.name,
            "engine": f"vllm {self._vllm.__version__}",
            "max_pixels": self.max_pixels,
            **({"mm_processor_kwargs": self.mm_processor_kwargs} if self.mm_processor_kwargs else {}),
        }

    def settings(self) -> dict[str, Any]:
        return {**self.engine_args, "batch_size": self.batch_size}

    def _conversation(self, request: Request) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if request.system_prompt:
            out.append({"role": "system", "content": request.system_prompt})
        for message in request.messages:
            content = [
                {"type": "image_url", "image_url": {"url": self.images.get(p.path)}}
                if isinstance(p, ImagePart)
                else {"type": "text", "text": p.text}
                for p in message.parts
            ]
            out.append({"role": message.role, "content": content})
        return out

    async def generate(self, request: Request) -> Response:
        conversation = await asyncio.to_thread(self._conversation, request)
        return await self.batcher.submit((conversation, request.config), request.config)

    def _run_batch(self, batch: list[tuple[list[dict[str, Any]], GenerateConfig]]) -> list[Response]:
        cfg = batch[0][1]
        params = self._vllm.SamplingParams(
            max_tokens=cfg.max_tokens, seed=cfg.seed, top_p=1.0 if cfg.top_p is None else cfg.top_p,
            **({} if cfg.temperature is None else {"temperature": cfg.temperature}),
        )
        outputs = self.llm.chat([conv for conv, _ in batch], sampling_params=params, use_tqdm=False)
        return [
            Response(o.outputs[0].text.strip(), len(o.prompt_token_ids or []), len(o.outputs[0].token_ids), self.name,
                     finish_reason=o.outputs[0].finish_reason)
            for o in outputs
        ]
