"""CT-RATE timelines → 3D-RAD items for the six tasks (the paper's §3 and A.14; FACTS §1.1–1.2).

- Task 4: each patient's first scan ``a``, raw reconstruction ``_1``; one Yes/No question
  per label (18), answered from the labels.
- Tasks 5 and 6: each patient with two or more scans, at its last scan (letter b–h, the
  subtask); one question per temporal label (17, Medical material dropped) in a shuffled
  order, answered by `labels.category` from the earlier scans' labels and the current one.
  Task 6 adds the history to the question; Tasks 5 and 6 line up item by item. Patients whose
  last scan is past ``h`` are counted in ``temporal_scan_after_h``.
- Tasks 1–3: open questions from each scan's report by `open_questions.open_questions` (or a model's,
  `llm`), asked once per reconstruction on disk (as the release does with ``_1`` and ``_2``).

Correct answers of closed tasks come from labels only. The same timelines and seed give the same items.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Callable, Sequence


from medtemporal._gc import paused_gc
from medtemporal.benchmarks.rad3d.labels import (
    BENCHMARK,
    EXISTENCE_OPTIONS,
    LETTERS_BH,
    TEMPORAL_LABELS,
    TEMPORAL_OPTIONS,
    category,
    temporal_subtype,
)
from medtemporal.benchmarks.rad3d.open_questions import OpenQA, open_questions
from medtemporal.benchmarks.rad3d.text import existence_question, longitudinal_question, static_question
from medtemporal.schema import ImageRef, Item, Study, Timeline
from medtemporal.sources.ct_rate import LABELS
from medtemporal.progress import progress_bar


def _letter(study: Study) -> str:
    return study.study_id.rsplit("_", 1)[1]


def _raw(study: Study) -> ImageRef:
    return study.images[0]


def _labels(study: Study) -> dict[str, int]:
    return {f.entity: int(f.present) for f in study.findings}


def _meta(t: Timeline, study: Study, **extra: object) -> dict:
    return {"patient_id": t.patient_id, "scan": study.study_id, "letter": _letter(study), **extra}


def existence_items(t: Timeline, seed: int) -> list[Item]:
    """Task 4 for the first scan (``a``) of ``t``."""
    first = t.studies[0]
    if _letter(first) != "a":
        return []
    rng = random.Random(f"{seed}:{t.patient_id}:task4")
    labels = _labels(first)
    image = ImageRef(path=_raw(first).path, role="volume", label="CT volume")
    return [Item.create(benchmark=BENCHMARK, task="task4", subtype=label, images=[image],
                        question=existence_question(label, rng), options=EXISTENCE_OPTIONS, answer_type="choice",
                        answer="A" if labels[label] else "B", meta=_meta(t, first, label=label))
            for label in LABELS]


def temporal_items(t: Timeline, seed: int) -> tuple[list[Item], list[Item]]:
    """Tasks 5 and 6 at the last scan of ``t`` (empty when it has one scan or its last is past h)."""
    current = t.studies[-1]
    letter = _letter(current)
    if len(t.studies) < 2 or letter not in LETTERS_BH:
        return [], []
    rng = random.Random(f"{seed}:{t.patient_id}:temporal")
    order = list(TEMPORAL_LABELS)
    rng.shuffle(order)
    now = _labels(current)
    earlier = [_labels(s) for s in t.studies[:-1]]
    image = ImageRef(path=_raw(current).path, role="volume", label="Current CT volume")
    static, longitudinal = [], []
    for label in order:
        history = [labels[label] for labels in earlier]
        answer = category(history, now[label])
        meta = _meta(t, current, label=label, history=history)
        common = dict(benchmark=BENCHMARK, images=[image], options=TEMPORAL_OPTIONS, answer_type="choice",
                      answer=answer, meta=meta)
        static.append(Item.create(task="task5", subtype=temporal_subtype("task5", letter),
                                  question=static_question(label, rng), **common))
        longitudinal.append(Item.create(task="task6", subtype=temporal_subtype("task6", letter),
                                        question=longitudinal_question(label, history, rng), **common))
    return static, longitudinal


QuestionSource = Callable[[Study], Sequence[OpenQA]]
"""Open questions of one scan: `rule_questions` by default, or a model's (`llm`)."""


def rule_questions(study: Study) -> list[OpenQA]:
    """`open_questions.open_questions` over the scan's findings and impression."""
    return open_questions(study.report.get("findings", ""), study.report.get("impression", ""))


def open_items(t: Timeline, questions: QuestionSource = rule_questions) -> list[Item]:
    """Tasks 1–3 from each scan's report, once per reconstruction."""
    items = []
    for study in t.studies:
        images = [ImageRef(path=ref.path, role="volume", label="CT volume") for ref in study.images]
        for qa in questions(study):
            for image in images:
                items.append(Item.create(benchmark=BENCHMARK, task=qa.task, subtype=qa.subtask, images=[image],
                                         question=qa.question, answer_type="open", answer=qa.answer,
                                         reference=qa.answer, meta=_meta(t, study)))
    return items


def build_items(timelines: Sequence[Timeline], tasks: Sequence[str], seed: int,
                questions: QuestionSource = rule_questions) -> tuple[list[Item], dict[str, int]]:
    """Items of ``tasks`` in task order (1–6), and the counts of what could not be asked."""
    by_task: dict[str, list[Item]] = {t: [] for t in ("task1", "task2", "task3", "task4", "task5", "task6")}
    skipped: Counter[str] = Counter()
    with paused_gc():  # tens of thousands of records
        for t in progress_bar(timelines, desc="3d-rad", unit="patient", leave=False):
            if "task4" in tasks:
                got = existence_items(t, seed)
                skipped["existence_first_scan_not_a"] += not got
                by_task["task4"] += got
            if "task5" in tasks or "task6" in tasks:
                static, longitudinal = temporal_items(t, seed)
                if not static:
                    skipped["temporal_single_scan" if len(t.studies) < 2 else "temporal_scan_after_h"] += 1
                by_task["task5"] += static
                by_task["task6"] += longitudinal
            if {"task1", "task2", "task3"} & set(tasks):
                for item in open_items(t, questions):
                    by_task[item.task].append(item)
    items = [i for task in by_task if task in tasks for i in by_task[task]]
    return items, {k: v for k, v in sorted(skipped.items()) if v}
