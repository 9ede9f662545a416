"""Shuffled images with explicit dates (ELTLM §4.3.2, Fig. 4): does the model read time from labels?

The item's images are shown in a seeded random order other than the item's
order (for two or more images), each captioned with a date, and the prompt
says to read them by date (template ``shuffled_timestamps`` around the
family's own question prompt). The order shown is kept in the prediction's
``calls``, so runs compare item by item with the direct run.

``dates=synthetic`` (the default) is the paper's setting (appendix F, Table
5): invented dates. A model (``dater=URI``, default the run's model)
describes each image and the series (as ``caption-then-reason`` does), then
writes one date per image from the question, the descriptions and the
summary (prompts ``timestamps_system``, ``timestamps``). Its reply must be a
JSON array of N ``YYYY-MM-DD`` strings (or an object ``Image1..ImageN`` →
date), ascending with at least a day between neighbours; any other reply
fails the item with one sentence (``bad_dates``).

``dates=real`` shows the recorded study dates (MIMIC-shifted), each moved
where needed to the day after the previous image's (`ordered_dates`), since
the paper's dates are strictly ascending and at least a day apart and real
ones are not always (two studies of one day); the calls record the dates as
recorded and how many moved (``dates_moved``). ``dates=recorded`` shows the
recorded dates unchanged (ties and all).

Shown dates never contradict the recorded ones. The time order of an item is
its images sorted by their recorded timestamps (`chronology`; the item's own
order where it has none): an item built with ``--order file`` may list its
images in another order, and then the date writer still describes them in
time order and the moved dates still ascend in it, so no image is dated
before one recorded as earlier. Where the two orders differ the calls record
the time order (``chronology``).
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from medtemporal.backends.base import GenerateConfig, ImagePart, Message, Part, Request, RequestError, TextPart
from medtemporal.errors import InvalidInputError
from medtemporal.prompts import PromptSet
from medtemporal.protocols.base import Generate, Solution, Solver, answer_request
from medtemporal.protocols.direct import question_prompt
from medtemporal.registry import register
from medtemporal.schema import Item, content_hash


DATES = ("synthetic", "real", "recorded")
"""``dates`` options: the paper's invented ones (default), real dates moved apart where they tie, or as recorded."""


def shuffled_order(item: Item, seed: int) -> list[int]:
    """A permutation of the item's image indices, fixed by ``seed`` and the item, not the identity when n ≥ 2."""
    n = len(item.images)
    rng = np.random.default_rng([seed, int(content_hash([item.id], 12), 16)])
    while True:
        order = [int(i) for i in rng.permutation(n)]
        if n < 2 or order != sorted(order):
            return order


@register("protocol", "shuffled-timestamps",
          description="images in seeded random order, each labelled with its date; the model reads by date")
class ShuffledTimestamps(Solver):
    """One call with the images shuffled and dated."""

    name = "shuffled-timestamps"
    templates = ("shuffled_timestamps",)

    def __init__(self, prompts: PromptSet | None = None, seed: int = 0, dates: str = "synthetic",
                 dater: str | None = None) -> None:
        super().__init__(prompts)
        if dates not in DATES:
            raise InvalidInputError(f"--protocol-option dates must be one of {', '.join(DATES)}, not {dates!r}.")
        self.seed = seed
        self.dates = dates
        self.dater = dater
        if dates == "synthetic":
            self.templates = (*self.templates, "timestamps_system", "timestamps", "caption_image", "caption_summary")
        from medtemporal.protocols.caption_then_reason import CaptionThenReason

        self._captioner = CaptionThenReason(self.prompts, captioner=dater)

    @property
    def settings(self) -> dict[str, object]:
        """The resolved options, defaults included; the runner records them as the protocol's options."""
        out: dict[str, object] = {"seed": self.seed, "dates": self.dates}
        if self.dates == "synthetic" and self.dater:
            out["dater"] = self.dater
        return out

    def side_models(self) -> tuple[Any, ...]:
        return self._captioner.side_models() if self.dates == "synthetic" else ()

    async def _synthetic_dates(self, item: Item, image_root: Path, generate: Generate,
                               config: GenerateConfig) -> tuple[list[str], list[dict[str, Any]]]:
        """Appendix F dates, one per image of the item (written in its time order, `chronology`), and the calls
        that made them."""
        from medtemporal.protocols.caption_then_reason import listed

        order = chronology(item)
        in_time = item.model_copy(update={"images": tuple(item.images[i] for i in order)})
        captioner = self._captioner
        descriptions, summary, calls = await captioner.describe(in_time, image_root, generate, config)
        user = self.prompts.render("timestamps", question=item.question, image_list=listed(descriptions, "Image{k}: "),
                                   summary=summary)
        request = Request((Message("system", (TextPart(self.prompts.render("timestamps_system")),)),
                           Message("user", (TextPart(user),))), config)
        reply = (await captioner.side_models()[0].generate(request, generate)).text
        calls.append({"stage": "dates", "output": reply})
        return placed(parse_dates(reply, len(item.images)), order), calls

    async def solve(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig) -> Solution:
        order = chronology(item)
        extra: dict[str, Any] = {} if order == sorted(order) else {"chronology": order}
        if self.dates == "synthetic":
            dates, calls = await self._synthetic_dates(item, image_root, generate, config)
            return await self._answer(item, image_root, generate, config, dates, calls, extra)
        if any(not ref.timestamp for ref in item.images):
            raise InvalidInputError(
                f"Item {item.id} has images without a date; shuffled-timestamps with dates={self.dates} needs dated "
                "images (build the benchmark with its image metadata, e.g. --mimic-cxr-jpg)."
            )
        recorded = [str(ref.timestamp)[:10] for ref in item.images]
        if self.dates == "recorded":
            return await self._answer(item, image_root, generate, config, recorded, [], extra)
        dates = placed(ordered_dates([recorded[i] for i in order]), order)
        moved = sum(a != b for a, b in zip(recorded, dates))
        return await self._answer(item, image_root, generate, config, dates, [],
                                  {"recorded_dates": recorded, "dates_moved": moved, **extra})

    async def _answer(self, item: Item, image_root: Path, generate: Generate, config: GenerateConfig,
                      dates: list[str], calls: list[dict[str, Any]],
                      extra: dict[str, Any] | None = None) -> Solution:
        order = shuffled_order(item, self.seed)
        parts: list[Part] = []
        for i in order:
            parts += [TextPart(f"Image taken on {dates[i]}:"), ImagePart(image_root / item.images[i].path)]
        template, text = question_prompt(item, self.prompts)
        prompt = self.prompts.render("shuffled_timestamps", n_images=len(order), prompt=text)
        response = await generate(answer_request(item, (*parts, TextPart(prompt)), config))
        calls.append({"template": template, "shown_order": order, "dates": dates, **(extra or {}),
                      "output": response.text})
        return Solution(response.text, calls)


