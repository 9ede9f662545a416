"""``medtemporal phantoms mmxu``: an ``MMXU-test.jsonl`` in the release's schema over a phantom CXR cohort.

It reads the cohort's ``phantom_truth.jsonl`` (``medtemporal phantoms cxr``) and asks, as the release does,
how a region changed between a patient's prior and current study (consecutive studies with a usable
frontal image), each answer following from the phantom's known states:

* **Regions** (`REGIONS`): each names the findings that can change in it (the renderer draws them there).
  A finding's level in a region is its severity (1–3) when present on that side (``bilateral`` covers
  both), else 0. A (pair, region) is asked only when exactly one of its findings is present at either
  study, so every other statement about the region is false.
* **Change**: level up is ``worsen`` (``new`` from 0, else ``increased``), down is ``improved``
  (``resolved`` to 0, else ``decreased``), equal is ``no change`` (``unchanged``): the release's
  ``content_type`` values and the change word of each option.
* **Options, not answerable from their text**: a region's claims are its findings × the three content
  types. Each region asks every (finding, content type) cell equally often (the most items a balanced
  design allows, over the findings the cohort can fill), so ``content_type`` is balanced; the three
  distractors are other claims of the same region drawn uniformly, each worded with the change word of a
  true statement of its cell drawn at random. The four options of an item are then exchangeable: given
  the options, each is the answer with probability one in four, whatever its wording (`medtemporal audit`
  measures it; ``docs/mmxu.md`` has the figures). Templates (`wording`) are drawn independently of
  which option is right; each letter answers each content type equally often (within one).

Written under ``OUT``: ``MMXU-test.jsonl`` (the release's keys, order and spacing), ``phantom_truth.jsonl``
(per question: patient, studies, region, finding, levels and every option's claim) and
``phantom_manifest.json`` (last; `medtemporal.provenance`).
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from medtemporal.benchmarks.mmxu.release import CONTENT_TYPES, release_line
from medtemporal.benchmarks.mmxu.wording import option_text, question_text
from medtemporal.family import InvalidInputError, PHANTOM_TRUTH, PhantomKind, register, write_phantom_manifest
from medtemporal.phantoms.cohort import read_cohort
from medtemporal.phantoms.out import check_out, prepare_out

RELEASE_FILE = "MMXU-test.jsonl"
GENERATOR = "medtemporal phantoms mmxu"
LUNG = ("pleural effusion", "pneumothorax", "consolidation", "lung opacity", "atelectasis")
DIAPHRAGM = ("elevated hemidiaphragm", "sub-diaphragmatic air")
REGIONS: Mapping[str, tuple[str | None, tuple[str, ...]]] = {
    "right lung": ("right", LUNG),
    "left lung": ("left", LUNG),
    "right hemidiaphragm": ("right", DIAPHRAGM),
    "left hemidiaphragm": ("left", DIAPHRAGM),
    "hilar structures": (None, ("pulmonary edema", "vascular congestion")),
}
"""Region (Chest ImaGenome's names, as the release's questions use them) → (side, findings drawn there)."""
UNUSABLE = frozenset({"corrupt_image", "lateral_only"})
"""Cohort study tags whose study has no frontal image to show."""


@dataclass(frozen=True)
class Candidate:
    """A (prior, current, region) the cohort can ask about: its one changing finding and the change."""

    patient: str
    prior: dict[str, Any]
    current: dict[str, Any]
    region: str
    entity: str
    content_type: str
    change: str
    """``unchanged``, ``new``, ``increased``, ``resolved`` or ``decreased``."""
    levels: tuple[int, int]


def level(finding: Mapping[str, Any], side: str | None) -> int:
    """A finding's severity in a region of ``side`` (None: unsided), 0 when absent there."""
    if not finding["present"]:
        return 0
    if side is not None and finding["laterality"] not in (side, "bilateral"):
        return 0
    return max(1, int(finding["severity_level"]))


