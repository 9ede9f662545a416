"""``encoder:NAME``: a Hugging Face text encoder, answering embedding requests with a vector.

Text-embedding models are scored on sentence tasks by the similarity of their embeddings (MS-CXR-T's
temporal sentence similarity: cosine similarity, ROC-AUC, a threshold; the family's ``text-embedding``
protocol). This backend loads any Hugging Face text encoder the way BERTScore's is loaded
(`medtemporal.hf_models.model_folder`: a local folder or a hub name, fetched into the hub cache on first use,
honouring ``HF_HUB_OFFLINE``), then ``AutoTokenizer`` and ``AutoModel``. It answers only requests that ask
for an embedding (`Request.embed`): the text of the request's messages, encoded, its last hidden states
mean-pooled over the attention mask (or the first token's, ``pooling="cls"``) and L2-normalised, written as
a JSON list of floats. Any other request fails with one sentence (it answers no question).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from medtemporal.backends.base import Backend, Request, RequestError, Response, TextPart
from medtemporal.errors import InvalidInputError, UnavailableError, require
from medtemporal.hf_models import model_folder, revision
from medtemporal.registry import register

POOLINGS = ("mean", "cls")
DIGITS = 7
"""Decimal places of each coordinate in the JSON answer (float32 carries about seven)."""


def request_text(request: Request) -> str:
    """The text an embedding request asks about: its text parts, joined by newlines."""
    return "\n".join(p.text for m in request.messages for p in m.parts if isinstance(p, TextPart))


@register("backend", "encoder", description="Hugging Face text encoder for embedding protocols (needs the hf extra)",
          example="encoder:microsoft/BiomedVLP-CXR-BERT-general")
class EncoderBackend(Backend):
    """``encoder:PATH_OR_NAME``: a text encoder run in this process.

    Args:
        uri: the model URI.
        name: local folder or Hub name (resolved by `medtemporal.hf_models.model_folder`).
        pooling: ``mean`` (mean of the last hidden states over the attention mask) or ``cls`` (the first token's).
        device: ``cpu``, ``cuda`` …; default CUDA when available.
        max_length: the tokenizer's truncation length.
        trust_remote_code: let transformers run the model's own code (some CXR encoders ship it).
    """

    reads_images = False

    def __init__(self, uri: str, name: str, *, pooling: str = "mean", device: str | None = None,
                 max_length: int = 512, trust_remote_code: bool = False) -> None:
        super().__init__(uri=uri, concurrency=1)
        if pooling not in POOLINGS:
            raise InvalidInputError(f"pooling {pooling!r} is not one of {', '.join(POOLINGS)}; pick one of those.")
        torch = require("torch", "hf")
        transformers = require("transformers", "hf")
        self.folder = model_folder(name, what="text encoder", fix="pass encoder:/path/to/model (a local copy of it)")
        self.name, self.pooling, self.max_length = name, pooling, max_length
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(self.folder),
                                                                        trust_remote_code=trust_remote_code)
            self.model = transformers.AutoModel.from_pretrained(str(self.folder), trust_remote_code=trust_remote_code)
        except (OSError, ValueError) as exc:
            raise UnavailableError(f"The text encoder {name} cannot be loaded by transformers ({exc}); pass a "
                                   "folder holding a text encoder's config, tokenizer and weights.") from None
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        self._torch = torch

    @property
    def answers_open(self) -> bool:
        """It answers embedding requests, which carry no answer space."""
        return True

    def embed(self, text: str) -> list[float]:
        """The normalised embedding of ``text`` (module doc)."""
        torch = self._torch
        tokens = self.tokenizer([text], return_tensors="pt", truncation=True, max_length=self.max_length)
        tokens = {k: v.to(self.device) for k, v in tokens.items()}
        with torch.no_grad():
            hidden = self.model(**tokens).last_hidden_state
        if self.pooling == "cls":
            vector = hidden[:, 0]
        else:
            mask = tokens["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            vector = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
        vector = torch.nn.functional.normalize(vector.float(), dim=-1)[0]
        return [round(float(v), DIGITS) for v in vector.cpu()]

    async def generate(self, request: Request) -> Response:
        if not request.embed:
            raise RequestError(f"{self.uri} is a text encoder: it embeds texts and answers no question; run it with "
                               "a protocol that embeds (ms-cxr-t: --protocol text-embedding).",
                               reason="not_an_embedding_request")
        vector = await asyncio.to_thread(self.embed, request_text(request))
        return Response(json.dumps(vector), model=self.name)

    def identity(self) -> dict[str, Any]:
        return {"uri": self.uri, "name": self.name, "revision": revision(self.folder), "pooling": self.pooling,
                "max_length": self.max_length}

    def settings(self) -> dict[str, Any]:
        return {"device": self.device, "folder": str(self.folder)}
