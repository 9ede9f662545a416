"""Local Hugging Face transformers models: ``hf:/path/or/name``.

``AutoProcessor`` + ``AutoModelForImageTextToText``, prompts rendered with
the model's own chat template (captions and images interleaved in the
request's order), and batched generation: concurrent requests with the same
generation settings are padded (left) into one ``generate`` call. Needs the
``hf`` extra (torch, transformers), imported only when such a backend is
loaded.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medtemporal.backends.base import LOCAL_MAX_TOKENS, Backend, GenerateConfig, ImagePart, Request, Response
from medtemporal.backends.batching import MicroBatcher
from medtemporal.backends.images import DEFAULT_MAX_PIXELS, decoded_images
from medtemporal.errors import InvalidInputError, require
from medtemporal.registry import register

DTYPES = ("auto", "float32", "bfloat16", "float16")


@dataclass
class _Prepared:
    """A request ready for the processor: its chat-template text, decoded images and generation settings."""

    text: str
    images: list[Any]
    config: GenerateConfig


def chat_messages(request: Request) -> list[dict[str, Any]]:
    """The request in the transformers chat format: ``{"type": "image"}`` parts where images go."""
    out: list[dict[str, Any]] = []
    if request.system_prompt:
        out.append({"role": "system", "content": [{"type": "text", "text": request.system_prompt}]})
    for message in request.messages:
        content = [
            {"type": "image"} if isinstance(p, ImagePart) else {"type": "text", "text": p.text} for p in message.parts
        ]
        out.append({"role": message.role, "content": content})
    return out


def _fingerprint(path: Path) -> str | None:
    """Hash of a local model folder's config and weight file names and sizes."""
    if not path.is_dir():
        return None
    h = hashlib.sha256()
    for f in sorted(path.iterdir()):
        if f.is_file():
            h.update(f"{f.name}\x00{f.stat().st_size}\x00".encode())
            if f.suffix == ".json":
                h.update(f.read_bytes())
    return h.hexdigest()[:16]


@register("backend", "hf", description="local transformers model (needs the hf extra)",
          example="hf:/models/MedGemma-4b-it")
