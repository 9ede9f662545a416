"""The MI-CXR construction pipeline: timelines → windows → candidates → balanced items.

`build_items` is a plain function of timelines and a `MiCxrConfig`; the same
timelines and seed give the same items in the same order, byte for byte
(every random choice comes from a `random.Random` seeded with a string that
names the seed and what is being chosen; nothing iterates over a set).

>>> items, exclusions = build_items([], MiCxrConfig(max_items=10))
>>> items, exclusions["quota_shortfall:single_emergence"]
([], 1)
"""

from __future__ import annotations

import multiprocessing
import os
import random
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Iterable, Iterator, Mapping


from medtemporal._gc import paused_gc
from medtemporal.benchmarks.mi_cxr.balance import Candidate, Caps, Fields, Pool, assign_letters, quotas, select
from medtemporal.benchmarks.mi_cxr.llm import TextModel
from medtemporal.benchmarks.mi_cxr.summaries import (
    Priors,
    gts_multi_candidates,
    gts_multi_draft,
    gts_single_candidates,
    gts_single_draft,
    icr_candidates,
    icr_draft,
    icr_variant_candidates,
    icr_variant_draft,
    priors,
)
from medtemporal.benchmarks.mi_cxr.tel import ANSWERABLE_PAIRS, PAIR_QTYPES, TEL_QTYPES, tel_candidates, tel_draft
from medtemporal.benchmarks.mi_cxr.text import LETTERS
from medtemporal.benchmarks.mi_cxr.text import Draft
from medtemporal.benchmarks.mi_cxr.windows import WINDOW, Window, windows
from medtemporal.family import ImageRef, InvalidInputError, Item, Timeline
from medtemporal.sources.mimic_qba import ENTITIES
from medtemporal.progress import progress_bar

BENCHMARK = "mi-cxr"
VERSION = "1.2.2"  # 1.2.2: the uniform-pattern cap holds on the items built

PAPER_QUOTAS: dict[str, int] = {
    "single_emergence": 500,
    "single_resolution": 500,
    "multiple_emergence_1": 250,
    "multiple_emergence_2": 250,
    "multiple_resolution_1": 250,
    "multiple_resolution_2": 244,
    "emergence_to_resolution": 500,
    "resolution_to_emergence": 500,
    "icr_multi_abn": 317,
    "single_entity_interval_summary": 1000,
    "multi_entity_interval_summary": 1000,
}
"""Items per qtype in the released benchmark (Table 9), 5,311 in all."""
PAPER_TOTAL = sum(PAPER_QUOTAS.values())
PAPER_MIX: dict[str, int] = {
    "pleural effusion": 1672,
    "pneumothorax": 996,
    "cardiomegaly": 922,
    "pulmonary edema": 773,
    "sub-diaphragmatic air": 725,
    "consolidation": 341,
    "vascular congestion": 322,
    "elevated hemidiaphragm": 313,
    "lung opacity": 313,
    "atelectasis": 311,
    "bony structures intact": 296,
    "normal cardiac silhouette": 272,
}
"""Abnormalities used in question construction and their frequencies (Table 10); §3.2 samples to match them."""
UNMIXED = ("icr_variant", "multi_entity_interval_summary")
"""Qtypes whose focus abnormality is not sampled to Table 10's mix: ICR-V (appendix D, its own set) and GTS
multi, where a focus favouring the common abnormalities makes them the true option more often than the three
named beside it, which no choice of those three can undo (pleural effusion, 23% of foci, would have to be
named in 92% of items; `summaries.multi_other_weights`)."""
ICR_VARIANT_ITEMS = 400
"""Size of the paper's ICR-variant set (appendix D)."""

TASKS: dict[str, str] = {
    **{q: "TEL" for q in TEL_QTYPES},
    "icr_multi_abn": "ICR",
    "single_entity_interval_summary": "GTS",
    "multi_entity_interval_summary": "GTS",
    "icr_variant": "ICR-V",
}
"""qtype → task family, in output order."""
QTYPES = tuple(TASKS)


