"""A demo instrument for stage-wise probing: ``micxr-describer:noisy-truth``. Not a model.

The baselines cannot write stage 1 of the stage-wise protocol (MI-CXR appendix
E.2, figures 17-24: one description per consecutive interval), so the demo
could not show stage-wise vs direct (Fig. 3). This backend can, by reading
what no model sees: the item's *recorded* interval changes (``meta.changes``
of its focus abnormality, fitted by the runner through `Backend.fit_items`).

- A request without an answer space (stage 1, which carries the item id) gets
  ``T1 → T2: <abnormality> <change>.`` for each interval, the change replaced by
  another kind with probability ``noise`` (seeded by the item and the seed). So
  the share of described intervals that agree with the annotation is known in
  advance (about 1 − ``noise``), which checks `analyses.description_check` end to end.
- A closed request (direct, or stage 2) is answered like ``baseline:random``
  (a seeded uniformly random option): its accuracy is chance under both protocols,
  so a stage-wise − direct difference it shows is sampling noise, as it should be.

It exists to exercise the stage-wise machinery on phantom data; its scores say
nothing about any model, and the report names it by its URI.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any, Sequence

from medtemporal.family import InvalidInputError, Item, Request, RequestError, Response, UnknownNameError, register
from medtemporal.backends.baselines import RandomBaseline

PHRASES = {
    "emergence": "{a} newly appears",
    "resolution": "{a} has resolved",
    "worsening": "{a} is worse",
    "improvement": "{a} has improved",
    "unchanged": "{a} is unchanged",
    "persistent": "{a} is unchanged",
    "absent": "{a} remains absent",
}
"""Change type → a sentence that `stage1.CHANGE_WORDS` reads as exactly that kind."""
KINDS = ("emergence", "resolution", "worsening", "improvement", "unchanged")


class NoisyTruthDescriber(RandomBaseline):
    """Stage-1 descriptions from the recorded truth with a known error rate; random answers otherwise."""

    def __init__(self, uri: str, noise: float = 0.25, seed: int = 0) -> None:
        super().__init__(uri, seed)
        if not 0 <= noise <= 1:
            raise InvalidInputError(f"The describer's noise (--option noise=F) must be between 0 and 1, not {noise}.")
        self.noise = noise
        self.truth: dict[str, tuple[str, tuple[str, ...]]] = {}

    def fit_items(self, items: Sequence[Item]) -> None:
        self.truth = {i.id: (str(i.meta.get("abnormality", "the abnormality")), tuple(i.meta.get("changes") or ()))
                      for i in items}

    def describe(self, item_id: str) -> str:
        """The stage-1 description of item ``item_id``: one line per interval."""
        entity, changes = self.truth[item_id]
        rng = random.Random(hashlib.sha256(f"{self.seed}\x00{item_id}".encode()).digest())
        lines = []
        for i, change in enumerate(changes, 1):
            if rng.random() < self.noise:
                shown = "unchanged" if change in ("absent", "persistent") else change
                change = rng.choice([k for k in KINDS if k != shown])
            lines.append(f"T{i} → T{i + 1}: " + PHRASES.get(change, "{a} shows an unclear change").format(a=entity) + ".")
        return "\n".join(lines)

    async def generate(self, request: Request) -> Response:
        if request.choices:
            return await super().generate(request)
        if request.item is None or request.item not in self.truth:
            raise RequestError(f"{self.uri} describes only items it was fitted with (run it with `medtemporal run "
                               "--protocol stagewise`).", reason="not_fitted")
        return Response(self.describe(request.item), model=self.uri)

    def identity(self) -> dict[str, Any]:
        return {"uri": self.uri, "seed": self.seed, "noise": self.noise,
                "instrument": "demo: descriptions from recorded truth, not a model"}


@register("backend", "micxr-describer", example="micxr-describer:noisy-truth",
          description="demo instrument (not a model): MI-CXR stage-1 descriptions from the items' recorded truth "
                      "with a known error rate, random answers")
def load_describer(uri: str, target: str, *, noise: float = 0.25, seed: int = 0) -> NoisyTruthDescriber:
    """The describer named by ``target`` (only ``noisy-truth``)."""
    if target != "noisy-truth":
        raise UnknownNameError(f"Unknown describer {target!r}. Available: noisy-truth.")
    return NoisyTruthDescriber(uri, float(noise), int(seed))
