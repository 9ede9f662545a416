"""MAIRA-2 (``maira2:microsoft/maira-2``) through its own processor, as its model card runs it.

MAIRA-2 writes the FINDINGS section of a chest X-ray report from the current frontal image, optionally the
current lateral image, the prior frontal image and the prior report, with the INDICATION, TECHNIQUE and
COMPARISON of the current study (Bannur et al., 2024, arXiv:2406.04449). Its processor (remote code, loaded with
``trust_remote_code``) takes these as named inputs (``format_and_preprocess_reporting_input``) and lays out the
prompt itself; the reply is read with ``convert_output_to_plaintext_or_grounded_sequence`` (non-grounded: text).

The adapter finds each input in the item the request is for (``Request.item``; a longitudinal-rrg item's images
carry ``role`` current/historical and ``view``; its ``meta`` the context and the prior report) and passes only
what the protocol sent: the prior image when the request holds it, the prior report when its text is in the
request (protocol ``rrg-prior-report``). Items of other families, and the impression task, fail in one sentence:
MAIRA-2 writes findings only.

Untested without the real weights: the remote processor's own prompt layout and the weights' outputs. The tests
run the adapter's side on a tiny LLaVA (MAIRA-2 is a LLaVA-style model) with a stand-in processor that has the
documented method.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from medtemporal.backends.base import LOCAL_MAX_TOKENS, Backend, GenerateConfig, Request, RequestError, Response
from medtemporal.backends.images import decoded_images
from medtemporal.errors import InvalidInputError, require
from medtemporal.hf_models import loadable
from medtemporal.registry import register

LATERAL = ("LATERAL", "LL", "LAT", "RL")
"""View positions of a lateral image (MIMIC-CXR's ``ViewPosition``)."""
MISSING = ("", "N/A", None)
"""Context values that mean "not given" (passed to the processor as None)."""


@register("backend", "maira2", description="MAIRA-2 through its processor's reporting interface (remote code)",
          example="maira2:microsoft/maira-2")
class Maira2Backend(Backend):
    """``maira2:PATH_OR_NAME``: MAIRA-2's findings for longitudinal-rrg items (module doc).

    Args:
        uri: the model URI.
        name: local folder or hub name.
        dtype: ``auto``, ``float32``, ``bfloat16`` or ``float16``.
        device: ``cpu``, ``cuda`` ...; default CUDA when available.
        max_images: three: current frontal, current lateral, prior frontal.
        trust_remote_code: MAIRA-2's processor and model are remote code; true.
        revision: hub revision.
    """

    def __init__(self, uri: str, name: str, *, dtype: str = "auto", device: str | None = None, max_images: int = 3,
                 trust_remote_code: bool = True, revision: str | None = None) -> None:
        super().__init__(uri=uri, max_images=max_images, concurrency=1)
        self.name = name
        folder = loadable(name, what="model", revision=revision, fix="pass the folder of a local copy")
        torch = require("torch", "hf")
        transformers = require("transformers", "hf")
        self._torch = torch
        try:
            self.processor = transformers.AutoProcessor.from_pretrained(
                folder, trust_remote_code=trust_remote_code, revision=revision)
            model = transformers.AutoModelForCausalLM.from_pretrained(
                folder, trust_remote_code=trust_remote_code, revision=revision,
                dtype=dtype if dtype == "auto" else getattr(torch, dtype))
        except (OSError, ValueError, TypeError, ImportError) as exc:
            raise InvalidInputError(f"Cannot load MAIRA-2 from {name!r} ({str(exc).splitlines()[0]}); pass "
                                    "microsoft/maira-2 (accept its terms on the hub first) or a local copy.") from None
        if not hasattr(self.processor, "format_and_preprocess_reporting_input"):
            raise InvalidInputError(f"{name!r} has no MAIRA-2 processor (format_and_preprocess_reporting_input); "
                                    "pass microsoft/maira-2 with trust_remote_code=true.")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device).eval()
        self.images = decoded_images(None)
        self._items: dict[str, Any] = {}

    def identity(self) -> dict[str, Any]:
        return {"uri": self.uri, "name": self.name, "adapter": "maira2", "model_type": self.model.config.model_type,
                "dtype": str(self.model.dtype).removeprefix("torch.")}

    def settings(self) -> dict[str, Any]:
        return {"device": self.device, "max_images": self.max_images}

    def fit_items(self, items: Sequence[Any]) -> None:
        """The run's items, by id: where each request's inputs are found."""
        self._items = {item.id: item for item in items}

    def reporting_inputs(self, request: Request) -> dict[str, Any]:
        """The keyword arguments of ``format_and_preprocess_reporting_input`` for ``request`` (module doc)."""
        item = self._items.get(request.item or "")
        if item is None or "context" not in item.meta:
            raise RequestError("MAIRA-2 writes the findings of a chest X-ray study from a longitudinal-rrg item; "
                               "this request is not one, so run MAIRA-2 on longitudinal-rrg.", reason="not_supported")
        if item.task != "findings":
            raise RequestError(f"MAIRA-2 writes the findings section only, not the {item.task}; run it with "
                               "--tasks findings.", reason="not_supported")
        sent = {str(p) for p in request.image_paths}
        shown = [r for r in item.images if any(s == r.path or s.endswith("/" + r.path) for s in sent)]
        paths = {id(r): next(Path(s) for s in sent if s == r.path or s.endswith("/" + r.path)) for r in shown}

        def pick(role: str, lateral: bool) -> Any:
            ref = next((r for r in shown if r.role == role and ((r.view or "").upper() in LATERAL) == lateral), None)
            return None if ref is None else self.images.get(paths[id(ref)])

        frontal = pick("current", False)
        if frontal is None:
            raise RequestError(f"Item {item.id} sends no current frontal image, which MAIRA-2 needs; use protocol "
                               "views=maira2 or views=frontal.", reason="not_supported")
        text = "\n".join(p.text for m in request.messages for p in m.parts if hasattr(p, "text"))
        prior = item.meta.get("prior") or {}
        report = prior.get("report")
        context = {k: (None if item.meta["context"].get(k) in MISSING else item.meta["context"][k])
                   for k in ("indication", "technique", "comparison")}
        return {"current_frontal": frontal, "current_lateral": pick("current", True),
                "prior_frontal": pick("historical", False),
                "prior_report": report if report and report in text else None, **context}

    async def generate(self, request: Request) -> Response:
        inputs = self.reporting_inputs(request)
        return await asyncio.to_thread(self._generate, inputs, request.config)

    def _generate(self, inputs: dict[str, Any], config: GenerateConfig) -> Response:
        torch = self._torch
        processed = self.processor.format_and_preprocess_reporting_input(
            **inputs, return_tensors="pt", get_grounding=False).to(self.device)
        limit = config.max_tokens or LOCAL_MAX_TOKENS
        with torch.inference_mode():
            out = self.model.generate(**processed, max_new_tokens=limit, use_cache=True, do_sample=False)
        prompt = processed["input_ids"].shape[-1]
        new = out[0][prompt:]
        text = self.processor.decode(new, skip_special_tokens=True).lstrip()
        text = self.processor.convert_output_to_plaintext_or_grounded_sequence(text)
        n = len(new)
        return Response(str(text).strip(), int(prompt), n, self.name, finish_reason="length" if n >= limit else "stop")

    async def aclose(self) -> None:
        self.__dict__.pop("model", None)
