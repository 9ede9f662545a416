"""``medtemporal build medical-diff-vqa --diff-vqa DIR --mimic-cxr-jpg ROOT [--split release|ekaid] --out DIR``: a
test set as items.

One item per kept question of the test set ``--split`` names (`release.SPLITS`: the release's ``split``
column, default, or EKAID's last 10% of rows in file order), in file order; the manifest records which
(``config.split`` and ``config.test_set``) and every table names it. Tasks follow the release's evaluation (EKAID
``evaluate_score.py``): ``closed`` (answer yes or no: a ``yesno`` item, answer ``Yes``/``No``), ``open``
(the other non-difference questions: free text) and ``difference`` (scored on its own, by the text metrics
only, as ``acc`` skips "what has changed" questions). The subtype is the ``question_type``, so each type's
group covers its closed and open questions. The released answer is every item's ``reference``.

Both images go to the model, the reference study's first, then the main study's (EKAID's model takes the
pair for every question), captioned as TemMed's two visits with the release's names for them
(``Last visit image (reference image):``, ``Current visit image (main image):``). A non-difference row
whose reference is the later study keeps that order but says so in its captions.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from medtemporal.family import ImageRef, InvalidInputError, Item, Manifest, licence_of, sha256_file
from medtemporal.benchmarks.medical_diff_vqa.release import (
    MIMIC_ALL_FILE,
    QUESTIONS_FILE,
    SPLITS,
    TYPES,
    Question,
    read_questions,
)
from medtemporal.sources.jpg_root import add_jpg_arguments, jpg_root

BENCHMARK = "medical-diff-vqa"
VERSION = "1.0"
TASKS = ("closed", "open", "difference")
CAPTIONS = {False: ("Last visit image (reference image):", "Current visit image (main image):"),
            True: ("Reference image (a later visit):", "Main image (an earlier visit):")}
"""Captions of (reference, main) by whether the reference study is the later one."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``medtemporal build medical-diff-vqa``."""
    src = p.add_argument_group("data")
    src.add_argument("--diff-vqa", type=Path, required=True, metavar="DIR",
                     help=f"folder of Medical-Diff-VQA 1.0.1 ({QUESTIONS_FILE} and {MIMIC_ALL_FILE}), or a phantom "
                     "of it (`medtemporal phantoms medical-diff-vqa`)")
    add_jpg_arguments(src, without="and allow leaving --mimic-cxr-jpg out")
    src.add_argument("--split", choices=tuple(SPLITS), default="release",
                     help="the test set: release, the rows whose split column is 'test' (default); ekaid, the last "
                     "10%% of rows in file order, as EKAID's dataset_preparation.py cuts them (the paper's numbers)")


def task_of(q: Question) -> str:
    """``difference``, ``closed`` (yes/no) or ``open``."""
    return "difference" if q.question_type == "difference" else "closed" if q.closed else "open"


def question_item(q: Question) -> Item:
    """The item of one kept question (module doc)."""
    later = q.reference_after_main
    ref_caption, main_caption = CAPTIONS[later]
    images = [ImageRef(path=q.reference.path, visit=2 if later else 1, role="reference", label=ref_caption,
                       timestamp=q.reference.date, view=q.reference.view),
              ImageRef(path=q.main.path, visit=1 if later else 2, role="current", label=main_caption,
                       timestamp=q.main.date, view=q.main.view)]
    task = task_of(q)
    answer = q.answer.strip().capitalize() if task == "closed" else q.answer
    return Item.create(
        benchmark=BENCHMARK, task=task, subtype=q.question_type, images=images, question=q.question,
        answer_type="yesno" if task == "closed" else "open", answer=answer, reference=q.answer,
        meta={"patient_id": f"p{q.subject_id}", "subject_id": q.subject_id, "study_id": q.study_id,
              "ref_id": q.ref_id, "question_type": q.question_type, "row": q.row, "split": q.split,
              "reference_after_main": later},
    )


def build(args: argparse.Namespace) -> tuple[list[Item], Manifest]:
    """Read the release (or its phantom) and make one item per kept question of the test set ``--split``."""
    folder: Path = args.diff_vqa
    if not folder.is_dir():
        raise InvalidInputError(f"--diff-vqa {folder} is not a folder; pass the folder of Medical-Diff-VQA 1.0.1.")
    root = jpg_root(args.mimic_cxr_jpg, verify_images=args.verify_images)
    questions, counts = read_questions(folder, args.split, image_root=root, verify_images=args.verify_images)
    items = [question_item(q) for q in questions]
    files = [folder / QUESTIONS_FILE, folder / MIMIC_ALL_FILE]
    config = {
        "source": "medical-diff-vqa 1.0.1", "split": args.split, "test_set": SPLITS[args.split], "rows": counts.rows,
        "rows_per_split": counts.splits,
        "verify_images": args.verify_images,
        "questions": {t: dict(sorted(Counter(task_of(q) for q in questions if q.question_type == t).items()))
                      for t in TYPES if any(q.question_type == t for q in questions)},
        "image_pairs": len({(q.study_id, q.ref_id) for q in questions}),
        "patients": len({q.subject_id for q in questions}),
        "reference_after_main_kept": dict(sorted(counts.reference_after_main_kept.items())),
    }
    if counts.excluded.get("difference_reference_after_main"):
        config["release_check"] = ("difference rows with the reference study after the main one were refused: "
                                   "this looks like release 1.0.0; use 1.0.1")
    licence = licence_of(*files, *([root] if root is not None else []))
    manifest = Manifest(benchmark=BENCHMARK, version=VERSION, seed=args.seed, licence=licence,
                        image_root=str(root) if root is not None else None, config=config,
                        sources={p.name: sha256_file(p) for p in files},
                        exclusions=dict(sorted(counts.excluded.items())))
    return items, manifest