@dataclass(frozen=True)
class MiCxrConfig:
    """Builder options: quotas and abnormality mix are the paper's (Tables 9-10); the cap values are ours
    (appendix A.5.2 names the caps without numbers)."""

    seed: int = 0
    max_items: int = PAPER_TOTAL
    """Main-benchmark size; per-qtype quotas are Table 9 scaled to it."""
    quotas: Mapping[str, int] = field(default_factory=dict)
    """Per-qtype overrides of the scaled quotas."""
    caps: Caps = Caps()
    icr_variant: bool = False
    """Also build the ICR variant (task ``ICR-V``), outside ``max_items``."""
    icr_variant_items: int = ICR_VARIANT_ITEMS
    entities: tuple[str, ...] = ENTITIES
    match_mix: bool = True
    """Sample each qtype's abnormalities to Table 10's shares (`PAPER_MIX`) where the candidates allow."""

    def resolved_quotas(self) -> dict[str, int]:
        """The quota of each qtype to build."""
        unknown = sorted(set(self.quotas) - set(QTYPES))
        if unknown:
            raise InvalidInputError(
                f"Unknown MI-CXR qtype {unknown[0]!r} in --quota; use one of {', '.join(QTYPES)}."
            )
        out = quotas(self.max_items, PAPER_QUOTAS)
        if self.icr_variant:
            out["icr_variant"] = self.icr_variant_items
        out.update({k: v for k, v in self.quotas.items() if k != "icr_variant" or self.icr_variant})
        return {q: out[q] for q in QTYPES if q in out}

    def as_dict(self) -> dict[str, Any]:
        """The resolved options, for the manifest."""
        return {
            "seed": self.seed,
            "max_items": self.max_items,
            "quotas": self.resolved_quotas(),
            "null_cap": self.caps.null,
            "abnormality_cap": self.caps.abnormality,
            "uniform_pattern_cap": self.caps.uniform_pattern,
            "icr_variant": self.icr_variant,
            "match_mix": self.match_mix,
            "entities": list(self.entities),
            "window": WINDOW,
            "stride": 1,
        }


_CANDIDATES: dict[str, Callable[[int, Window], Iterator[Fields]]] = {
    **{q: partial(tel_candidates, q) for q in TEL_QTYPES},
    "icr_multi_abn": icr_candidates,
    "single_entity_interval_summary": gts_single_candidates,
    "multi_entity_interval_summary": gts_multi_candidates,
    "icr_variant": icr_variant_candidates,
}


_DRAFTS: dict[str, Callable[[Candidate, Window, str, random.Random, Priors], Draft]] = {
    "icr_multi_abn": icr_draft,
    "icr_variant": icr_variant_draft,
    "single_entity_interval_summary": gts_single_draft,
    "multi_entity_interval_summary": gts_multi_draft,
}
"""Draft makers of the non-TEL qtypes (TEL drafts need only the focus track)."""


def draft(c: Candidate, window: Window, letter: str, seed: int, prior: Priors) -> Draft:
    """The template text of candidate ``c`` with its correct option at ``letter``."""
    rng = random.Random(f"{seed}:{c.qtype}:{window.patient_id}:{window.start}:{c.entity}:{c.interval}")
    if c.qtype in PAIR_QTYPES:
        weights = prior.pair_weights(c.qtype, ANSWERABLE_PAIRS, len(LETTERS) - 1)
        return tel_draft(c.qtype, window.track(c.entity), letter, rng, weights)
    if c.qtype in TEL_QTYPES:
        return tel_draft(c.qtype, window.track(c.entity), letter, rng)
    return _DRAFTS[c.qtype](c, window, letter, rng, prior)


def _progress(iterable: Iterable[Any], desc: str, total: int | None = None) -> Iterable[Any]:
    return progress_bar(iterable, desc=desc, total=total, unit="", leave=False)


PARALLEL_FROM = 20_000
"""Windows from which `plan` fills the question types' pools in one process per CPU by default."""

_WINDOWS: list[Window] = []
"""The windows a forked `plan` worker reads (inherited from its parent, never pickled)."""


def _share_windows(found: list[Window]) -> None:
    global _WINDOWS
    _WINDOWS = found


def _pick(qtype: str, quota: int, config: MiCxrConfig) -> tuple[list[Candidate], int]:
    """The candidates of ``qtype`` that `select` keeps from `_WINDOWS`, and how many there were.

    A type's pool draws its scores from its own seeded stream, in window order, so the types can be filled
    in any order or process with the same result.
    """
    pool = Pool(random.Random(f"{config.seed}:pool:{qtype}"), max(1000, 20 * quota))
    make, add = _CANDIDATES[qtype], pool.add
    for index, window in enumerate(_WINDOWS):
        for fields in make(index, window):
            add(fields)
    mix = {e: float(PAPER_MIX[e]) for e in config.entities if e in PAPER_MIX} if config.match_mix else None
    return select(pool.ordered(), quota, config.caps, None if qtype in UNMIXED else mix), pool.seen