def chronology(item: Item) -> list[int]:
    """The item's image indices in time order: sorted by recorded timestamp (the item's order breaks ties), or
    the item's order when an image has none.

    >>> from medtemporal.schema import ImageRef
    >>> refs = [ImageRef(path=f"{k}.jpg", visit=k, timestamp=t) for k, t in enumerate(["2150-03-05", "2150-01-02"], 1)]
    >>> chronology(Item.create(benchmark="b", task="t", subtype="s", images=refs, question="?", answer_type="open",
    ...                        answer="x"))
    [1, 0]
    """
    if any(not ref.timestamp for ref in item.images):
        return list(range(len(item.images)))
    return sorted(range(len(item.images)), key=lambda i: (str(item.images[i].timestamp), i))


def placed(dates: Sequence[str], order: Sequence[int]) -> list[str]:
    """Dates written in ``order`` (``dates[k]`` belongs to image ``order[k]``), put back in the item's order.

    >>> placed(["2020-01-01", "2020-02-01"], [1, 0])
    ['2020-02-01', '2020-01-01']
    """
    out = [""] * len(order)
    for date_, i in zip(dates, order):
        out[i] = date_
    return out


def ordered_dates(recorded: Sequence[str]) -> list[str]:
    """``recorded`` ISO dates (in visit order) made strictly ascending, at least a day apart: each date that is
    not at least a day after the previous one's (after its own move) becomes the day after it.

    >>> ordered_dates(["2150-03-01", "2150-03-01", "2150-02-20", "2150-05-01"])
    ['2150-03-01', '2150-03-02', '2150-03-03', '2150-05-01']
    """
    out: list[date] = []
    for text in recorded:
        day = date.fromisoformat(text)
        out.append(max(day, out[-1] + timedelta(days=1)) if out else day)
    return [d.isoformat() for d in out]


def parse_dates(reply: str, n: int) -> list[str]:
    """``n`` ascending ISO dates (at least a day apart) from a date writer's JSON reply.

    >>> parse_dates('["2020-01-01", "2020-03-05"]', 2)
    ['2020-01-01', '2020-03-05']

    Raises:
        RequestError: the reply is not such a list (reason ``bad_dates``).
    """
    text = reply.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        data = [data.get(f"Image{k}") for k in range(1, n + 1)]
    try:
        days = [date.fromisoformat(d) for d in data] if isinstance(data, list) and len(data) == n else None
    except (TypeError, ValueError):
        days = None
    if days is None or any(b - a < timedelta(days=1) for a, b in zip(days, days[1:])):
        raise RequestError(
            f"The date writer's reply is not {n} ascending YYYY-MM-DD dates a day apart: {reply[:120]!r}.",
            reason="bad_dates",
        )
    return [d.isoformat() for d in days]
