"""``medtemporal phantoms ms-cxr-t --cxr DIR --out DIR``: the two MS-CXR-T files over a phantom CXR cohort.

The image-classification file pairs consecutive frontal studies of each patient of a ``medtemporal
phantoms cxr`` cohort (studies with a corrupt image or a time equal to the previous study's are skipped)
and labels four findings from the cohort's ``phantom_truth.jsonl``: consolidation, edema (the cohort's
pulmonary edema), pleural effusion and pneumothorax. A finding absent at both studies is not annotated
(empty cells, as in the release); new or more severe is ``worsening``, resolved or less severe
``improving``, present at the same severity ``stable``. The cohort has no pneumonia, so its columns stay
empty. Pairs without any label are not written. ``<finding>_label_quality`` is drawn per label
(one_expert 75%, multiple_experts 20%, disagreement 5%); it never changes the label.

The sentence-similarity file holds template sentences about a change of a finding: a paraphrase says the
same change in other words, a contradiction names another change. Subset names are ``RadGraph`` (the one
MedST keeps) and ``synthetic``.

``OUT`` gets both CSVs, ``phantom_truth.jsonl`` (one line per label and per sentence pair, with the states
the label came from) and ``phantom_manifest.json`` (written last; marks the folder synthetic).
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Any

from medtemporal.benchmarks.ms_cxr_t.release import FINDINGS, IMAGE_COLUMNS, IMAGE_FILE, SENTENCE_COLUMNS, SENTENCE_FILE
from medtemporal.family import (
    InvalidInputError, PHANTOM_TRUTH, PhantomKind, prepare_out, register, write_phantom_manifest,
)
from medtemporal.phantoms.cohort import cohort_options, ensure_cohort, read_cohort, write_lines

GENERATOR = "medtemporal phantoms ms-cxr-t"
COHORT_ENTITY = {"consolidation": "consolidation", "edema": "pulmonary edema", "pleural_effusion": "pleural effusion",
                 "pneumothorax": "pneumothorax"}
"""MS-CXR-T finding → the cohort's entity (the cohort has no pneumonia)."""
QUALITY_SHARES = (("one_expert", 0.75), ("multiple_experts", 0.2), ("disagreement", 0.05))
SENTENCES = {
    "improving": ("{X} has improved.", "Interval improvement of {x}.", "{X} is less pronounced than before."),
    "worsening": ("{X} has worsened.", "Interval worsening of {x}.", "{X} is more pronounced than before."),
    "stable": ("{X} is unchanged.", "No change in {x}.", "Stable {x} since the prior study."),
}
NAMES = {"consolidation": "consolidation", "edema": "pulmonary edema", "pleural_effusion": "pleural effusion",
         "pneumonia": "pneumonia", "pneumothorax": "pneumothorax"}


def progression(prior: dict[str, Any], current: dict[str, Any]) -> str | None:
    """The label of one finding between two states of the truth; None when absent at both."""
    if not prior["present"] and not current["present"]:
        return None
    if not prior["present"] or current["severity_level"] > prior["severity_level"]:
        return "worsening" if current["present"] else "improving"
    if not current["present"] or current["severity_level"] < prior["severity_level"]:
        return "improving"
    return "stable"


def usable(study: dict[str, Any]) -> bool:
    """A study with a whole frontal image and a time of its own."""
    return bool(study["frontal"]) and not {"corrupt_image", "equal_timestamp"} & set(study["messy"])


def _dicom(frontal: str) -> str:
    """``files/p10/p1…/s5…/<dicom>.jpg`` → ``p10/p1…/s5…/<dicom>`` (the release's form)."""
    return frontal.removeprefix("files/").removesuffix(".jpg")


def _quality(rng: random.Random) -> str:
    r = rng.random()
    for name, share in QUALITY_SHARES:
        r -= share
        if r < 0:
            return name
    return QUALITY_SHARES[-1][0]


def image_rows(cohort: dict[str, list[dict[str, Any]]], seed: int, pairs: int | None) -> tuple[list[dict], list[dict]]:
    """The rows of the image file and their truth lines."""
    candidates = []
    for studies in cohort.values():
        kept = [s for s in studies if usable(s)]
        for prior, current in zip(kept, kept[1:]):
            labels = {f: progression(prior["findings"][e], current["findings"][e]) for f, e in COHORT_ENTITY.items()}
            if any(labels.values()):
                candidates.append((prior, current, labels))
    if pairs is not None and pairs < len(candidates):
        chosen = sorted(random.Random(f"{seed}:pairs").sample(range(len(candidates)), pairs))
        candidates = [candidates[i] for i in chosen]
    rows, truth = [], []
    for index, (prior, current, labels) in enumerate(candidates):
        rng = random.Random(f"{seed}:quality:{index}")
        row: dict[str, Any] = {"dicom_id": _dicom(current["frontal"]), "previous_dicom_id": _dicom(prior["frontal"]),
                               "previous_study_id": int(prior["study_id"][1:]),
                               "study_id": int(current["study_id"][1:]),
                               "subject_id": int(current["patient_id"][1:])}
        for finding in FINDINGS:
            label = labels.get(finding)
            row[f"{finding}_progression"] = label
            row[f"{finding}_label_quality"] = _quality(rng) if label else None
            if label:
                entity = COHORT_ENTITY[finding]
                truth.append({"file": IMAGE_FILE, "row": index, "finding": finding, "progression": label,
                              "patient_id": current["patient_id"], "study_id": current["study_id"],
                              "previous_study_id": prior["study_id"], "prior": prior["findings"][entity],
                              "current": current["findings"][entity]})
        rows.append(row)
    return rows, truth


