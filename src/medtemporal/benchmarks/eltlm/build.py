"""ELTLM-style items built from MIMIC-CXR (or phantoms) by rule (paper appendix C, §3.1–3.2).

Selection (appendix C): a patient's studies in time order (`read_timelines`,
as MI-CXR reads them: frontal view, StudyDate/StudyTime order) form chains in
which every report has at least `MIN_REPORT_WORDS` words in FINDINGS +
IMPRESSION and every study after the first compares with its prior
(`COMPARATIVE` wording: "compared to prior", "interval", "new", "worsened",
"improved" ...). Each chain is cut into consecutive, non-overlapping
sequences of 2–5 studies, each length drawn with the seed (§3.1 range).

Questions, one of each type per sequence, from templates:

* perception (released type ``g``): the release's near-fixed wording
  ("What are the differences between the results of the N chest X-ray
  examinations?"); the reference lists, per interval, the report sentences of
  the later study that state a change (`CHANGE`), or "no significant interval
  change" (answers "derived from explicit comparative descriptions in the
  reports", appendix C).
* reasoning (type ``t``): the trend of one abnormality from the first to the
  last study, decided by rule from the MIMIC-Ext-CXR-QBA findings (presence and
  severity rank, `SEVERITY_RANK`): the entity whose level changed most (ties
  by name); "Worsened", "Improved" or "Stable", with the level at each exam.

Nothing here asks a model for a fact; the subtype is the sequence length.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

import numpy as np

from medtemporal.benchmarks.eltlm.release import BENCHMARK, subtype_of
from medtemporal.schema import ImageRef, Item, Study, Timeline
from medtemporal.sources.mimic_qba import SEVERITY_RANK

MIN_REPORT_WORDS = 10
"""Appendix C: reports with fewer than 10 words are excluded."""
LENGTHS = (2, 3, 4, 5)
"""Studies per sequence (§3.1, FACTS §3.1: 2–5 after deduplication)."""
COMPARATIVE = re.compile(
    r"\b(compared|comparison|prior|previous(ly)?|interval|new|unchanged|stable|improv\w*|worse\w*|increas\w*|"
    r"decreas\w*|resolv\w*|resolution|no longer|persist\w*)\b", re.IGNORECASE)
"""Wording by which a report compares with its prior (appendix C's examples and their kin)."""
CHANGE = re.compile(
    r"\b(new|interval|improv\w*|worse\w*|increas\w*|decreas\w*|resolv\w*|resolution|no longer|enlarg\w*|"
    r"removed|removal|smaller|larger)\b", re.IGNORECASE)
"""Wording of a change (as opposed to "unchanged", "stable")."""
NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}
NOT_ABNORMAL = frozenset({"bony structures intact", "normal cardiac silhouette"})
PERCEPTION_QUESTION = "What are the differences between the results of the {n} chest X-ray examinations?"
REASONING_QUESTION = (
    "Comparing the first and the last of these {n} chest X-ray examinations, has the {entity} worsened, improved "
    "or remained stable? Describe how it changed from examination to examination."
)


def report_text(study: Study) -> str:
    """FINDINGS and IMPRESSION of a study's report, joined."""
    return " ".join(study.report.get(k, "") for k in ("findings", "impression")).strip()


def sentences(text: str) -> list[str]:
    """Sentences of ``text`` split at full stops (report sentences end with one)."""
    return [s.strip() + "." for s in re.split(r"(?<=[a-z0-9)])\.\s+", text.rstrip(". ")) if s.strip()]


def chains(timeline: Timeline, excluded: Counter[str]) -> list[list[Study]]:
    """Maximal runs of consecutive usable studies whose reports (after the first) compare with the prior."""
    runs: list[list[Study]] = []
    current: list[Study] = []
    for study in timeline.studies:
        text = report_text(study)
        if len(text.split()) < MIN_REPORT_WORDS:
            excluded["study_report_too_short"] += 1
            runs.append(current)
            current = []
        elif current and not COMPARATIVE.search(text):
            excluded["study_no_comparison"] += 1
            runs.append(current)
            current = [study]
        else:
            current.append(study)
    runs.append(current)
    return [r for r in runs if len(r) >= 2]


