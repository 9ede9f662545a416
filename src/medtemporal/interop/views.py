"""What a tool that shows every image before the text (VLMEvalKit, lmms-eval) must show for an item.

A medtemporal request interleaves captions and images (``T1:`` image, ``T2:`` image …, then the
prompt); VLMEvalKit and lmms-eval put all images first and one text after them. `tool_views`
asks the benchmark's default protocol (``direct``; 3D-RAD's ``ct``, whose 32 axial slices are
the images) for the very request ``medtemporal run`` would send, with a ``generate`` that only
records it, and flattens it: the images in order, the caption each had, and the prompt text.
The captions become one framing sentence before the prompt ("The 5 images are shown in order:
image 1 is T1, …"), so the other tool's model reads the same instruction and visit framing.
"""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from medtemporal.backends.base import GenerateConfig, ImagePart, Request, Response, TextPart
from medtemporal.benchmark import Benchmark
from medtemporal.contract import spec
from medtemporal.prompts import PromptSet
from medtemporal.protocols.direct import format_options
from medtemporal.registry import lookup
from medtemporal.schema import Item


@dataclass(frozen=True)
class ToolView:
    """One item as an images-first tool shows it: the images in our order, their captions, our prompt text."""

    item: Item
    images: tuple[Path, ...]
    """Absolute paths, in the order ``medtemporal run`` sends them (3D-RAD: the prepared slices)."""
    captions: tuple[str, ...]
    """The caption our request puts before each image ("" where it has none), without its trailing colon."""
    text: str
    """The text our request sends after the images (system prompt first, when there is one)."""
    sent: tuple[int, ...] = ()
    """`sent_images`: which of the item's images these are."""

    @property
    def framing(self) -> str:
        """One sentence saying which image is which (empty when no image has a caption).

        >>> from medtemporal.schema import Item
        >>> item = Item.create(benchmark="b", task="t", subtype="s", images=[], question="?", answer_type="open",
        ...                    answer="x")
        >>> ToolView(item, (Path("a.png"), Path("b.png")), ("T1", "T2"), "Q?").framing
        'The 2 images are shown in order: image 1 is T1, image 2 is T2.'
        """
        if not any(self.captions):
            return ""
        parts = [f"image {n} is {c}" if c else f"image {n}" for n, c in enumerate(self.captions, 1)]
        noun = "image is" if len(parts) == 1 else "images are"
        return f"The {len(parts)} {noun} shown in order: {', '.join(parts)}."

    @property
    def prompt(self) -> str:
        """The framing, then our prompt text: the whole text an images-first tool should send."""
        return "\n".join(part for part in (self.framing, self.text) if part)

    @property
    def options_block(self) -> str:
        """The options as our prompt lists them (``A. text`` lines), or "" when the prompt does not list them."""
        block = format_options(self.item.options) if self.item.options else ""
        return block if block and block in self.text else ""

    def text_without_options(self) -> str:
        """Our prompt text with its options block removed, for layouts that list the options themselves."""
        block = self.options_block
        if not block:
            return self.text
        text = re.sub(r"(?im)^(?:options|choices|answer choices):[ \t]*\n(?=" + re.escape(block) + ")", "", self.text)
        return re.sub(r"\n{3,}", "\n\n", text.replace(block, "", 1)).strip()


def sent_images(item: Item, request: Request, root: Path) -> list[int]:
    """Which of the item's images (0-based positions in ``item.images``) the request sends, in the order it sends
    them; a volume whose slices it sends (3D-RAD's ``ct``) counts as sent once, where its first slice goes.

    Exports record it so that a consumer reproduces our requests from the item's images (longitudinal-rrg's
    ``views=maira2`` sends two or three of four).
    """
    where = {(root / ref.path).resolve(): n for n, ref in enumerate(item.images)}
    volumes = [n for n, ref in enumerate(item.images) if ref.role == "volume"]
    sent: list[int] = []
    for message in request.messages:
        for part in message.parts:
            if isinstance(part, ImagePart):
                n = where.get(Path(part.path).resolve())
                for k in ([n] if n is not None else volumes):
                    if k not in sent:
                        sent.append(k)
    return sent


def _flatten(item: Item, request: Request, root: Path) -> ToolView:
    images: list[Path] = []
    captions: list[str] = []
    pending: list[str] = []
    for message in request.messages:
        for part in message.parts:
            if isinstance(part, ImagePart):
                images.append(Path(part.path))
                captions.append(" ".join(" ".join(pending).split()).rstrip(":"))
                pending = []
            elif isinstance(part, TextPart):
                pending.append(part.text)
    text = "\n".join([*([request.system_prompt] if request.system_prompt else []), *pending])
    return ToolView(item, tuple(images), tuple(captions), text, tuple(sent_images(item, request, root)))


def protocol_name(bench: Benchmark) -> str:
    """The protocol whose requests the views reproduce: the benchmark's default (`RunDefaults.protocol`)."""
    return spec(bench.manifest.benchmark).defaults.protocol


def requests(bench: Benchmark, items: list[Item] | None = None,
             config: GenerateConfig | None = None) -> list[tuple[Item, Request]]:
    """The request the benchmark's default protocol makes for each of ``items`` (default: all of ``bench``'s),
    with generation settings ``config`` (default: `GenerateConfig`'s); its last one where it makes several.

    Runs on a worker thread's own event loop, so it works where a loop is already running (notebooks).
    """
    solver = lookup("protocol", protocol_name(bench)).obj(prompts=PromptSet())
    chosen = bench.items if items is None else items
    root = bench.image_root

    async def capture(item: Item) -> tuple[Item, Request]:
        seen: list[Request] = []

        async def generate(request: Request) -> Response:
            seen.append(request)
            return Response("")

        await solver.solve(item, root, generate, config or GenerateConfig())
        return item, seen[-1]

    async def every() -> list[tuple[Item, Request]]:
        return [await capture(item) for item in chosen]  # one at a time: volumes are prepared once each, in order

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, every()).result()


def tool_views(bench: Benchmark, items: list[Item] | None = None) -> list[ToolView]:
    """The view of each of ``items`` (default: all of ``bench``'s), from the requests its default protocol makes."""
    return [_flatten(item, request, bench.image_root) for item, request in requests(bench, items)]
