"""TemMed-Bench's retrieval-augmented protocols, the top-1 retrieval hack and the image ablations.

Retrieved references are read from the item (``meta["retrieval"][NAME]``, stored
at build time; see `medtemporal.benchmarks.temmed.refs`). Options, given to the
constructor (``--protocol-arg k=3``):

- ``k``: references shown, 1–5 (default `DEFAULT_K` = 1, as released);
- ``retriever``: ``pairwise`` | ``image`` | ``text`` | ``official`` (default: the item's own,
  ``pairwise`` when built, ``official`` when imported). Image-pair items always use
  their statement retrieval (``tfidf``), as the paper does (appendix B.2).

Protocols:

- ``rag-text``: the references' reports, then the target images and the task.
- ``rag-multimodal``: each reference's historical and current image with its report
  (the paper's reference preface), then the target images and the task.
- ``retrieval-top1``: no model call; the top-1 reference's report is the output
  (report generation only; appendix C.1).
- ``random-historical`` / ``random-current``: the closed-book prompt with the
  historical (current) image replaced by a random corpus image (appendix C.2).

Templates have ``$images`` and ``$references`` placeholders where image blocks
go, so a replaced template (``--prompt NAME=FILE``) may move them; ``$references_intro``
("is a reference report of chest X-ray images", "are 3 reference reports …") and
``$examples`` ("this example" / "these examples") agree in number with ``k``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from medtemporal.backends.base import GenerateConfig, ImagePart, Part, RequestError, TextPart
from medtemporal.family import (
    Generate, ImageRef, InvalidInputError, Item, PromptSet, Solution, Solver, answer_request, register,
)
from medtemporal.protocols.direct import Direct

TASK_SUFFIX = {"vqa": "vqa", "report": "report", "image_pair": "pair"}
RETRIEVERS = ("pairwise", "image", "text", "official", "tfidf")
DEFAULT_K = 1
"""References shown when no ``k`` option is given (as released)."""
MAX_K = 5
_MARK = re.compile("\x00(\\d+)\x00")


def _suffix(item: Item) -> str:
    if item.task not in TASK_SUFFIX or "retrieval" not in item.meta:
        raise InvalidInputError(
            f"Item {item.id} ({item.benchmark}/{item.task}) has no TemMed retrieval references; "
            "the RAG protocols run on TemMed-Bench items only."
        )
    return TASK_SUFFIX[item.task]


class _Blocks:
    """Text with image marks, and the images the marks refer to, in order."""

    def __init__(self) -> None:
        self.images: list[Path] = []

    def pair(self, refs: list[ImageRef] | list[tuple[str, str]], root: Path, prefix: str = "") -> str:
        """Captions and image marks for images given as `ImageRef` s or (caption, path) tuples."""
        lines = [prefix.rstrip()] if prefix else []
        for ref in refs:
            label, path = (ref.label or "", ref.path) if isinstance(ref, ImageRef) else ref
            lines.append(label if label.endswith(":") or not label else f"{label}:")
            lines.append(f"\x00{len(self.images)}\x00")
            self.images.append(root / path)
        return "\n".join(line for line in lines if line)

    def parts(self, text: str) -> list[Part]:
        """Text and image parts in reading order (blank text between images dropped)."""
        out: list[Part] = []
        pos = 0
        for m in _MARK.finditer(text):
            if text[pos : m.start()].strip():
                out.append(TextPart(text[pos : m.start()].strip()))
            out.append(ImagePart(self.images[int(m.group(1))]))
            pos = m.end()
        if text[pos:].strip():
            out.append(TextPart(text[pos:].strip()))
        return out


class _Retrieving(Solver):
    """Shared option handling: ``k`` references from the item's (or the chosen) retriever."""

    def __init__(self, prompts: PromptSet | None = None, k: int | str = DEFAULT_K, retriever: str | None = None) -> None:
        super().__init__(prompts)
        try:
            self.k = int(k)
        except (TypeError, ValueError):
            raise InvalidInputError(f"Protocol option k={k!r} is not a number; use k=1 to k={MAX_K}.") from None
        if not 1 <= self.k <= MAX_K:
            raise InvalidInputError(f"Protocol option k={self.k} is out of range; use k=1 to k={MAX_K}.")
        if retriever is not None and retriever not in RETRIEVERS:
            raise InvalidInputError(f"Unknown retriever {retriever!r}; use one of {', '.join(RETRIEVERS)}.")
        self.retriever = retriever

    def references(self, item: Item) -> tuple[str, list[dict[str, Any]]]:
        """The retriever used for ``item`` and its top-``k`` references from it."""
        _suffix(item)
        found: dict[str, list] = item.meta["retrieval"]
        name = item.meta.get("retriever") if item.task == "image_pair" or self.retriever is None else self.retriever
        if name not in found:
            raise InvalidInputError(
                f"Item {item.id} has no {name!r} references (it has {', '.join(found) or 'none'}); "
                "rebuild with an --embedder that provides them or choose another retriever."
            )
        refs = found[name][: self.k]
        if len(refs) < self.k:
            raise RequestError(f"Item {item.id} has {len(refs)} {name!r} references, fewer than k={self.k}.",
                               reason="too_few_references")
        return name, refs


