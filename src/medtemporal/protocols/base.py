"""How an item becomes model calls.

A protocol (inspect's "solver") is an object with a `name`, the named prompt
templates it uses, and an async `solve` that calls ``generate`` one or more
times and returns the output to score. The runner builds it as
``cls(prompts=PromptSet, **options)`` and supplies ``generate`` (which adds
caching, retries and accounting), so protocols stay small.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from medtemporal.backends.base import Backend, GenerateConfig, ImagePart, Message, Part, Request, Response, TextPart
from medtemporal.contract import BenchmarkSpec, spec
from medtemporal.prompts import PromptSet
from medtemporal.schema import ImageRef, Item

Generate = Callable[[Request], Awaitable[Response]]


@dataclass
class Solution:
    """The final output of a protocol and the intermediate calls that led to it."""

    output: str
    calls: list[dict[str, Any]] = field(default_factory=list)


class Solver(ABC):
    """Base class of protocols; named so to avoid clashing with `typing.Protocol`."""

    name: str = ""
    templates: tuple[str, ...] = ()
    """Names of the prompt templates (see `medtemporal.prompts`) this protocol renders, besides the
    benchmark's own (`BenchmarkSpec.prompts`); the runner records the hash of each."""
    asks_model: bool = True
    """Whether answers come from the model; False for a protocol that answers from the item alone (TemMed's
    ``retrieval-top1``), which any backend may run whatever it answers (`Backend.answers_open`)."""

    def __init__(self, prompts: PromptSet | None = None) -> None:
        self.prompts = prompts or PromptSet()

    @abstractmethod
    async def solve(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig) -> Solution:
        """Answer ``item`` by calling ``generate``."""

    def templates_for(self, bench: BenchmarkSpec, tasks: Collection[str]) -> tuple[str, ...]:
        """Templates this protocol renders for items of ``tasks`` of benchmark ``bench``, besides `templates`
        (e.g. a guideline the spec names); the runner records their hashes before anything runs, and this
        refuses (`medtemporal.errors.InvalidInputError`, one sentence) a benchmark the protocol cannot run.
        Default: none."""
        return ()

    def side_models(self) -> tuple[Any, ...]:
        """Models besides the run's that this protocol calls (`medtemporal.protocols.side_model.SideModel`);
        the runner opens each through the data-use guard."""
        return ()

    def check_backend(self, backend: Backend) -> None:
        """Refuse, in one sentence (`medtemporal.errors.InvalidInputError`), a backend this protocol cannot
        feed; the runner calls it before anything is written. Default: any backend."""

    def needs_images(self, backend: Backend) -> bool:
        """Whether a run of this protocol with ``backend`` reads the item's image files, so that the runner
        refuses to start when one is missing. Default True: the files are sent (and hashed for the cache)."""
        return True

    def max_images(self, item: Item) -> int:
        """The most images one request for ``item`` carries (the runner sizes engines such as vLLM by it)."""
        return len(item.images)


def image_parts(images: tuple[ImageRef, ...] | list[ImageRef], image_root: Path) -> list[Part]:
    """Caption + image parts in the item's order (captions from `ImageRef.label`)."""
    parts: list[Part] = []
    for ref in images:
        if ref.label:
            parts.append(TextPart(ref.label if ref.label.endswith(":") else f"{ref.label}:"))
        parts.append(ImagePart(image_root / ref.path))
    return parts


def answer_space(item: Item) -> tuple[str, ...] | None:
    """The valid closed answers of ``item`` (option letters, or Yes/No), or the identifiers an ordering orders."""
    if item.answer_type in ("choice", "ordering"):
        return tuple(item.options)
    if item.answer_type == "yesno":
        return ("Yes", "No")
    return None


def answer_request(item: Item, parts: tuple[Part, ...] | list[Part], config: GenerateConfig) -> Request:
    """The request whose answer is scored: one user message, with the item's answer space, option texts,
    subtype and answer format (from its benchmark's spec) for baselines."""
    fmt = BenchmarkSpec.for_task(spec(item.benchmark).answer_formats, item.task, "{}")
    texts = tuple(item.options.values()) if item.answer_type == "choice" else ()
    labels = texts if texts and all(isinstance(t, str) for t in texts) else None
    return Request((Message("user", tuple(parts)),), config, choices=answer_space(item), key=item.subtype,
                   answer_format=fmt, ordering=item.answer_type == "ordering", item=item.id, labels=labels)