def split(chain: Sequence[Study], rng: np.random.Generator) -> list[list[Study]]:
    """Consecutive non-overlapping sequences of `LENGTHS` studies covering ``chain`` as far as possible."""
    out, start = [], 0
    while len(chain) - start >= 2:
        room = [n for n in LENGTHS if n <= len(chain) - start and len(chain) - start - n != 1]
        n = int(rng.choice(room)) if room else len(chain) - start
        out.append(list(chain[start:start + n]))
        start += n
    return out


def level(study: Study, entity: str) -> int:
    """0 when ``entity`` is absent (or not annotated), else 1 + the rank of its severity word (1 when none)."""
    f = study.finding(entity)
    if f is None or not f.present:
        return 0
    return 1 + SEVERITY_RANK.get(f.severity or "", 0)


def describe_level(study: Study, entity: str) -> str:
    """``absent`` or the finding as written (severity, laterality, entity)."""
    f = study.finding(entity)
    if f is None or not f.present:
        return "absent"
    side = f.laterality if f.laterality not in (None, "unspecified") else None
    return " ".join(w for w in (f.severity, side) if w) or "present"


def perception_reference(seq: Sequence[Study]) -> str:
    """Per interval, the later report's change sentences (or no change)."""
    parts = []
    for k in range(1, len(seq)):
        said = [s for s in sentences(report_text(seq[k])) if CHANGE.search(s)]
        said = list(dict.fromkeys(said))
        parts.append(f"Exam {k} to exam {k + 1}: " + (" ".join(said) if said else "no significant interval change."))
    return " ".join(parts)


def reasoning_item(seq: Sequence[Study]) -> tuple[str, str, str] | None:
    """(entity, question, reference) for the abnormality whose level changed most, or None if none is present."""
    entities = sorted({f.entity for s in seq for f in s.findings if f.present and f.entity not in NOT_ABNORMAL})
    if not entities:
        return None
    entity = max(entities, key=lambda e: (abs(level(seq[-1], e) - level(seq[0], e)), [-ord(c) for c in e]))
    first, last = level(seq[0], entity), level(seq[-1], entity)
    trend = "Worsened" if last > first else "Improved" if last < first else "Stable"
    states = [f"{describe_level(s, entity)} at exam {k}" for k, s in enumerate(seq, 1)]
    course = ", ".join(states[:-1]) + f" and {states[-1]}"
    question = REASONING_QUESTION.format(n=NUMBER_WORDS[len(seq)], entity=entity)
    return entity, question, f"{trend}. The {entity} was {course}."


def build_items(timelines: Sequence[Timeline], seed: int) -> tuple[list[Item], Counter[str]]:
    """Perception and reasoning items of every sequence, in patient then time order.

    Args:
        timelines: Patients' studies in time order (with reports and QBA findings).
        seed: Seeds the sequence lengths (one stream per patient, so a patient's items do not depend on others).
    """
    excluded: Counter[str] = Counter()
    items: list[Item] = []
    for timeline in sorted(timelines, key=lambda t: t.patient_id):
        rng = np.random.default_rng([seed, int(timeline.patient_id.lstrip("p"))])
        for chain in chains(timeline, excluded):
            for seq in split(chain, rng):
                refs = [ImageRef(path=str(s.frontal), visit=k, label=f"Image {k}", view=None,
                                 timestamp=s.timestamp) for k, s in enumerate(seq, 1)]
                ids = [s.study_id for s in seq]
                meta = {"patient_id": timeline.patient_id, "study_ids": ids, "order": "date",
                        "date_order_differs": ids != sorted(ids, key=lambda s: int(s.lstrip("s")))}
                common = dict(benchmark=BENCHMARK, subtype=subtype_of(len(seq)), images=refs, answer_type="open")
                reference = perception_reference(seq)
                items.append(Item.create(task="perception", question=PERCEPTION_QUESTION.format(
                    n=NUMBER_WORDS[len(seq)]), answer=reference, reference=reference, meta={**meta, "type": "g"},
                    **common))
                made = reasoning_item(seq)
                if made is None:
                    excluded["sequence_no_abnormality"] += 1
                    continue
                entity, question, reference = made
                items.append(Item.create(task="reasoning", question=question, answer=reference, reference=reference,
                                         meta={**meta, "type": "t", "entity": entity}, **common))
    return items, excluded