def _intro(kind: str, task: str, k: int) -> str:
    """What the references are, as the release words it for one (``Eval/*_RAG_*.py`` Text1), made plural for ``k``."""
    if kind == "text":
        return "a reference X-ray image report" if k == 1 else f"{k} reference X-ray image reports"
    report = "the corresponding report" + ("" if task == "image_pair" else " for the current visit image")
    if k == 1:
        return f"two reference X-ray images from the same patient, along with {report}"
    return f"{k} reference cases, each two X-ray images from the same patient, along with {report}"


class _RagSolver(_Retrieving):
    """One call: the rendered references, then the target images and the task's question."""

    kind = ""
    """``text`` (reports only) or ``mm`` (image pairs with reports); part of the template names."""

    def render(self, item: Item, image_root: Path, refs: list[dict[str, Any]]) -> tuple[str, list[Part]]:
        """Template name and message parts of ``item`` with the references ``refs``."""
        name = f"temmed_rag_{self.kind}_{_suffix(item)}"
        blocks = _Blocks()
        rendered = []
        many = len(refs) > 1
        for n, ref in enumerate(refs, 1):
            images = ""
            if self.kind == "mm":
                images = blocks.pair([("Last visit image:", ref["historical"]), ("Current visit image:", ref["current"])],
                                     image_root, f"Reference {n}:" if many else "")
            label = f"Report {n}" if many else "Report"
            label += " for the current visit image:" if self.kind == "mm" and item.task != "image_pair" else ":"
            rendered.append(self.prompts.render("temmed_rag_reference", images=images, label=label, report=ref["report"]))
        intro = _intro(self.kind, item.task, len(refs))
        text = self.prompts.render(name, references="\n\n".join(rendered), references_intro=intro,
                                   examples="these examples" if many else "this example",
                                   images=blocks.pair(list(item.images), image_root), question=item.question)
        return name, blocks.parts(text)

    async def solve(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig) -> Solution:
        retriever, refs = self.references(item)
        name, parts = self.render(item, image_root, refs)
        response = await generate(answer_request(item, parts, config))
        call = {"template": name, "retriever": retriever, "references": [r.get("id") for r in refs]}
        return Solution(response.text, [{**call, "output": response.text}])


@register("protocol", "rag-text", description="TemMed text-only RAG: retrieved reports, then the images (k=, retriever=)")
class RagText(_RagSolver):
    """Text-only retrieval augmentation: the top-``k`` reports precede the target images."""

    name = "rag-text"
    kind = "text"
    templates = ("temmed_rag_text_vqa", "temmed_rag_text_report", "temmed_rag_text_pair", "temmed_rag_reference")


@register("protocol", "rag-multimodal",
          description="TemMed multi-modal RAG: retrieved image pairs with reports, then the images (k=, retriever=)")
class RagMultimodal(_RagSolver):
    """Multi-modal retrieval augmentation: each reference's two images and report precede the target images."""

    name = "rag-multimodal"
    kind = "mm"
    templates = ("temmed_rag_mm_vqa", "temmed_rag_mm_report", "temmed_rag_mm_pair", "temmed_rag_reference")

    def max_images(self, item: Item) -> int:
        """The item's images and each reference's historical and current image."""
        return len(item.images) + 2 * self.k


@register("protocol", "retrieval-top1", description="TemMed top-1 retrieval hack: the top reference's report, no model")
class RetrievalTop1(_Retrieving):
    """The report of the top-1 reference as the output, without calling the model (report items only)."""

    name = "retrieval-top1"
    asks_model = False

    async def solve(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig) -> Solution:
        if item.task != "report":
            raise RequestError(f"retrieval-top1 answers report-generation items only, not {item.task!r}.",
                               reason="not_applicable")
        retriever, (ref, *_) = self.references(item)
        return Solution(ref["report"], [{"retriever": retriever, "references": [ref.get("id")], "output": ref["report"]}])


class _Ablation(Solver):
    """The closed-book (`Direct`) call on the item with its `role` image swapped."""

    role = ""
    """``historical`` or ``current``: the `ImageRef.role` replaced."""

    def __init__(self, prompts: PromptSet | None = None) -> None:
        super().__init__(prompts)
        self.direct = Direct(self.prompts)

    def swapped(self, item: Item) -> Item:
        """``item`` with its `role` image replaced by the item's random corpus image."""
        if item.task == "image_pair":
            raise RequestError(f"{self.name} applies to one image pair per item, not to {item.task!r} items.",
                               reason="not_applicable")
        key = f"random_{self.role}"
        if key not in item.meta.get("ablation", {}):
            raise InvalidInputError(f"Item {item.id} has no {key} image; the ablations run on TemMed-Bench items.")
        path = item.meta["ablation"][key]
        images = tuple(ref.model_copy(update={"path": path}) if ref.role == self.role else ref for ref in item.images)
        return item.model_copy(update={"images": images})

    async def solve(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig) -> Solution:
        solution = await self.direct.solve(self.swapped(item), image_root, generate, config)
        return Solution(solution.output, [{**c, "ablation": self.role} for c in solution.calls])


@register("protocol", "random-historical", description="TemMed ablation: closed-book with a random historical image")
class RandomHistorical(_Ablation):
    """Closed-book with the historical image replaced by a random corpus image."""

    name = "random-historical"
    role = "historical"


@register("protocol", "random-current", description="TemMed ablation: closed-book with a random current image")
class RandomCurrent(_Ablation):
    """Closed-book with the current image replaced by a random corpus image."""

    name = "random-current"
    role = "current"
