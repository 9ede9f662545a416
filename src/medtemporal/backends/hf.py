"""Local Hugging Face transformers models: ``hf:/path/or/name``.

``AutoProcessor`` (`load_processor`: Qwen2-VL and Qwen2.5-VL load without torchvision) +
``AutoModelForImageTextToText``, prompts rendered with
the model's own chat template (captions and images interleaved in the
request's order), and batched generation: concurrent requests with the same
generation settings are padded (left) into one ``generate`` call. Needs the
``hf`` extra (torch, transformers), imported only when such a backend is
loaded.

Volume models (``--option volume_input=images``): models such as M3D-LaMed
(``BAAI-DCAI/M3D``, remote code: ``trust_remote_code=true``) read a CT volume as
one 5-D tensor, 1 × 1 × depth × height × width, through a keyword of their own
``generate`` (M3D: ``model.generate(images, inputs, ...)``, ``LaMed/src/model/
language_model/lamed_phi3.py``). Such a backend is loaded with
``AutoModelForCausalLM`` and ``AutoTokenizer``, takes ``.npy`` volumes (`Backend.takes_volumes`;
protocol ``ct`` with ``mode=volume`` writes them), writes the prompt as plain text
with ``volume_tokens`` copies of ``volume_token`` where the volume goes (M3D:
256 ``<im_patch>``, then the question; no chat template, as its evaluation
``Bench/eval/eval_vqa.py``), and answers one request per ``generate`` call (batch 1, as
that evaluation).
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from medtemporal.backends.base import (
    LOCAL_MAX_TOKENS,
    Backend,
    GenerateConfig,
    ImagePart,
    Request,
    RequestError,
    Response,
)
from medtemporal.backends.batching import MicroBatcher
from medtemporal.backends.images import DEFAULT_MAX_PIXELS, decoded_images
from medtemporal.errors import InvalidInputError, require
from medtemporal.hf_models import loadable
from medtemporal.registry import register

DTYPES = ("auto", "float32", "bfloat16", "float16")


@dataclass
class _Prepared:
    """A request ready for the processor: its chat-template text, decoded images and generation settings."""

    text: str
    images: list[Any]
    config: GenerateConfig
    volumes: list[np.ndarray] = field(default_factory=list)
    """Volume mode: each volume as 1 × depth × height × width."""


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


def volume_prompt(request: Request, placeholder: str) -> str:
    """The request as plain text, ``placeholder`` where each volume goes (the volume mode's prompt).

    Texts are joined by newlines; the text after a volume follows its placeholder directly, as
    M3D's prompt is ``"<im_patch>" * 256 + question``.
    """
    text = f"{request.system_prompt}\n" if request.system_prompt else ""
    for message in request.messages:
        for part in message.parts:
            if isinstance(part, ImagePart):
                text += placeholder if not text or text.endswith("\n") else f"\n{placeholder}"
            else:
                text += part.text if not text or text.endswith((placeholder, "\n")) else f"\n{part.text}"
    return text


def read_volume(path: Path) -> np.ndarray:
    """A ``.npy`` volume as float32 1 × depth × height × width; a bad file is one `RequestError` sentence."""
    if path.suffix != ".npy":
        raise RequestError(f"{path.name} is not a .npy volume; this backend reads 3-D volumes only "
                           "(use protocol ct with mode=volume).", reason="not_a_volume")
    try:
        array = np.load(path)
    except (OSError, ValueError):
        raise RequestError(f"{path} is not a readable .npy volume.", reason="bad_volume") from None
    if array.ndim == 3:
        array = array[None]
    if array.ndim != 4 or array.shape[0] != 1:
        raise RequestError(f"{path.name} has shape {array.shape}; a volume must be 1 x depth x height x width.",
                           reason="bad_volume")
    return array.astype(np.float32, copy=False)


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


def load_processor(transformers: Any, name: str, **kwargs: Any) -> Any:
    """``AutoProcessor.from_pretrained(name, **kwargs)``, or, where that fails only because the model's video
    processor needs torchvision (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, InternVL), the model's own processor class without its video
    processor: its image processor (the PIL backend) and tokenizer, which is all images need.

    ``kwargs`` reach the image processor either way, so resolution settings such as Qwen2-VL's ``min_pixels``
    and ``max_pixels`` hold.
    """
    try:
        return transformers.AutoProcessor.from_pretrained(name, **kwargs)
    except (ImportError, RuntimeError, ValueError) as exc:  # torchvision missing (InternVL: a ValueError), or one
        # built for another torch
        if "torchvision" not in str(exc).lower():
            raise
        base = _processor_class(transformers, name, kwargs)
        if base is None or "video_processor" not in base.get_attributes():
            raise

    class ImagesOnly(base):  # type: ignore[misc,valid-type]
        """The model's processor without the video processor its ``__init__`` names."""

        @classmethod
        def get_attributes(cls) -> list[str]:
            return [a for a in super().get_attributes() if a != "video_processor"]

    ImagesOnly.__name__ = ImagesOnly.__qualname__ = f"{base.__name__}ImagesOnly"
    return ImagesOnly.from_pretrained(name, **kwargs)


def _processor_class(transformers: Any, name: str, kwargs: dict[str, Any]) -> Any:
    """The processor class transformers maps the model's config to, or None."""
    from transformers.models.auto import processing_auto

    config = transformers.AutoConfig.from_pretrained(
        name, revision=kwargs.get("revision"), trust_remote_code=kwargs.get("trust_remote_code", False)
    )
    class_name = processing_auto.PROCESSOR_MAPPING_NAMES.get(config.model_type)
    return processing_auto.processor_class_from_name(class_name) if class_name else None


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
            (``{"min_pixels": 200704, "max_pixels": 1003520}`` for Qwen2-VL and Qwen2.5-VL, which newer
            transformers spell ``{"size": {"shortest_edge": 200704, "longest_edge": 1003520}}``;
            ``{"size": {"longest_edge": 1536}}`` for Idefics3); they change what the model sees, so they are
            part of its identity. In volume mode,
            keyword arguments of ``AutoTokenizer.from_pretrained`` (M3D: ``{"use_fast": false}``).
        volume_input: the keyword of the model's ``generate`` that takes the volume tensor (M3D-LaMed: ``images``);
            set, the backend runs in volume mode (see the module docstring).
        volume_token: the placeholder token a volume stands for in the prompt (M3D: ``<im_patch>``).
        volume_tokens: how many placeholders per volume (M3D: 256, its ``proj_out_num``).
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
        volume_input: str | None = None,
        volume_token: str = "<im_patch>",
        volume_tokens: int = 256,
    ) -> None:
        super().__init__(uri=uri, max_images=max_images, concurrency=2 * batch_size)
        if dtype not in DTYPES:
            raise InvalidInputError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}; pick one of those.")
        if processor_kwargs is not None and not isinstance(processor_kwargs, dict):
            raise InvalidInputError(
                f"processor_kwargs must be a JSON object, not {processor_kwargs!r}; "
                """write e.g. --option 'processor_kwargs={"max_pixels": 401408}'."""
            )
        if volume_input is not None and not (isinstance(volume_input, str) and volume_input.isidentifier()):
            raise InvalidInputError(f"volume_input must name a keyword of the model's generate (e.g. images), "
                                    f"not {volume_input!r}.")
        if isinstance(volume_tokens, bool) or not isinstance(volume_tokens, int) or volume_tokens < 0:
            raise InvalidInputError(f"volume_tokens must be a whole number of 0 or more, not {volume_tokens!r}.")
        if not isinstance(trust_remote_code, bool):
            raise InvalidInputError(f"trust_remote_code must be true or false, not {trust_remote_code!r}.")
        self.name = name
        name = loadable(name, what="model", revision=revision,  # before torch: an unfetchable model fails at once
                        fix="pass the folder of a local copy (hf:/path/to/model)")
        torch = require("torch", "hf")
        transformers = require("transformers", "hf")
        self._torch = torch
        self.max_pixels = max_pixels
        self.batch_size = batch_size
        self.trust_remote_code = trust_remote_code
        self.device_map = device_map
        self.attn_implementation = attn_implementation
        self.processor_kwargs = dict(processor_kwargs or {})
        self.volume_input = volume_input
        self.volume_placeholder = volume_token * volume_tokens
        self._volume_settings = {"volume_input": volume_input, "volume_token": volume_token,
                                 "volume_tokens": volume_tokens} if volume_input else {}
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
        loader = transformers.AutoModelForCausalLM if volume_input else transformers.AutoModelForImageTextToText
        kind = "a causal language model" if volume_input else "an image-text-to-text model"
        try:
            if volume_input:
                self.processor = transformers.AutoTokenizer.from_pretrained(
                    name, revision=revision, trust_remote_code=trust_remote_code, **self.processor_kwargs
                )
            else:
                self.processor = load_processor(transformers, name, revision=revision,
                                                trust_remote_code=trust_remote_code, **self.processor_kwargs)
            model = loader.from_pretrained(name, **model_kwargs)
        except OSError as exc:
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0].rstrip(".")
            raise InvalidInputError(
                f"Cannot load a model from {self.name!r} ({reason}); pass a folder that holds the model's config and "
                "weights, or the name of a model on the Hugging Face hub."
            ) from None
        except (ValueError, TypeError, ImportError) as exc:  # "Unrecognized configuration class", bad kwargs ...
            raise InvalidInputError(
                f"{self.name!r} is not {kind} transformers can load with these options ({exc}); "
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
        self.batcher: MicroBatcher[_Prepared, Response | RequestError] = MicroBatcher(self._run_batch, batch_size)

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
            **self._volume_settings,
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
            **self._volume_settings,
        }

    @property
    def takes_volumes(self) -> bool:
        """True in volume mode (``volume_input`` set)."""
        return self.volume_input is not None

    def _prepare(self, request: Request) -> _Prepared:
        if self.volume_input:
            if request.n_images > 1:
                raise RequestError(f"The request has {request.n_images} volumes; {self.uri} reads one per request.",
                                   reason="too_many_images")
            volumes = [read_volume(path) for path in request.image_paths]
            return _Prepared(volume_prompt(request, self.volume_placeholder), [], request.config, volumes)
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

    def _generate_kwargs(self, cfg: GenerateConfig) -> tuple[dict[str, Any], int]:
        """``generate`` settings for ``cfg`` (greedy at temperature 0) and the output cap."""
        sample = (cfg.temperature or 0.0) > 0
        limit = cfg.max_tokens or LOCAL_MAX_TOKENS
        kwargs: dict[str, Any] = {"max_new_tokens": limit, "do_sample": sample}
        if sample:
            kwargs["temperature"] = cfg.temperature
            if cfg.top_p is not None:
                kwargs["top_p"] = cfg.top_p
            if cfg.seed is not None:
                self._torch.manual_seed(cfg.seed)
        else:
            kwargs.update(temperature=None, top_p=None, top_k=None)
        return kwargs, limit

    def _run_volume(self, prepared: _Prepared) -> Response:
        """One volume-mode request: ``generate(<volume_input>=1 × 1 × D × H × W, inputs=ids, ...)``."""
        torch = self._torch
        kwargs, limit = self._generate_kwargs(prepared.config)
        ids = self.tokenizer(prepared.text, return_tensors="pt")["input_ids"].to(self.device)
        if prepared.volumes:
            volume = torch.from_numpy(prepared.volumes[0])[None].to(device=self.device, dtype=self.model.dtype)
            kwargs[self.volume_input] = volume
        with torch.inference_mode():
            out = self.model.generate(inputs=ids, attention_mask=torch.ones_like(ids), **kwargs)
        row = out[0].tolist()
        prompt = ids[0].tolist()
        new = row[len(prompt):] if row[: len(prompt)] == prompt else row  # embeds-based models return only new tokens
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        k = self._count_output(new)
        return Response(text.strip(), len(prompt), k, self.name, finish_reason="length" if k >= limit else "stop")

    @property
    def context_length(self) -> int | None:
        """The most tokens the model reads (its text model's ``max_position_embeddings``), None where unstated."""
        config = self.model.config
        text = config.get_text_config() if hasattr(config, "get_text_config") else config
        return getattr(text, "max_position_embeddings", None)

    def _too_long(self, tokens: int) -> RequestError:
        return RequestError(
            f"The request takes {tokens:,} tokens with its images, more than the {self.context_length:,} that "
            f"{self.name} reads; send fewer or smaller images (max_pixels, processor_kwargs) or a protocol that "
            "sends fewer.", reason="context_too_long")

    def _run_batch(self, batch: list[_Prepared]) -> list[Response | RequestError]:
        if self.volume_input:
            return [self._run_volume(p) for p in batch]
        torch = self._torch
        cfg = batch[0].config
        images = [p.images for p in batch] if batch[0].images else None
        inputs = self.processor(text=[p.text for p in batch], images=images, padding=True, return_tensors="pt")
        lengths = inputs["attention_mask"].sum(dim=1).tolist()
        limit = self.context_length
        if limit is not None and max(lengths) > limit:  # never cut silently: those requests fail, the others run
            fits = [p for p, n in zip(batch, lengths, strict=True) if n <= limit]
            answers = iter(self._run_batch(fits) if fits else [])
            return [next(answers) if n <= limit else self._too_long(int(n)) for n in lengths]
        inputs = inputs.to(self.device)
        if "pixel_values" in inputs:
            inputs["pixel_values"] = inputs["pixel_values"].to(self.model.dtype)
        kwargs, limit = self._generate_kwargs(cfg)
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
