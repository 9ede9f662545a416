"""Items of the family: one per (case, section), with every image captioned by its visit and date order.

An item's images are the current study's (role ``current``), then the prior study's (role ``historical``),
each study's frontal images first (MAIRA-2's order: current frontal, current lateral, prior frontal;
``processing_maira2.py`` ``_normalize_and_stack_images``). Captions name the visit and the interval
(`caption`): ``Current study (visit 2), frontal (PA) image:`` and ``Prior study (visit 1, 35 days before
the current study), frontal (PA) image:``; a study shown alone is captioned ``Current study, frontal (PA)
image:``. Dates are given as intervals only: MIMIC-CXR's dates are shifted into the 2100s.

Task ``findings`` (every case) or ``impression`` (the cases whose report has an impression too: 1,624 of the
2,347 on the release, CXRMate's test set; FACTS §6.1); subtype ``with_prior`` or ``no_prior``; answer and
reference the current report's section text as the parser reads it. ``meta`` holds the patient and study
ids, the current report's INDICATION (or HISTORY), TECHNIQUE and COMPARISON (the context MAIRA-2 gives the
model; "N/A" when absent, as ``_get_section_text_or_missing_text`` writes), the prior (its study id, the interval, its
findings and impression and its report as a prompt shows it) and, when built, the nearest training report.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from medtemporal.benchmarks.longitudinal_rrg.studies import Case, Visit
from medtemporal.schema import ImageRef, Item

BENCHMARK = "longitudinal-rrg"
SECTIONS = ("findings", "impression")
"""The tasks: which section of the current report is written."""
SUBTYPES = ("with_prior", "no_prior")
QUESTIONS = {
    "findings": "Provide a description of the findings in the radiology study.",
    "impression": "Provide the impression of the radiology study.",
}
"""Each task's instruction without context (MAIRA-2's findings instruction; the impression one is ours)."""
CONTEXT = ("indication", "technique", "comparison")
"""The current report's sections a prompt gives the model (MAIRA-2's INDICATION, TECHNIQUE, COMPARISON)."""
MISSING = "N/A"
"""What a missing section is written as (MAIRA-2, ``_get_section_text_or_missing_text``)."""
_VIEWS = {"PA": "frontal (PA)", "AP": "frontal (AP)", "LATERAL": "lateral", "LL": "lateral (LL)"}


def view_words(view: str | None) -> str:
    """How a caption names a ``ViewPosition`` (``PA`` → ``frontal (PA)``; unknown ones as written)."""
    if not view:
        return "unlabelled"
    return _VIEWS.get(view, view.lower() if view.isupper() else view)


def interval_words(delta: pd.Timedelta) -> str:
    """An interval in words: hours below a day, else whole days.

    >>> interval_words(pd.Timedelta(hours=3.2)), interval_words(pd.Timedelta(days=1, hours=5))
    ('3 hours', '1 day')
    """
    hours = delta.total_seconds() / 3600
    if hours < 24:
        n = max(1, round(hours))
        return f"{n} hour{'s' if n != 1 else ''}"
    days = int(hours // 24)
    return f"{days} day{'s' if days != 1 else ''}"


def caption(ref: ImageRef, interval: str | None, with_prior: bool) -> str:
    """The caption of ``ref`` in a prompt that shows the prior study (``with_prior``) or the current one alone.

    >>> caption(ImageRef(path="a.jpg", role="historical", view="PA", visit=1), "35 days", True)
    'Prior study (visit 1, 35 days before the current study), frontal (PA) image:'
    >>> caption(ImageRef(path="b.jpg", role="current", view="LATERAL", visit=2), "35 days", False)
    'Current study, lateral image:'
    """
    view = view_words(ref.view)
    if ref.role == "historical":
        return f"Prior study (visit 1, {interval} before the current study), {view} image:"
    if with_prior:
        return f"Current study (visit 2), {view} image:"
    return f"Current study, {view} image:"


def prior_report(sections: Mapping[str, str]) -> str:
    """The prior report as a prompt shows it: its findings and impression, each under its header (`MISSING`
    when it has neither)."""
    parts = [f"{name.upper()}: {sections[name]}" for name in SECTIONS if sections.get(name)]
    return " ".join(parts) or MISSING


def context(sections: Mapping[str, str]) -> dict[str, str]:
    """The INDICATION, TECHNIQUE and COMPARISON a prompt gives (`MISSING` where absent); an old-style report's
    HISTORY stands for its indication (ours: MAIRA-2 names INDICATION only).

    >>> context({"history": "Cough.", "comparison": "None."})
    {'indication': 'Cough.', 'technique': 'N/A', 'comparison': 'None.'}
    """
    found = {k: sections.get(k) for k in CONTEXT}
    found["indication"] = found["indication"] or sections.get("history")
    return {k: v or MISSING for k, v in found.items()}


def _refs(visit: Visit, role: str, number: int) -> list[ImageRef]:
    """The visit's images in their order (frontal first), as references of ``role``."""
    when = visit.record.time.isoformat(timespec="milliseconds") if visit.record.time is not None else None
    return [ImageRef(path=p, visit=number, timestamp=when, role=role, view=v or None) for p, v in visit.record.images]


def case_meta(case: Case) -> dict[str, Any]:
    """What every item of ``case`` records beside its images and answer (module doc)."""
    cur = case.current.record
    when = pd.Timestamp(cur.time)  # an item's study has a time (`studies` rule 1)
    meta: dict[str, Any] = {
        "patient_id": cur.patient, "study_id": cur.study, "study_time": when.isoformat(), "split": cur.split,
        "context": context(case.current.sections),
        "prior": None,
    }
    if case.prior is not None:
        prior = case.prior.record
        before = pd.Timestamp(prior.time)  # earlier than the current study's (`studies` rule 2)
        meta["prior"] = {
            "study_id": prior.study, "study_time": before.isoformat(),
            "interval": interval_words(when - before),
            "days_before": round((when - before).total_seconds() / 86400, 4),
            "findings": case.prior.sections.get("findings") or None,
            "impression": case.prior.sections.get("impression") or None,
            "report": prior_report(case.prior.sections),
            "images": len(case.prior.record.images),
        }
    return meta


def make_item(case: Case, section: str, meta: dict[str, Any]) -> Item:
    """The item of ``case`` for task ``section`` (module doc); ``meta`` from `case_meta` (plus retrieval)."""
    cur = case.current
    has_prior = case.prior is not None
    refs = _refs(cur, "current", 2 if has_prior else 1)
    if case.prior is not None:
        refs += _refs(case.prior, "historical", 1)
    interval = meta["prior"]["interval"] if has_prior else None
    images = [r.model_copy(update={"label": caption(r, interval, has_prior)}) for r in refs]
    text = cur.sections[section]
    return Item.create(benchmark=BENCHMARK, task=section, subtype=SUBTYPES[0] if has_prior else SUBTYPES[1],
                       images=images, question=QUESTIONS[section], answer_type="open", answer=text, reference=text,
                       meta=meta)
