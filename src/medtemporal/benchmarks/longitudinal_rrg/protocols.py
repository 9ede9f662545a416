"""The family's three protocols: how much of the prior study the model sees.

* ``rrg-current`` — the current study only;
* ``rrg-prior-images`` — the current study's images, then the prior study's;
* ``rrg-prior-report`` — the same images, then the prior report (``PRIOR_REPORT: ...``), as MAIRA-2 lays out
  its input (``processing_maira2.py``: images, ``PRIOR_REPORT``, then the instruction with INDICATION,
  TECHNIQUE and COMPARISON). The family's default.

Each sends one user message: the images under their captions (`items.caption`: which study, which visit, how
long before the current one, which view), then the text parts. An item without a prior gets the current study
alone under every protocol (MAIRA-2: no prior image, no ``PRIOR_REPORT``; Libra's duplicated "dummy prior"
image is not sent). Which images of a study (option ``views``, ``--protocol-option views=...``):

* ``maira2`` (default) — the current study's first frontal and first lateral image, and the prior's first
  frontal one (MAIRA-2's three inputs; a study without a frontal image shows its first image);
* ``frontal`` — one image per study, frontal where it has one (Libra's and MLRG's current/prior pair);
* ``all`` — every image of each shown study (ReXrank's multi-image setting).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medtemporal.backends.base import GenerateConfig, ImagePart, Part, TextPart
from medtemporal.benchmarks.longitudinal_rrg.items import CONTEXT, MISSING, caption
from medtemporal.family import (
    Generate, ImageRef, InvalidInputError, Item, PromptSet, Solution, Solver, answer_request, register,
)
from medtemporal.sources.mimic_cxr import FRONTAL_VIEWS

VIEWS = ("maira2", "frontal", "all")
COMPARISON_CLAUSE = " in comparison to the prior frontal image"
"""MAIRA-2's words after "in the radiology study" when a prior image is shown."""


def _first(refs: list[ImageRef], frontal: bool) -> list[ImageRef]:
    """The first frontal (or, with ``frontal`` False, non-frontal) image of ``refs`` as a list of at most one."""
    return next(([r] for r in refs if (r.view in FRONTAL_VIEWS) == frontal), [])


def select(refs: list[ImageRef], views: str, lateral: bool) -> list[ImageRef]:
    """The images of one study that ``views`` shows (module doc); ``lateral``: MAIRA-2's current lateral too."""
    if views == "all" or not refs:
        return refs
    frontal = _first(refs, True) or refs[:1]
    return frontal + (_first(refs, False) if lateral and views == "maira2" else [])


class ReportProtocol(Solver):
    """One call: the shown images under their captions, the prior report when shown, the instruction."""

    prior_images = False
    prior_report = False
    templates = ("longitudinal_rrg_findings", "longitudinal_rrg_impression", "longitudinal_rrg_prior_report")

    def __init__(self, prompts: PromptSet | None = None, views: str = "maira2") -> None:
        super().__init__(prompts)
        if views not in VIEWS:
            raise InvalidInputError(f"Protocol option views={views!r} is unknown; use one of {', '.join(VIEWS)}.")
        self.views = views

    @property
    def settings(self) -> dict[str, Any]:
        """The options this protocol runs with (recorded in the run's config)."""
        return {"views": self.views}

    def shown(self, item: Item) -> list[ImageRef]:
        """The item's images this protocol sends, captioned, current study first."""
        current = [r for r in item.images if r.role == "current"]
        refs = select(current, self.views, lateral=True)
        with_prior = self.prior_images and item.meta.get("prior") is not None
        if with_prior:
            refs += select([r for r in item.images if r.role == "historical"], self.views, lateral=False)
        interval = item.meta["prior"]["interval"] if with_prior else None
        return [r.model_copy(update={"label": caption(r, interval, with_prior)}) for r in refs]

    def max_images(self, item: Item) -> int:
        return len(self.shown(item))

    def parts(self, item: Item, image_root: Path) -> tuple[str, list[Part]]:
        """The template name of the instruction and the message parts for ``item``."""
        if item.task not in ("findings", "impression") or "context" not in item.meta:
            raise InvalidInputError(f"Item {item.id} ({item.benchmark}/{item.task}) is not a longitudinal-rrg item; "
                                    f"protocol {self.name} writes longitudinal-rrg reports only.")
        refs = self.shown(item)
        parts: list[Part] = []
        for ref in refs:
            parts += [TextPart(str(ref.label)), ImagePart(image_root / ref.path)]
        prior = item.meta.get("prior")
        if self.prior_report and prior is not None:
            text = self.prompts.render("longitudinal_rrg_prior_report", prior_report=prior["report"] or MISSING)
            parts.append(TextPart(text))
        shows_prior = any(r.role == "historical" for r in refs)
        context = item.meta["context"]
        name = f"longitudinal_rrg_{item.task}"
        parts.append(TextPart(self.prompts.render(name, comparison_clause=COMPARISON_CLAUSE if shows_prior else "",
                                                  **{k: context.get(k) or MISSING for k in CONTEXT})))
        return name, parts

    async def solve(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig) -> Solution:
        name, parts = self.parts(item, image_root)
        response = await generate(answer_request(item, parts, config))
        images = sum(isinstance(p, ImagePart) for p in parts)
        return Solution(response.text, [{"template": name, "images": images, "output": response.text}])


@register("protocol", "rrg-current", description="longitudinal-rrg: the current study only (views=maira2|frontal|all)")
class CurrentOnly(ReportProtocol):
    """The current study's images and the report context; no prior."""

    name = "rrg-current"


@register("protocol", "rrg-prior-images",
          description="longitudinal-rrg: current and prior images (views=maira2|frontal|all)")
class PriorImages(ReportProtocol):
    """The current study's images, then the prior's; no prior report."""

    name = "rrg-prior-images"
    prior_images = True


@register("protocol", "rrg-prior-report",
          description="longitudinal-rrg: current and prior images and the prior report, as MAIRA-2 (views=...)")
class PriorReport(ReportProtocol):
    """The current and prior images, the prior report, the instruction: MAIRA-2's layout."""

    name = "rrg-prior-report"
    prior_images = True
    prior_report = True