def change_of(prior: int, current: int) -> tuple[str, str]:
    """``(content_type, change word)`` of a level going from ``prior`` to ``current`` (not both 0).

    >>> change_of(0, 2), change_of(2, 2), change_of(3, 1)
    (('worsen', 'new'), ('no change', 'unchanged'), ('improved', 'decreased'))
    """
    if current == prior:
        return "no change", "unchanged"
    if current > prior:
        return "worsen", "new" if prior == 0 else "increased"
    return "improved", "resolved" if current == 0 else "decreased"


def candidates(cohort: Mapping[str, list[dict[str, Any]]]) -> list[Candidate]:
    """Every askable (consecutive usable pair, region) of the cohort, in patient, visit and region order."""
    out = []
    for patient, rows in cohort.items():
        usable = [r for r in rows if r.get("frontal") and not UNUSABLE & set(r.get("messy", ()))]
        for prior, current in pairwise(usable):
            for region, (side, entities) in REGIONS.items():
                levels = {e: (level(prior["findings"][e], side), level(current["findings"][e], side)) for e in entities}
                active = [e for e, lv in levels.items() if lv != (0, 0)]
                if len(active) == 1:
                    (entity,) = active
                    content_type, change = change_of(*levels[entity])
                    out.append(Candidate(patient, prior, current, region, entity, content_type, change, levels[entity]))
    return out


def balanced(pool: list[Candidate], questions: int | None) -> dict[str, tuple[list[str], int]]:
    """Region → (findings asked, items per (finding, content type) cell) of the largest balanced design.

    A region asks the findings whose every content type the cohort can fill at least ``n`` times, ``n``
    chosen to maximise the region's items (at least two findings, so that a region has six claims for
    four options). With ``questions`` the cells shrink alike in every region to stay within it.
    """
    cells = Counter((c.region, c.entity, c.content_type) for c in pool)
    design: dict[str, tuple[list[str], int]] = {}
    for region, (_, entities) in REGIONS.items():
        fill = sorted(((min(cells[(region, e, t)] for t in CONTENT_TYPES), e) for e in entities), reverse=True)
        best = max(range(2, len(fill) + 1), key=lambda j: (j * fill[j - 1][0], j))
        n = fill[best - 1][0]
        if n > 0:
            design[region] = (sorted(e for _, e in fill[:best]), n)
    total = sum(3 * len(e) * n for e, n in design.values())
    if questions is not None and total > questions:
        scale = questions / total
        design = {r: (e, int(n * scale)) for r, (e, n) in design.items() if int(n * scale) > 0}
    return design


def draft(pool: list[Candidate], seed: int, questions: int | None) -> list[dict[str, Any]]:
    """The phantom release: records (release keys) with their truth (``_truth``), in a seeded order."""
    design = balanced(pool, questions)
    by_cell: dict[tuple[str, str, str], list[Candidate]] = defaultdict(list)
    for c in pool:
        by_cell[(c.region, c.entity, c.content_type)].append(c)
    chosen: dict[tuple[str, str, str], list[Candidate]] = {}
    for region, (entities, n) in design.items():
        for entity in entities:
            for ct in CONTENT_TYPES:
                cell = by_cell[(region, entity, ct)]
                chosen[(region, entity, ct)] = random.Random(f"mmxu cell {seed} {region} {entity} {ct}").sample(cell, n)
    letters = "ABCD"
    slots: dict[tuple[str, str, str, int], int] = {}
    for ct in CONTENT_TYPES:  # every letter answers each content type equally often (within one)
        keys = [(r, e, t, k) for (r, e, t), picked in chosen.items() if t == ct for k in range(len(picked))]
        deal = [i % len(letters) for i in range(len(keys))]
        random.Random(f"mmxu letters {seed} {ct}").shuffle(deal)
        slots.update(zip(keys, deal))
    records = []
    for (region, entity, ct), picked in chosen.items():
        claims = [(e, t) for e in design[region][0] for t in CONTENT_TYPES]
        for k, truth in enumerate(picked):
            rng = random.Random(f"mmxu item {seed} {region} {entity} {ct} {k}")
            options = []
            for e, t in rng.sample([c for c in claims if c != (entity, ct)], 3):
                options.append((e, t, rng.choice(chosen[(region, e, t)]).change, False))  # as a true one words it
            options.insert(slots[(region, entity, ct, k)], (entity, ct, truth.change, True))
            records.append({
                "content_type": ct,
                "question": question_text(region, rng),
                "options": {x: option_text(e, region, REGIONS[region][0], w, rng)
                            for x, (e, _, w, _) in zip(letters, options)},
                "answer": letters[[o[3] for o in options].index(True)],
                "cur_image_path": truth.current["frontal"],
                "prior_image_path": truth.prior["frontal"],
                "_truth": {"patient_id": truth.patient, "prior_study": truth.prior["study_id"],
                           "current_study": truth.current["study_id"], "region": region, "entity": entity,
                           "change": truth.change, "prior_level": truth.levels[0], "current_level": truth.levels[1],
                           "claims": {x: {"entity": e, "content_type": t, "change": w, "true": ok}
                                      for x, (e, t, w, ok) in zip(letters, options)}},
            })
    random.Random(f"mmxu order {seed}").shuffle(records)
    return records


