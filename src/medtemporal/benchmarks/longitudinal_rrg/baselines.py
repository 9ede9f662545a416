"""The three baselines every report-generation paper should print, as backends: ``longitudinal_rrg:KIND``.

* ``copy-prior`` — the prior report's section of the task (its findings, or its impression; the other one
  when the prior lacks it): how much does a model add over restating the prior? The reports' reference row.
  An item without a prior gets an empty report (nothing to copy): scored as an invalid answer, so compare on
  the ``with_prior`` rows.
* ``normal-report`` — one constant normal report per task, `NORMAL_REPORT` (ours, worded as MIMIC-CXR's
  normal reports are): what the commonest kind of report scores whatever the images show.
* ``nearest-report`` — the task's section of the nearest training study by image retrieval, found at build
  time (`nearest`): what copying a similar-looking study's report scores. Items built with ``--no-retrieval``
  have none: the run reports them failed, with the reason.

They read each item's recorded prior or neighbour (fitted by the runner, `Backend.fit_items`), look at no
pixel and answer instantly, under any protocol (the prompt does not change their answer).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from medtemporal.family import Backend, Item, Request, RequestError, Response, UnknownNameError, register

SCHEME = "longitudinal_rrg"
KINDS = ("copy-prior", "normal-report", "nearest-report")
URIS = tuple(f"{SCHEME}:{kind}" for kind in KINDS)
REFERENCE = URIS[0]
"""The baseline every report compares with: the prior report restated."""
NORMAL_REPORT = {
    "findings": "The lungs are clear. There is no focal consolidation, pleural effusion or pneumothorax. The "
                "cardiomediastinal silhouette is normal. No acute osseous abnormality.",
    "impression": "No acute cardiopulmonary process.",
}
"""The constant normal report of each task (ours)."""


def copy_prior(item: Item) -> str:
    """The prior report's section of ``item``'s task, else its other section, else ``""`` (no prior or neither)."""
    prior = item.meta.get("prior") or {}
    other = "impression" if item.task == "findings" else "findings"
    return prior.get(item.task) or prior.get(other) or ""


def nearest_report(item: Item) -> str | None:
    """The nearest training study's section of ``item``'s task, None when the build found none."""
    near = item.meta.get("nearest")
    return near["text"] if near else None


ANSWERS: dict[str, Callable[[Item], str | None]] = {
    "copy-prior": copy_prior, "normal-report": lambda item: NORMAL_REPORT.get(item.task),
    "nearest-report": nearest_report}
"""Each baseline's answer to an item (`KINDS`), for its backend and the audit's text-only floor."""


class ReportBaseline(Backend):
    """One of `KINDS`, answering each request from the item it asks about."""

    cacheable = False

    def __init__(self, uri: str, kind: str) -> None:
        super().__init__(uri=uri, concurrency=64)
        self.kind = kind
        self.answers: dict[str, str | None] = {}

    @property
    def reads_images(self) -> bool:
        return False

    def fit_items(self, items: Sequence[Item]) -> None:
        pick = ANSWERS[self.kind]
        self.answers = {i.id: pick(i) for i in items}

    async def generate(self, request: Request) -> Response:
        if request.item is None or request.item not in self.answers:
            raise RequestError(f"{self.uri} answers only longitudinal-rrg items it was fitted with (run it with "
                               "`medtemporal run`).", reason="not_fitted")
        answer = self.answers[request.item]
        if answer is None:
            why = ("the benchmark was built with --no-retrieval, or its corpus holds no study of another patient with "
                   "this section; rebuild it without that option or with a larger --retrieval-corpus"
                   if self.kind == "nearest-report" else "this item's task has no constant report")
            raise RequestError(f"{self.uri} has no answer for item {request.item}: {why}.", reason="no_baseline_answer")
        return Response(answer, model=self.uri)

    def identity(self) -> dict[str, Any]:
        found = {"uri": self.uri, "baseline": self.kind}
        return {**found, "reports": NORMAL_REPORT} if self.kind == "normal-report" else found


@register("backend", SCHEME, example=REFERENCE,
          description="longitudinal-rrg baselines: copy-prior, normal-report, nearest-report (not models)")
def load_report_baseline(uri: str, target: str) -> ReportBaseline:
    """The baseline named by ``target`` (one of `KINDS`)."""
    if target not in KINDS:
        raise UnknownNameError(f"Unknown report baseline {target!r}. Available: {', '.join(KINDS)}.")
    return ReportBaseline(uri, target)
