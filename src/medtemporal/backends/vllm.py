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
from medtemporal.errors import require
from medtemporal.registry import register


@register("backend", "vllm", description="vLLM offline engine (needs the vllm extra)",
          example="vllm:/models/Qwen2.5-VL-7B")
class VLLMBackend(Backend):
    """``vllm:PATH_OR_NAME``: a model run by vLLM's ``LLM`` engine in this process.

    Args:
        uri: the model URI.
        name: local folder or Hub name.
        max_images: most images per request (vLLM's ``limit_mm_per_prompt``).
        batch_size: most requests per ``LLM.chat`` call.
        max_pixels: bound on width × height of each image.
        dtype: vLLM's ``dtype`` (``auto``, ``bfloat16`` ...).
        max_model_len: context length (default: the model's).
        gpu_memory_utilization: share of GPU memory vLLM may take.
    """

    def __init__(
        self,
        uri: str,
        name: str,
        *,
        max_images: int = 8,
        batch_size: int = 64,
        max_pixels: int | None = DEFAULT_MAX_PIXELS,
        dtype: str = "auto",
        max_model_len: int | None = None,
        gpu_memory_utilization: float = 0.9,
    ) -> None:
        super().__init__(uri=uri, max_images=max_images, concurrency=2 * batch_size)
        vllm = require("vllm", "vllm")
        self._vllm = vllm
        self.name = name
        self.max_pixels = max_pixels
        self.images = data_urls(max_pixels)
        self.llm = vllm.LLM(
            model=name,
            dtype=dtype,
            max_model_len=max_model_len,
            gpu_memory_utilization=gpu_memory_utilization,
            limit_mm_per_prompt={"image": max_images},
        )
        self.batcher: MicroBatcher[tuple[list[dict[str, Any]], GenerateConfig], Response] = MicroBatcher(
            self._run_batch, batch_size
        )

    def identity(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "name": self.name,
            "engine": f"vllm {self._vllm.__version__}",
            "max_pixels": self.max_pixels,
        }

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
