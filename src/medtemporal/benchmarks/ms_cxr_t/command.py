"""``medtemporal build ms-cxr-t --ms-cxr-t DIR --mimic-cxr-jpg ROOT --out DIR``: the released files as items.

Task ``progression`` (the image task): one three-way choice per labelled (image pair, finding), subtype
the finding (``consolidation`` … ``pneumothorax``); the prior image first, then the current one, captioned
as TemMed's two visits are, with the CheXinstruct prompt's words for them (reference, new). The options
``improving``, ``stable`` and ``worsening`` are shuffled per item with the seed (CheXinstruct shuffles
them too, ``templates.py`` L2984–2986), lettered A–C.

Task ``sentence_similarity`` (for text models, no image): paraphrase or contradiction, a two-way choice,
subtype the file's ``subset_name``.

With ``--no-verify-images`` the images are not checked (and ``--mimic-cxr-jpg`` may be left out: the items
then name their paths only and a run needs ``--image-root``).
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from pathlib import Path

from medtemporal.family import ImageRef, InvalidInputError, Item, Manifest, licence_of, sha256_file
from medtemporal.benchmarks.ms_cxr_t.release import (
    CATEGORIES,
    IMAGE_FILE,
    PROGRESSIONS,
    SENTENCE_FILE,
    Label,
    SentencePair,
    read_labels,
    read_sentence_pairs,
)
from medtemporal.sources.jpg_root import add_jpg_arguments, jpg_root, keep_with_images

BENCHMARK = "ms-cxr-t"
VERSION = "1.1"
"""1.1: sentence items keep both sentences in ``meta`` (the text-embedding protocol embeds each)."""
TASKS = ("progression", "sentence_similarity")
LETTERS = "ABC"
PRIOR_LABEL = "Last visit image (reference image):"
CURRENT_LABEL = "Current visit image (new image):"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``medtemporal build ms-cxr-t``."""
    src = p.add_argument_group("data")
    src.add_argument("--ms-cxr-t", type=Path, required=True, metavar="DIR",
                     help=f"folder of the PhysioNet ms-cxr-t 1.0.0 release ({IMAGE_FILE}, {SENTENCE_FILE}), "
                     "or a phantom of it (`medtemporal phantoms ms-cxr-t`)")
    add_jpg_arguments(src, without="and allow leaving --mimic-cxr-jpg out")
    src.add_argument("--tasks", metavar="LIST",
                     help=f"tasks to build, comma-separated from {', '.join(TASKS)} (default: those whose file "
                     "is in the folder)")


def _tasks(value: str | None, folder: Path) -> tuple[str, ...]:
    if value is None:
        present = tuple(t for t, f in zip(TASKS, (IMAGE_FILE, SENTENCE_FILE)) if (folder / f).is_file())
        if not present:
            raise InvalidInputError(f"{folder} holds neither {IMAGE_FILE} nor {SENTENCE_FILE}; pass the folder of "
                                    "the ms-cxr-t release.")
        return present
    tasks = tuple(t.strip() for t in value.split(",") if t.strip())
    if not tasks or any(t not in TASKS for t in tasks):
        raise InvalidInputError(f"--tasks {value!r} names unknown tasks; use a comma-separated subset of "
                                f"{', '.join(TASKS)}.")
    return tasks


def shuffled(choices: tuple[str, ...], rng: random.Random) -> dict[str, str]:
    """``choices`` in a seeded random order, lettered A, B, C …."""
    order = rng.sample(list(choices), len(choices))
    return {LETTERS[k]: text for k, text in enumerate(order)}


def _letter(options: dict[str, str], text: str) -> str:
    return next(k for k, v in options.items() if v == text)