class HFBackend(Backend):
    """``hf:PATH_OR_NAME``: a vision-language model run in this process with transformers.

    Args:
        uri: the model URI.
        name: local folder or Hub name.
        dtype: ``auto`` (the checkpoint's), ``float32``, ``bfloat16`` or ``float16``.
        device: ``cpu``, ``cuda``, ``cuda:1`` ...; default CUDA when available. Ignored with ``device_map``.
        batch_size: most requests per ``generate`` call.
        max_pixels: bound on width × height of each image before the processor sees it.
        max_images: most images one request may carry (None: no limit).
        revision: Hub revision (branch, tag or commit).
        trust_remote_code: run the model repository's own code (models transformers does not ship).
        device_map: shard one model over several GPUs (``auto``, ``balanced``, or a module → device mapping);
            needs ``accelerate``.
        attn_implementation: ``sdpa``, ``eager``, ``flash_attention_2`` ... (default: transformers' choice).
        processor_kwargs: keyword arguments of ``AutoProcessor.from_pretrained``, e.g. the image resolution
            (``{"min_pixels": 200704, "max_pixels": 1003520}`` for Qwen2-VL, ``{"size": {"longest_edge": 1536}}``
            for Idefics3); they change what the model sees, so they are part of its identity.
    """

    def __init__(
        self,
        uri: str,
        name: str,
        *,
        dtype: str = "auto",
        device: str | None = None,
        batch_size: int = 8,
        max_pixels: int | None = DEFAULT_MAX_PIXELS,
        max_images: int | None = None,
        revision: str | None = None,
        trust_remote_code: bool = False,
        device_map: str | dict[str, Any] | None = None,
        attn_implementation: str | None = None,
        processor_kwargs: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(uri=uri, max_images=max_images, concurrency=2 * batch_size)
        if dtype not in DTYPES:
            raise InvalidInputError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}; pick one of those.")
        if processor_kwargs is not None and not isinstance(processor_kwargs, dict):
            raise InvalidInputError(
                f"processor_kwargs must be a JSON object, not {processor_kwargs!r}; "
                """write e.g. --option 'processor_kwargs={"max_pixels": 401408}'."""
            )
        if not isinstance(trust_remote_code, bool):
            raise InvalidInputError(f"trust_remote_code must be true or false, not {trust_remote_code!r}.")
        torch = require("torch", "hf")
        transformers = require("transformers", "hf")
        self._torch = torch
        self.name = name
        self.max_pixels = max_pixels
        self.batch_size = batch_size
        self.trust_remote_code = trust_remote_code
        self.device_map = device_map
        self.attn_implementation = attn_implementation
        self.processor_kwargs = dict(processor_kwargs or {})
        self.images = decoded_images(max_pixels)
        """Decoded, shrunk images, each loaded once however many requests show it."""
        model_kwargs: dict[str, Any] = {
            "revision": revision,
            "dtype": dtype if dtype == "auto" else getattr(torch, dtype),
            "trust_remote_code": trust_remote_code,
        }
        if device_map is not None:
            model_kwargs["device_map"] = device_map
        if attn_implementation is not None:
            model_kwargs["attn_implementation"] = attn_implementation
        try:
            self.processor = transformers.AutoProcessor.from_pretrained(
                name, revision=revision, trust_remote_code=trust_remote_code, **self.processor_kwargs
            )
            model = transformers.AutoModelForImageTextToText.from_pretrained(name, **model_kwargs)
        except OSError as exc:
            raise InvalidInputError(
                f"Cannot load a model from {name!r} ({exc}); pass a local folder with the model, or a Hub name."
            ) from None
        except (ValueError, TypeError, ImportError) as exc:  # "Unrecognized configuration class", bad kwargs ...
            raise InvalidInputError(
                f"{name!r} is not an image-text-to-text model transformers can load with these options ({exc}); "
                "pass a vision-language model and check --option values, or serve it and use an openai+http:// URI."
            ) from None
        if device_map is None:
            self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
            model = model.to(self.device)
        else:  # accelerate placed the layers; inputs go where the first layer is
            self.device = str(model.device)
        self.model = model.eval()
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        eos = self.model.generation_config.eos_token_id
        self._stop_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        self._stop_ids.add(self.tokenizer.pad_token_id)
        self._revision = getattr(self.model.config, "_commit_hash", None) or _fingerprint(Path(name))
        self.batcher: MicroBatcher[_Prepared, Response] = MicroBatcher(self._run_batch, batch_size)

    def identity(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "name": self.name,
            "revision": self._revision,
            "model_type": self.model.config.model_type,
            "dtype": str(self.model.dtype).removeprefix("torch."),
            "device": self._torch.device(self.device).type,
            "max_pixels": self.max_pixels,
            **({"processor_kwargs": self.processor_kwargs} if self.processor_kwargs else {}),
        }

    def settings(self) -> dict[str, Any]:
        return {
            "dtype": str(self.model.dtype).removeprefix("torch."),
            "device": self.device,
            "device_map": self.device_map,
            "placement": {str(k): str(v) for k, v in (getattr(self.model, "hf_device_map", None) or {}).items()},
            "attn_implementation": getattr(self.model.config, "_attn_implementation", self.attn_implementation),
            "trust_remote_code": self.trust_remote_code,
            "processor_kwargs": self.processor_kwargs,
            "batch_size": self.batch_size,
            "max_images": self.max_images,
        }

    def _prepare(self, request: Request) -> _Prepared:
        text = self.processor.apply_chat_template(chat_messages(request), add_generation_prompt=True, tokenize=False)
        images = [self.images.get(path) for path in request.image_paths]
        return _Prepared(text, images, request.config)

    async def generate(self, request: Request) -> Response:
        prepared = await asyncio.to_thread(self._prepare, request)
        return await self.batcher.submit(prepared, (request.config, bool(prepared.images)))

    def _count_output(self, row: list[int]) -> int:
        for i, token in enumerate(row):
            if token in self._stop_ids:
                return i
        return len(row)

    def _run_batch(self, batch: list[_Prepared]) -> list[Response]:
        torch = self._torch
        cfg = batch[0].config
        images = [p.images for p in batch] if batch[0].images else None
        inputs = self.processor(text=[p.text for p in batch], images=images, padding=True, return_tensors="pt")
        inputs = inputs.to(self.device)
        if "pixel_values" in inputs:
            inputs["pixel_values"] = inputs["pixel_values"].to(self.model.dtype)
        sample = (cfg.temperature or 0.0) > 0
        limit = cfg.max_tokens or LOCAL_MAX_TOKENS
        kwargs: dict[str, Any] = {"max_new_tokens": limit, "do_sample": sample}
        if sample:
            kwargs["temperature"] = cfg.temperature
            if cfg.top_p is not None:
                kwargs["top_p"] = cfg.top_p
            if cfg.seed is not None:
                torch.manual_seed(cfg.seed)
        else:
            kwargs.update(temperature=None, top_p=None, top_k=None)
        with torch.inference_mode():
            out = self.model.generate(**inputs, **kwargs)
        new = out[:, inputs["input_ids"].shape[1] :].tolist()
        texts = self.processor.batch_decode(new, skip_special_tokens=True)
        n_in = inputs["attention_mask"].sum(dim=1).tolist()
        counts = [self._count_output(row) for row in new]
        return [
            Response(text.strip(), int(n), k, self.name, finish_reason="length" if k >= limit else "stop")
            for text, n, k in zip(texts, n_in, counts, strict=True)
        ]

    async def aclose(self) -> None:
        self.__dict__.pop("model", None)  # drop the weights so their (GPU) memory can be freed
        if self._torch.cuda.is_available():
            self._torch.cuda.empty_cache()
