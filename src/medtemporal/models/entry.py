"""One model of the registry: what a name resolves to, and the facts its card or paper states.

A `ModelEntry` names a public model by its hub id and says how to run it through each backend: ``hf:``
(transformers in this process), ``vllm:`` (vLLM in this process) and ``server`` (an OpenAI-compatible server
such as ``vllm serve HUB_ID``, reached with ``NAME@http://HOST:PORT/v1``). API models have no hub id and run
through ``openai`` or an ``openai+https://`` endpoint. Every fact comes from the source it cites (`sources`);
what no source states is None and shown as "unknown".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

BACKENDS = ("hf", "vllm", "server")
"""How an open-weights entry runs: transformers, vLLM in this process, or an OpenAI-compatible server."""
DEFAULT_SERVER = "http://localhost:8000/v1"
"""Where ``vllm serve`` listens by default; ``NAME@server`` means this address."""
ANSWER_FORMATS = {
    "plain": "a direct answer, sometimes with a short explanation",
    "think-answer": "reasoning in <think>...</think>, then the answer in <answer>...</answer> (R1 style); "
                    "extraction reads the answer, never the closed reasoning",
    "report": "a free-text radiology report (findings); for report tasks only",
    "volume": "a direct answer to a question about a 3-D volume",
}
"""What each answer format means (`ModelEntry.answer_format`)."""


@dataclass(frozen=True)
class ModelEntry:
    """A registered model. ``size`` is the parameter count as the card states it (``"4B"``)."""

    name: str
    hub_id: str | None
    """The Hugging Face hub id of the weights; None for an API model."""
    size: str | None
    architecture: str
    """The transformers ``model_type`` its weights load as (``gemma3``, ``qwen2_5_vl`` ...), or ``api``."""
    backend: str
    """The default backend: ``hf`` for open weights, else the API's URI scheme (``openai``)."""
    licence: str
    gated: bool | None
    """True when the hub asks to accept terms before download (``huggingface-cli login`` after accepting)."""
    sources: tuple[str, ...]
    """Where each fact comes from (model cards, papers)."""
    api_uri: str | None = None
    """An API model's URI (``openai:gpt-4o``)."""
    api_key_env: str | None = None
    hf_options: Mapping[str, Any] = field(default_factory=dict)
    """Load options of ``hf:`` (dtype, processor_kwargs, trust_remote_code, volume mode ...)."""
    vllm_options: Mapping[str, Any] = field(default_factory=dict)
    generation: Mapping[str, Any] = field(default_factory=dict)
    """Generation settings of the card's or paper's own example; a benchmark's paper settings come first."""
    max_images: int | None = None
    """Most images one request may carry, as the card or paper states it; None where none says."""
    answer_format: str = "plain"
    adapter: str | None = None
    """Model-specific code beside the entry (`medtemporal.models.adapters`): the backend it runs through."""
    notes: str = ""
    untested: str = ""
    """What the test suite cannot check without the real weights."""
    unsupported: str = ""
    """Why medtemporal cannot run it yet (empty: it can); `medtemporal.models.resolve` refuses it with this."""

    @property
    def params_b(self) -> float | None:
        """Billions of parameters, read from `size` (``"4B"`` → 4.0)."""
        try:
            return float(self.size.rstrip("Bb")) if self.size else None
        except ValueError:
            return None

    @property
    def weights_gb(self) -> float | None:
        """GPU memory the weights take in bfloat16 (2 bytes a parameter), in GB; activations, image tokens and
        the KV cache need more on top."""
        return None if self.params_b is None else round(2 * self.params_b, 1)

    def backends(self) -> tuple[str, ...]:
        """The backends this entry runs through."""
        if self.hub_id is None:
            return (self.backend,)
        if self.adapter is not None:
            return (self.backend,)  # its own code runs in this process only
        return BACKENDS

    def uri(self, backend: str | None = None, endpoint: str | None = None) -> str:
        """The model URI for ``backend`` (default: the entry's); ``server`` takes ``endpoint`` (default
        `DEFAULT_SERVER`)."""
        backend = backend or self.backend
        if self.hub_id is None:
            return str(self.api_uri)
        if backend == "server":
            base = (endpoint or DEFAULT_SERVER).rstrip("/")
            scheme = "openai+https" if base.startswith("https://") else "openai+http"
            return f"{scheme}://{base.split('://', 1)[-1]}:{self.hub_id}"
        if backend == "hf" and self.adapter is not None:
            return f"{self.adapter}:{self.hub_id}"
        return f"{backend}:{self.hub_id}"

    def options(self, backend: str | None = None) -> dict[str, Any]:
        """The backend options this entry loads with through ``backend`` (default: the entry's)."""
        backend = backend or self.backend
        limit = {"max_images": self.max_images} if self.max_images is not None else {}
        if self.hub_id is None:
            return {**limit, **({"api_key_env": self.api_key_env} if self.api_key_env else {})}
        own = {"hf": self.hf_options, "vllm": self.vllm_options}.get(backend, {})
        return {**limit, **own}