def progression_item(label: Label, seed: int) -> Item:
    """The three-way choice of one label (module doc)."""
    options = shuffled(PROGRESSIONS, random.Random(f"{seed}:{label.row}:{label.finding}"))
    return Item.create(
        benchmark=BENCHMARK, task="progression", subtype=label.finding,
        images=[ImageRef(path=label.prior, visit=1, role="historical", label=PRIOR_LABEL),
                ImageRef(path=label.current, visit=2, role="current", label=CURRENT_LABEL)],
        question=f"Please identify the progression of {label.finding.replace('_', ' ')}:",
        options=options, answer_type="choice", answer=_letter(options, label.progression),
        meta={"patient_id": f"p{label.subject_id}", "subject_id": label.subject_id, "study_id": label.study_id,
              "previous_study_id": label.previous_study_id, "row": label.row, "finding": label.finding,
              "progression": label.progression, "label_quality": label.label_quality},
    )


def sentence_item(pair: SentencePair, seed: int) -> Item:
    """The two-way choice of one sentence pair (no image)."""
    options = shuffled(CATEGORIES, random.Random(f"{seed}:sentences:{pair.row}"))
    return Item.create(
        benchmark=BENCHMARK, task="sentence_similarity", subtype=pair.subset, images=[],
        question=f"Sentence 1: {pair.sentence_1}; Sentence 2: {pair.sentence_2}",
        options=options, answer_type="choice", answer=_letter(options, pair.category),
        meta={"row": pair.row, "subset": pair.subset, "category": pair.category, "sentence_1": pair.sentence_1,
              "sentence_2": pair.sentence_2},
    )


def build(args: argparse.Namespace) -> tuple[list[Item], Manifest]:
    """Read the released files named by the options and make the items (module doc)."""
    folder: Path = args.ms_cxr_t
    if not folder.is_dir():
        raise InvalidInputError(f"--ms-cxr-t {folder} is not a folder; pass the folder of the ms-cxr-t release.")
    tasks = _tasks(args.tasks, folder)
    root = jpg_root(args.mimic_cxr_jpg, verify_images=args.verify_images,
                    needed_for="the images of the progression task" if "progression" in tasks else None)
    items: list[Item] = []
    exclusions: Counter[str] = Counter()
    config: dict[str, object] = {"source": "ms-cxr-t 1.0.0", "tasks": list(tasks), "verify_images": args.verify_images,
                                 "options": "improving/stable/worsening shuffled per item with the seed, A-C"}
    sources = {}
    if "progression" in tasks:
        labels, counts = read_labels(folder / IMAGE_FILE)
        exclusions.update({k: v for k, v in counts.items() if k in ("row_without_labels",
                                                                   "ids_disagree_with_dicom_path")})
        config["label_notes"] = {k: v for k, v in sorted(counts.items()) if k.startswith("label_quality")}
        if args.verify_images and root is not None:
            labels = keep_with_images(labels, lambda lab: (lab.prior, lab.current), root, exclusions)
        items += [progression_item(lab, args.seed) for lab in labels]
        config["labels"] = {f: dict(sorted(Counter(lab.progression for lab in labels if lab.finding == f).items()))
                            for f in dict.fromkeys(lab.finding for lab in labels)}
        config["label_quality"] = dict(sorted(Counter(lab.label_quality or "missing" for lab in labels).items()))
        config["image_pairs"] = len({lab.row for lab in labels})
        config["patients"] = len({lab.subject_id for lab in labels})
        sources[IMAGE_FILE] = sha256_file(folder / IMAGE_FILE)
    if "sentence_similarity" in tasks:
        pairs, counts = read_sentence_pairs(folder / SENTENCE_FILE)
        exclusions.update(counts)
        items += [sentence_item(pair, args.seed) for pair in pairs]
        config["sentence_pairs"] = {s: dict(sorted(Counter(p.category for p in pairs if p.subset == s).items()))
                                    for s in dict.fromkeys(p.subset for p in pairs)}
        sources[SENTENCE_FILE] = sha256_file(folder / SENTENCE_FILE)
    read = [folder / f for f in sources]
    licence = licence_of(*read, *([root] if root is not None else []))
    manifest = Manifest(benchmark=BENCHMARK, version=VERSION, seed=args.seed, licence=licence,
                        image_root=str(root) if root is not None else None, config=config, sources=sources,
                        exclusions=dict(sorted(exclusions.items())))
    return items, manifest
