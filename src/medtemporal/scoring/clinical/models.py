"""What the model-based report metrics share: the torch device, batching, and memoised model outputs.

A metric's model is loaded once per process and its outputs for a tuple of
texts are memoised, so that the metrics computed from one model (CheXbert's
four F1s and SembScore) run it once per scoring.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

from medtemporal.errors import require

BATCH = 16
"""Reports per forward pass."""


def torch_device() -> Any:
    """CUDA when available, else CPU (a ``torch.device``)."""
    torch = require("torch", "clinical")
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def batches(texts: Sequence[str], size: int = BATCH) -> Iterator[list[str]]:
    """``texts`` in lists of ``size``."""
    for start in range(0, len(texts), size):
        yield list(texts[start:start + size])


def one_line(text: str) -> str:
    """``text`` with its runs of white space made one space (reports span lines)."""
    return " ".join(text.split())