def _pick_all(found: list[Window], targets: dict[str, int], config: MiCxrConfig,
              workers: int | None) -> list[tuple[list[Candidate], int]]:
    """`_pick` of each type in ``targets`` (in that order), in ``workers`` forked processes (default: one per
    CPU from `PARALLEL_FROM` windows, where the platform forks; else this process)."""
    if workers is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        workers = cpus if len(found) >= PARALLEL_FROM else 1
    jobs = [(q, n, config) for q, n in targets.items()]
    if workers < 2 or len(jobs) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        _share_windows(found)
        try:
            return [_pick(*job) for job in _progress(jobs, "question types")]
        finally:
            _share_windows([])
    context = multiprocessing.get_context("fork")  # workers inherit the windows instead of unpickling them
    with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=context, initializer=_share_windows,
                             initargs=(found,)) as executor:
        return list(_progress(executor.map(_pick, *zip(*jobs)), "question types", len(jobs)))


def plan(
    timelines: Iterable[Timeline], config: MiCxrConfig, exclusions: Counter[str], workers: int | None = None
) -> tuple[list[Window], list[Candidate], list[str]]:
    """Windows (by patient, then start), the selected candidates (in output order) and their correct letters.

    ``workers``: processes that fill the question types' pools (`_pick_all`); the result does not depend on it.
    """
    timelines = sorted(timelines, key=lambda t: t.patient_id)
    found = list(windows(_progress(timelines, "windows"), exclusions, config.entities))
    targets = config.resolved_quotas()
    chosen: list[Candidate] = []
    for (q, n), (picked, seen) in zip(targets.items(), _pick_all(found, targets, config, workers)):
        exclusions[f"candidates_not_selected:{q}"] += seen - len(picked)
        if len(picked) < n:
            exclusions[f"quota_shortfall:{q}"] += n - len(picked)
        chosen.extend(picked)
    order = {q: i for i, q in enumerate(QTYPES)}

    def position(c: Candidate) -> tuple[Any, ...]:
        w = found[c.window]
        return (order[c.qtype], w.patient_id, w.start, c.entity, -1 if c.interval is None else c.interval)

    chosen.sort(key=position)
    letters = assign_letters(chosen, random.Random(f"{config.seed}:letters"))
    return found, chosen, letters


def abnormality_mix(items: Iterable[Item], entities: Iterable[str]) -> dict[str, dict[str, float]]:
    """Target (Table 10, over ``entities``) and achieved shares of each abnormality over the main-benchmark
    items (ICR-V excluded), for the manifest."""
    target = {e: PAPER_MIX[e] for e in entities if e in PAPER_MIX}
    achieved = Counter(str(it.meta.get("abnormality")) for it in items if it.task != "ICR-V")
    n, t = sum(achieved.values()) or 1, sum(target.values()) or 1
    return {e: {"target": round(target.get(e, 0) / t, 4), "achieved": round(achieved.get(e, 0) / n, 4)}
            for e in dict.fromkeys([*target, *sorted(achieved)])}


def make_item(c: Candidate, window: Window, text: Draft, source: str = "template") -> Item:
    """The `Item` of a drafted candidate: five visit images, options A–E, meta for audit."""
    track = window.track(c.entity)
    images = [
        ImageRef(path=s.frontal, visit=i, timestamp=s.timestamp, role="visit", label=f"T{i}")  # type: ignore[arg-type]
        for i, s in enumerate(window.studies, 1)
    ]
    meta = {
        "patient_id": window.patient_id,
        "study_ids": [s.study_id for s in window.studies],
        "window": window.start,
        "abnormality": c.entity,
        "states": track.states,
        "changes": list(track.changes),
        "pattern": c.pattern,
        "null": c.null,
        "text": source,
        **text.meta,
    }
    return Item.create(
        benchmark=BENCHMARK,
        task=TASKS[c.qtype],
        subtype=c.qtype,
        images=images,
        question=text.question,
        options=text.options,
        answer_type="choice",
        answer=text.answer,
        meta=meta,
    )


def build_items(
    timelines: Iterable[Timeline], config: MiCxrConfig, text_model: TextModel | None = None
) -> tuple[list[Item], Counter[str]]:
    """MI-CXR items from ``timelines``, and what was left out (with counts).

    Text comes from templates, or, for the summary qtypes, from ``text_model``
    where its output passes the checks of `mi_cxr_llm`.
    """
    exclusions: Counter[str] = Counter()
    with paused_gc():  # millions of windows and candidates at MIMIC scale
        found, chosen, letters = plan(timelines, config, exclusions)
        prior = priors(chosen, found)
        drafts = [
            draft(c, found[c.window], letter, config.seed, prior)
            for c, letter in _progress(zip(chosen, letters), "items", len(chosen))
        ]
    texts = text_model.reword(chosen, found, drafts, exclusions) if text_model else [(d, "template") for d in drafts]
    items = [make_item(c, found[c.window], d, source) for c, (d, source) in zip(chosen, texts)]
    return items, exclusions