def write_mmxu_phantoms(cxr: str | Path, out: str | Path, *, seed: int = 0, questions: int | None = None,
                        overwrite: bool = False) -> tuple[Path, Counter[str]]:
    """Write the phantom release over the cohort in ``cxr`` to ``out``; return its path and its content types.

    Raises:
        InvalidInputError: ``cxr`` is not a CXR phantom cohort, ``out`` holds other files, or the cohort
            is too small for a balanced question set.
    """
    cxr, out = Path(cxr), Path(out)
    if questions is not None and questions < 1:
        raise InvalidInputError(f"--questions must be at least 1, not {questions}.")
    check_out(out, overwrite, GENERATOR)
    records = draft(candidates(read_cohort(cxr, images=False)), seed, questions)
    if not records:
        raise InvalidInputError(f"The cohort in {cxr} is too small for a balanced MMXU question set; write a larger "
                                "one with `medtemporal phantoms cxr --patients 100`.")
    prepare_out(out, overwrite, GENERATOR)
    with (out / RELEASE_FILE).open("w", encoding="utf-8", newline="\n") as fh, \
            (out / PHANTOM_TRUTH).open("w", encoding="utf-8", newline="\n") as truth:
        for n, record in enumerate(records, 1):
            facts = record.pop("_truth")
            fh.write(release_line({"id": n, **record}))
            truth.write(json.dumps({"id": n, "content_type": record["content_type"], "answer": record["answer"],
                                    **facts}, separators=(",", ":")) + "\n")
    write_phantom_manifest(out, GENERATOR, seed=seed, cohort=str(cxr.resolve()), questions=len(records))
    return out / RELEASE_FILE, Counter(r["content_type"] for r in records)


def _options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cxr", type=Path, required=True, metavar="DIR",
                   help="a cohort written by `medtemporal phantoms cxr` (its phantom_truth.jsonl is read)")
    p.add_argument("--questions", type=int, metavar="N",
                   help="at most N questions (default: the largest balanced set the cohort allows)")


def _write(args: argparse.Namespace) -> list[str]:
    path, types = write_mmxu_phantoms(args.cxr, args.out, seed=args.seed, questions=args.questions,
                                      overwrite=args.overwrite)
    counts = ", ".join(f"{t} {types[t]}" for t in CONTENT_TYPES)
    return [f"Wrote {sum(types.values())} MMXU questions ({counts}) to {path}",
            f"  ground truth: {path.parent / PHANTOM_TRUTH}",
            f"  build: medtemporal build mmxu --official {path} --mimic-cxr-jpg {args.cxr / 'mimic-cxr-jpg'} --out DIR"]


def _kind() -> PhantomKind:
    return PhantomKind(
        help="an MMXU-test.jsonl over a `phantoms cxr` cohort, in the release's schema, with exact truth",
        description="Write MMXU-test.jsonl (the release's keys and layout), phantom_truth.jsonl and "
        "phantom_manifest.json under OUT: questions on a region's change between a patient's prior and current "
        "phantom study, content types balanced, options that give nothing away without the images.",
        add_arguments=_options, write=_write)


register("phantom", "mmxu")(_kind())

