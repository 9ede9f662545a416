"""TemMed-Bench construction from CheXpert Plus timelines (the paper's §2.2–2.3).

1. *Instances*: every study whose impression is a target report (each sentence a
   condition-change sentence) and that has a frontal image and a prior study with
   a frontal image; the historical image is the frontal image of the most recent
   prior study (by ``patient_report_date_order``). The report is the impression as
   released (`temmed_text.normalize_report`).
2. *Split*: ``test_size`` instances drawn at random by the seed, the rest the
   knowledge corpus (the paper's split, `split_random`; a patient may be in
   both); or, with ``--split patient``, patients shuffled and taken whole into
   the test set while it stays within ``test_size`` (`split_by_patient`).
3. *Tasks* on the test instances: report generation (the report is the
   reference), VQA (`temmed_vqa`) and image-pair selection (one item per
   directed statement, distractor pairs from other patients that name the same
   pathology, only in statements of other directions; answer letters uniform).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from medtemporal.benchmarks.temmed.text import (
    Patterns,
    Statement,
    find_statements,
    is_target_report,
    normalize_report,
    pathology_patterns,
    sentences,
)
from medtemporal.benchmarks.temmed.vqa import Draft, balance_key, sentence_statement
from medtemporal.family import ImageRef, InvalidInputError, Item, Timeline
from medtemporal.sources.chexpert_plus import resolve_image

BENCHMARK = "temmed"
VERSION = "4"
TASKS = ("vqa", "report", "image_pair")
LETTERS = ("A", "B", "C")
HISTORICAL_LABEL = "Last visit image:"
CURRENT_LABEL = "Current visit image:"
REPORT_QUESTION = "Write the impression of the current visit's report, describing the changes since the last visit."


@dataclass(frozen=True)
class Instance:
    """A historical image, a current image and the report of condition changes between them."""

    patient_id: str
    historical: str
    """Frontal image of the prior study, relative to the image root."""
    current: str
    """Frontal image of the target study."""
    report: str
    """Normalised impression (every sentence a change sentence)."""
    study: str = ""
    prior_study: str = ""


@dataclass
class Collected:
    """Instances with the counts of studies left out, by reason."""

    instances: list[Instance] = field(default_factory=list)
    exclusions: Counter[str] = field(default_factory=Counter)


def collect_instances(timelines: Iterable[Timeline], image_root: Path) -> Collected:
    """Every TemMed instance of ``timelines`` in patient then study order."""
    out = Collected()
    for timeline in timelines:
        studies = timeline.studies
        for i, study in enumerate(studies):
            impression = study.report.get("impression", "")
            if not impression.strip():
                out.exclusions["no_impression"] += 1
                continue
            if not is_target_report(impression):
                out.exclusions["not_all_change_sentences"] += 1
                continue
            if i == 0:
                out.exclusions["no_prior_study"] += 1
                continue
            prior = studies[i - 1]
            if study.frontal is None or prior.frontal is None:
                out.exclusions["no_frontal_image"] += 1
                continue
            try:
                current, historical = resolve_image(image_root, study.frontal), resolve_image(image_root, prior.frontal)
            except InvalidInputError:
                out.exclusions["image_missing"] += 1
                continue
            out.instances.append(Instance(timeline.patient_id, historical, current, normalize_report(impression),
                                          f"{timeline.patient_id}/{study.study_id}",
                                          f"{timeline.patient_id}/{prior.study_id}"))
    return out


def split_by_patient(instances: Sequence[Instance], test_size: int, rng: random.Random) -> tuple[list[int], list[int]]:
    """Test and corpus instance indices (each in input order) with no patient in both.

    Patients are shuffled and added whole to the test set when they fit within ``test_size``.
    """
    if test_size < 1 or test_size >= len(instances):
        raise InvalidInputError(
            f"--test-size {test_size} does not leave a corpus: the data has {len(instances)} instances; "
            f"use 1 to {max(1, len(instances) - 1)}."
        )
    by_patient: dict[str, list[int]] = defaultdict(list)
    for i, inst in enumerate(instances):
        by_patient[inst.patient_id].append(i)
    patients = sorted(by_patient)
    rng.shuffle(patients)
    test: list[int] = []
    for patient in patients:
        if len(test) + len(by_patient[patient]) <= test_size:
            test.extend(by_patient[patient])
        if len(test) == test_size:
            break
    chosen = set(test)
    return sorted(test), [i for i in range(len(instances)) if i not in chosen]


def split_random(instances: Sequence[Instance], test_size: int, rng: random.Random) -> tuple[list[int], list[int]]:
    """Test and corpus instance indices (each in input order): ``test_size`` instances drawn at random, as the
    paper does (§2.3: "We randomly selected 1,000 instances as the test set and used the remaining instances
    as the knowledge corpus"); a patient may have instances in both."""
    if test_size < 1 or test_size >= len(instances):
        raise InvalidInputError(
            f"--test-size {test_size} does not leave a corpus: the data has {len(instances)} instances; "
            f"use 1 to {max(1, len(instances) - 1)}."
        )
    chosen = set(rng.sample(range(len(instances)), test_size))
    return sorted(chosen), [i for i in range(len(instances)) if i not in chosen]


def patient_overlap(test: Sequence[Instance], corpus: Sequence[Instance]) -> dict[str, int]:
    """Patients in both sets, and how many test instances belong to them."""
    shared = {i.patient_id for i in test} & {i.patient_id for i in corpus}
    return {
        "test_patients": len({i.patient_id for i in test}),
        "corpus_patients": len({i.patient_id for i in corpus}),
        "overlap_patients": len(shared),
        "overlap_test_instances": sum(i.patient_id in shared for i in test),
    }


def pair_images(inst: Instance, option: str | None = None) -> list[ImageRef]:
    """The historical then current image of ``inst``, captioned as the release does."""
    prefix = f"{option}:\n" if option else ""
    return [
        ImageRef(path=inst.historical, visit=1, role="historical", label=prefix + HISTORICAL_LABEL, option=option,
                 view="frontal"),
        ImageRef(path=inst.current, visit=2, role="current", label=CURRENT_LABEL, option=option, view="frontal"),
    ]


def base_meta(inst: Instance, index: int) -> dict[str, object]:
    """Meta every item of test instance ``index`` carries."""
    return {"patient_id": inst.patient_id, "instance": index, "study": inst.study, "prior_study": inst.prior_study}


def report_items(test: Sequence[Instance], extra: Mapping[int, dict[str, Any]] | None = None) -> list[Item]:
    """One report-generation item per test instance; the report is answer and reference."""
    extra = extra or {}
    return [
        Item.create(benchmark=BENCHMARK, task="report", subtype="report", images=pair_images(inst),
                    question=REPORT_QUESTION, answer_type="open", answer=inst.report, reference=inst.report,
                    meta={**base_meta(inst, i), **extra.get(i, {})})
        for i, inst in enumerate(test)
    ]


def vqa_candidates(
    test: Sequence[Instance], patterns: Patterns, exclusions: Counter[str] | None = None
) -> list[tuple[int, str, Statement]]:
    """(instance, sentence, statement) for every report sentence: its first directed statement, else the
    sentence about its first change keyword (`vqa.sentence_statement`); a sentence with neither (a
    negated directional word only) is counted in ``exclusions``."""
    out = []
    for i, inst in enumerate(test):
        statements = [s for s in find_statements(inst.report, patterns) if s.direction]
        for index, sentence in enumerate(sentences(inst.report)):
            first = next((s for s in statements if s.sentence == index), None) or sentence_statement(sentence, index)
            if first is not None:
                out.append((i, sentence, first))
            elif exclusions is not None:
                exclusions["vqa_sentence_without_direction"] += 1
    return out


def vqa_items(test: Sequence[Instance], drafts: Sequence[Draft], questions: Sequence[tuple[str, str]],
              extra: Mapping[int, dict[str, Any]] | None = None) -> list[Item]:
    """VQA items from drafts (answers fixed) and their written questions ``(question, source)``."""
    extra = extra or {}
    items = []
    for draft, (question, source) in zip(drafts, questions, strict=True):
        inst = test[draft.instance]
        meta = {**base_meta(inst, draft.instance), "sentence": draft.sentence, "statement": draft.statement.text,
                "direction": draft.statement.direction, "asked": draft.asked,
                "finding": balance_key(draft.statement), "question_source": source,
                **extra.get(draft.instance, {})}
        items.append(Item.create(benchmark=BENCHMARK, task="vqa", subtype=f"vqa_{draft.asked}",
                                 images=pair_images(inst), question=question, answer_type="yesno",
                                 answer=draft.answer, meta=meta))
    return items


@dataclass(frozen=True)
class PairDraft:
    """An image-pair question: the target statement and the instances shown as A, B and C."""

    statement: Statement
    target: int
    options: tuple[int, int, int]
    answer: str


def _safe_directions(report: str, patterns: Patterns) -> dict[str, set[str]]:
    """Pathology → directions the report states about it, for pathologies every mention of which
    sits in a directed statement (others could match any statement, so they are left out)."""
    statements = find_statements(report, patterns)
    parts = sentences(report)
    out: dict[str, set[str]] = {}
    for name, pattern in patterns.items():
        about = [s for s in statements if s.pathology == name]
        mentioned = {k for k, sent in enumerate(parts) if pattern.search(sent)}
        if not about or any(s.direction is None for s in about) or mentioned - {s.sentence for s in about}:
            continue
        out[name] = {s.direction for s in about if s.direction}
    return out


def pair_drafts(
    test: Sequence[Instance], patterns: Patterns, n: int | None, rng: random.Random
) -> tuple[list[PairDraft], Counter[str]]:
    """Image-pair questions: every directed statement with two valid distractor pairs (then ``n`` of
    them when given), distractors drawn by the seed, correct letters spread uniformly within each
    direction (the subtype), so no subtype has an answer prior."""
    safe = [_safe_directions(inst.report, patterns) for inst in test]
    excluded: Counter[str] = Counter()
    candidates: list[tuple[Statement, int, list[int]]] = []
    for i, inst in enumerate(test):
        seen: set[tuple[str, str]] = set()
        for st in find_statements(inst.report, patterns):
            if st.direction is None:
                excluded["statement_without_direction"] += 1
                continue
            if (st.pathology, st.text) in seen:
                continue
            seen.add((st.pathology, st.text))
            pool = [j for j, other in enumerate(test) if other.patient_id != inst.patient_id
                    and st.pathology in safe[j] and st.direction not in safe[j][st.pathology]]
            if len(pool) < 2:
                excluded["fewer_than_two_distractors"] += 1
                continue
            candidates.append((st, i, pool))
    if n is not None and n < len(candidates):
        candidates = [candidates[k] for k in sorted(rng.sample(range(len(candidates)), n))]
    letters = [""] * len(candidates)
    for direction in sorted({st.direction or "" for st, _, _ in candidates}):  # uniform within each subtype
        group = [k for k, (st, _, _) in enumerate(candidates) if (st.direction or "") == direction]
        dealt = [LETTERS[k % 3] for k in range(len(group))]
        rng.shuffle(dealt)
        for k, letter in zip(group, dealt):
            letters[k] = letter
    drafts = []
    for (st, i, pool), answer in zip(candidates, letters):
        a, b = rng.sample(pool, 2)
        slots = [a, b]
        slots.insert(LETTERS.index(answer), i)
        drafts.append(PairDraft(st, i, (slots[0], slots[1], slots[2]), answer))
    return drafts, excluded


def pair_items(
    test: Sequence[Instance], drafts: Sequence[PairDraft], extra: Mapping[int, dict[str, Any]] | None = None
) -> list[Item]:
    """Image-pair items: six images (A, B, C pairs), the statement as the question."""
    items = []
    for k, d in enumerate(drafts):
        images = [ref for letter, j in zip(LETTERS, d.options) for ref in pair_images(test[j], letter)]
        meta = {**base_meta(test[d.target], d.target), "pathology": d.statement.pathology,
                "direction": d.statement.direction, "keyword": d.statement.keyword,
                "options": dict(zip(LETTERS, d.options)), **(extra or {}).get(k, {})}
        items.append(Item.create(benchmark=BENCHMARK, task="image_pair", subtype=f"pair_{d.statement.direction}",
                                 images=images, question=d.statement.text,
                                 options={letter: f"image pair {letter}" for letter in LETTERS},
                                 answer_type="choice", answer=d.answer, meta=meta))
    return items


def default_patterns(keywords: str | None) -> Patterns:
    """Pathology patterns from a comma-separated ``--pathology-keywords`` value (None: the defaults)."""
    if keywords is None:
        return pathology_patterns()
    patterns = pathology_patterns(keywords.split(","))
    if not patterns:
        raise InvalidInputError("--pathology-keywords is empty; give comma-separated words such as effusion,edema.")
    return patterns