def sentence_rows(n: int, seed: int) -> tuple[list[dict], list[dict]]:
    """``n`` sentence pairs, half paraphrases, and their truth lines."""
    rng = random.Random(f"{seed}:sentences")
    rows, truth = [], []
    for index in range(n):
        finding = rng.choice(FINDINGS)
        name = NAMES[finding]
        change = rng.choice(sorted(SENTENCES))
        category = "paraphrase" if index % 2 == 0 else "contradiction"
        other = change if category == "paraphrase" else rng.choice([c for c in sorted(SENTENCES) if c != change])
        first, second = rng.sample(range(3), 2)
        words = {"X": name.capitalize(), "x": name}
        rows.append({"subset_name": "RadGraph" if rng.random() < 0.5 else "synthetic",
                     "sentence_1": SENTENCES[change][first].format(**words),
                     "sentence_2": SENTENCES[other][second].format(**words), "category": category})
        truth.append({"file": SENTENCE_FILE, "row": index, "category": category, "changes": [change, other]})
    return rows, truth


def write_ms_cxr_t_phantoms(cxr: str | Path, out: str | Path, *, seed: int = 0, pairs: int | None = None,
                            sentences: int = 40, overwrite: bool = False) -> tuple[int, int, int]:
    """Write both files, the truth and the phantom manifest under ``out``; return (rows, labels, sentence pairs)."""
    import pandas as pd

    cxr, out = Path(cxr), Path(out)
    if pairs is not None and pairs < 1:
        raise InvalidInputError(f"--pairs must be at least 1 (got {pairs}).")
    if sentences < 0:
        raise InvalidInputError(f"--sentences must be zero or more (got {sentences}).")
    cohort = read_cohort(cxr)
    rows, truth = image_rows(cohort, seed, pairs)
    if not rows:
        raise InvalidInputError(f"The cohort in {cxr} has no pair of studies with a labelled finding; write one with "
                                "more patients.")
    s_rows, s_truth = sentence_rows(sentences, seed)
    prepare_out(out, overwrite, GENERATOR)
    image = pd.DataFrame(rows, columns=list(IMAGE_COLUMNS))
    image.to_csv(out / IMAGE_FILE, index=False, lineterminator="\n")
    pd.DataFrame(s_rows, columns=list(SENTENCE_COLUMNS)).to_csv(out / SENTENCE_FILE, index=False, lineterminator="\n")
    write_lines(out / PHANTOM_TRUTH, [*truth, *s_truth])
    write_phantom_manifest(out, GENERATOR, seed=seed, cohort=str(cxr.resolve()), pairs=pairs, sentences=sentences)
    return len(rows), len(truth), len(s_rows)


def _options(p: argparse.ArgumentParser) -> None:
    cohort_options(p)
    p.add_argument("--pairs", type=int, metavar="N", help="image pairs to write (default: every labelled pair)")
    p.add_argument("--sentences", type=int, default=40, metavar="N", help="sentence pairs (default %(default)s)")


def _write(args: argparse.Namespace) -> list[str]:
    ensure_cohort(args.cxr, args.patients, args.seed)
    rows, labels, sentences = write_ms_cxr_t_phantoms(args.cxr, args.out, seed=args.seed, pairs=args.pairs,
                                                      sentences=args.sentences, overwrite=args.overwrite)
    return [f"Wrote {rows} image pairs ({labels} labels) and {sentences} sentence pairs to {args.out}",
            f"  ms-cxr-t folder:    {args.out}  (pass it to `medtemporal build ms-cxr-t` as --ms-cxr-t)",
            f"  MIMIC-CXR-JPG root: {Path(args.cxr) / 'mimic-cxr-jpg'}  (as --mimic-cxr-jpg)",
            f"  ground truth:       {Path(args.out) / PHANTOM_TRUTH}"]


register("phantom", "ms-cxr-t")(PhantomKind(
    help="MS-CXR-T 1.0.0 phantoms (both CSVs) over a `phantoms cxr` cohort, with exact truth",
    description="Write MS_CXR_T_temporal_image_classification_v1.0.0.csv (labels from the cohort's trajectories), "
    "MS_CXR_T_temporal_sentence_similarity_v1.0.0.csv, phantom_truth.jsonl and phantom_manifest.json under OUT.",
    add_arguments=_options, write=_write))
