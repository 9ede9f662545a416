"""``medtemporal phantoms medical-diff-vqa --cxr DIR --out DIR``: Medical-Diff-VQA 1.0.1 over a phantom cohort.

Writes ``mimic_all.csv`` and ``mimic_pair_questions.csv`` in the release's schemas for a ``medtemporal
phantoms cxr`` cohort, with the questions of all seven types worded and answered as the release's generator
does (DIFF ``code/question_gen.py``: ``create_question_set`` L634–643 and the ``*_ques`` functions L645–1099,
``get_caption`` for difference answers), every answer following from the cohort's ``phantom_truth.jsonl``.

* ``mimic_all.csv``: one row per study: the 14 CheXpert labels (1.0 present, 0.0 reported absent, empty
  otherwise), the first PA/AP image of the study in the metadata file else its first image
  (``get_mimic_all.py``), its ``view`` (``ViewCodeSequence_CodeMeaning``), ``split`` (per patient:
  ``test`` with ``--test-share``, ``validate`` 10%, else ``train``), ``study_date`` and ``study_order``
  (date rank within the subject, ties sharing the lower rank).
* Pairs: every main study whose image is frontal and whole gets one reference, drawn among the subject's
  frontal studies of a lower ``study_order`` (as the 1.0.1 generator, L1222–1236); the question rows carry
  the patient's split (``val`` for ``validate``).
* A study's findings are the cohort's present entities under the release's official names (pleural
  effusion, atelectasis, cardiomegaly, edema, vascular congestion, pneumothorax, lung opacity,
  consolidation; `OFFICIAL`). Their attributes, as the generator's KeyInfo records hold them: location words
  from the side and zone (`location`), level the severity word when the level library has it (``large``
  it has not, so a large effusion has no level), and, for the findings reports give a type (`TYPED`), a
  type word per patient and finding drawn uniformly from the whole type library (`TYPE_WORDS`): the
  phantom images draw no texture, so no word is truer than another, and a word tied to its finding
  ("what type is the edema?" → always "interstitial") would be answered by the question alone. Reported absences
  (annotated and absent) are the ``no_entity`` list. The phantoms have no post-location phrase, so the
  questions that need one are never asked (as the generator skips them).

``OUT`` also gets ``phantom_truth.jsonl`` (one line per question: the row, the two studies' finding records
the answer came from) and ``phantom_manifest.json``.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Any

from medtemporal.benchmarks.medical_diff_vqa.release import MIMIC_ALL_FILE, QUESTION_COLUMNS, QUESTIONS_FILE
from medtemporal.family import (
    InvalidInputError, PHANTOM_TRUTH, PhantomKind, prepare_out, register, write_phantom_manifest,
)
from medtemporal.phantoms.cohort import cohort_options, ensure_cohort, read_cohort, write_lines
from medtemporal.sources.mimic_cxr import METADATA_CSV

GENERATOR = "medtemporal phantoms medical-diff-vqa"
OFFICIAL = {"pleural effusion": "pleural effusion", "atelectasis": "atelectasis", "cardiomegaly": "cardiomegaly",
            "pulmonary edema": "edema", "vascular congestion": "vascular congestion", "pneumothorax": "pneumothorax",
            "lung opacity": "lung opacity", "consolidation": "consolidation"}
"""Cohort entity → the release's official name (``libs/disease_lib.csv``)."""
DISEASES = (
    "pleural effusion", "atelectasis", "cardiomegaly", "enlargement of the cardiac silhouette", "edema", "hernia",
    "vascular congestion", "hilar congestion", "pneumothorax", "heart failure", "lung opacity", "pneumonia",
    "tortuosity of the descending aorta", "scoliosis", "gastric distention", "hypoxemia",
    "hypertensive heart disease", "hematoma", "tortuosity of the thoracic aorta", "contusion", "emphysema",
    "granuloma", "calcification", "pleural thickening", "thymoma", "blunting of the costophrenic angle",
    "consolidation", "fracture", "pneumomediastinum", "air collection")
"""``official_name`` of ``libs/disease_lib.csv``, in order: what ``pres_ques0_yes`` draws from."""
LEVELS = frozenset({"moderately", "moderate", "acute", "mildly", "mild", "small", "severe", "moderate to large",
                    "moderate to severe", "mild to moderate", "minimal", "subtle", "massive", "minimally",
                    "increasing", "decreasing", "minor"})
"""``libs/level_lib.csv``."""
ZONE = {"pneumothorax": "apical", "consolidation": "lower", "atelectasis": "lower", "lung opacity": "mid"}
"""Location word beside the side (``libs/location_lib.csv`` words), as the cohort's reports place them."""
SIDED = frozenset({"pleural effusion", "pneumothorax", "consolidation", "atelectasis", "lung opacity"})
TYPE_WORDS = ("interstitial", "layering", "dense", "parenchymal", "compressive", "obstructive", "linear", "plate-like",
              "patchy", "ground-glass", "calcified", "scattered", "focal", "multifocal")
"""``libs/type_lib.csv`` (less ``multi-focal``, a spelling of ``multifocal``); each patient's typed finding keeps
one, drawn with the seed."""
TYPED = frozenset({"lung opacity", "atelectasis", "consolidation", "edema", "pleural effusion"})
"""Findings whose type reports give (linear atelectasis, layering effusion, interstitial edema …)."""
QUESTIONS = {
    "abnormality": ("what abnormalities are seen in this image?", "what abnormalities are seen in the xxx?",
                    "is there evidence of any abnormalities in this image?"),
    "presence": ("is there evidence of xxx in this image?", "is there xxx?", "is there xxx in the lxxx?"),
    "view": ("which view is this image taken?", "is this PA view?", "is this AP view?"),
    "location": ("where in the image is the xxx located?", "where is the xxx?",
                 "is the xxx located on the left side or right side?"),
    "level": ("what level is the xxx?",),
    "type": ("what type is the xxx?",),
    "difference": ("what has changed compared to the reference image?", "what has changed in the lxxx area?"),
}
"""``create_question_set`` (L634–643)."""
CHEXPERT = ("Atelectasis", "Cardiomegaly", "Consolidation", "Edema", "Enlarged Cardiomediastinum", "Fracture",
            "Lung Lesion", "Lung Opacity", "No Finding", "Pleural Effusion", "Pleural Other", "Pneumonia",
            "Pneumothorax", "Support Devices")
CHEXPERT_OF = {"atelectasis": "Atelectasis", "cardiomegaly": "Cardiomegaly", "consolidation": "Consolidation",
               "pulmonary edema": "Edema", "lung opacity": "Lung Opacity", "pleural effusion": "Pleural Effusion",
               "pneumothorax": "Pneumothorax"}
VIEW_WORDS = {"postero-anterior": "PA view", "antero-posterior": "AP view"}


def location(entity: str, state: dict[str, Any]) -> list[str] | None:
    """The location words of a present finding (None for unsided findings)."""
    side = state.get("laterality")
    if entity not in SIDED or not side:
        return None
    if side == "bilateral":
        return ["bilateral"]
    return [side, ZONE[entity]] if entity in ZONE else [side]


def type_word(name: str, patient: str, seed: int) -> list[str] | None:
    """The patient's type word for finding ``name`` (the same at every study), or None."""
    return [random.Random(f"{seed}:type:{patient}:{name}").choice(TYPE_WORDS)] if name in TYPED else None


def findings(study: dict[str, Any], seed: int) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """(official name → {location, level, type} of each present finding, reported-absent official names)."""
    present, absent = {}, []
    for entity, name in OFFICIAL.items():
        state = study["findings"][entity]
        if state["present"]:
            level = state["severity"] if state["severity"] in LEVELS else None
            present[name] = {"location": location(entity, state), "level": [level] if level else None,
                             "type": type_word(name, study["patient_id"], seed)}
        elif state["annotated"]:
            absent.append(name)
    return present, absent


def _shuffled(entities: dict[str, dict[str, Any]], rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    """The generator's ``random.shuffle`` then ``popitem``: a random order of the findings."""
    keys = list(entities)
    rng.shuffle(keys)
    return [(k, entities[k]) for k in reversed(keys)]


def abnormality(ent: dict, rng: random.Random) -> tuple[str, str] | None:
    """``abnormality_ques`` (L645–711; q1 needs a post-location, which phantoms lack, so it is drawn again)."""
    while True:
        q = rng.randrange(3)
        if q in (0, 1) and not ent:
            if rng.random() > 0.5:
                return None
            continue
        if q == 0:
            return QUESTIONS["abnormality"][0], ", ".join(ent)
        if q == 2:
            return QUESTIONS["abnormality"][2], "yes" if ent else "no"


def _present_or_not(ent: dict, question: str, rng: random.Random) -> tuple[str, str]:
    """``pres_ques0_yes`` (L720–732): a random disease of the library; yes when the study has it."""
    name = DISEASES[rng.randrange(len(DISEASES))]
    return question.replace("xxx", name), "yes" if name in ent else "no"


def _pres_loc(ent: dict, rng: random.Random) -> tuple[str, str] | None:
    """``sub_ques_pres_loc`` (L781–859) without post-locations: the finding at its place (yes) or at the
    mirrored side (no). Unlike the release, the finding named is always the one whose place is asked: the
    release's yes branch replaces the name before it knows the finding has a place (see the docs)."""
    question = QUESTIONS["presence"][2]
    if not ent:
        return None
    if rng.random() > 0.5:
        for name, rec in _shuffled(ent, rng):
            if rec["location"] is not None:
                where = " ".join(rec["location"])
                if where == "bilateral":
                    return f"is the {name} bilateral?", "yes"
                where = where + " lung" if where in ("left", "right") else where
                return question.replace(" xxx", " " + name).replace("lxxx", where + " area"), "yes"
        return None
    for name, rec in _shuffled(ent, rng):
        if rec["location"] is None:
            continue
        where = " ".join(rec["location"])
        if "left" in where:
            where = where.replace("left", "right")
        elif "right" in where:
            where = where.replace("right", "left")
        else:
            continue
        return question.replace(" xxx", " " + name).replace("lxxx", where + " area"), "no"
    return None


def presence(ent: dict, absent: list[str], rng: random.Random) -> tuple[str, str] | None:
    """``presence_ques`` (L734–779)."""
    if not ent and not absent:
        return None
    while True:
        q = rng.randrange(3)
        if q in (0, 1):
            question = QUESTIONS["presence"][q]
            if rng.random() > 0.5:
                if rng.random() > 0.5:
                    if absent:
                        return question.replace("xxx", absent[rng.randrange(len(absent))]), "no"
                    return _present_or_not(ent, question, rng)
                if ent:
                    return _present_or_not(ent, question, rng)
                return question.replace("xxx", absent[rng.randrange(len(absent))]), "no"
            if ent:
                return question.replace("xxx", _shuffled(ent, rng)[0][0]), "yes"
            continue
        found = _pres_loc(ent, rng)
        if found is not None:
            return found


def view(main_view: str | None, rng: random.Random) -> tuple[str, str] | None:
    """``view_ques`` (L861–899): AP studies are asked about 5% of the time."""
    words = VIEW_WORDS.get(main_view or "")
    if words is None or (words == "AP view" and rng.random() > 0.05):
        return None
    if rng.random() > 0.5:
        return QUESTIONS["view"][0], words
    if rng.random() > 0.5:
        return QUESTIONS["view"][1], "yes" if words == "PA view" else "no"
    return QUESTIONS["view"][2], "yes" if words == "AP view" else "no"


def location_question(ent: dict, rng: random.Random) -> tuple[str, str] | None:
    """``location_ques`` (L901–969)."""
    q = rng.randrange(3)
    for name, rec in _shuffled(ent, rng):
        where = rec["location"]
        if where is None:
            continue
        if q in (0, 1):
            return QUESTIONS["location"][q].replace("xxx", name), " ".join(where) + " area"
        if "left" in where:
            return QUESTIONS["location"][2].replace("xxx", name), "left side"
        if "right" in where:
            return QUESTIONS["location"][2].replace("xxx", name), "right side"
    return None


def attribute(ent: dict, key: str, rng: random.Random) -> tuple[str, str] | None:
    """``level_ques`` and ``type_ques`` (L971–1001): the first finding (in a random order) that has the attribute."""
    for name, rec in _shuffled(ent, rng):
        if rec[key] is not None:
            return QUESTIONS[key][0].replace("xxx", name), " ".join(rec[key])
    return None


def _listed(names: list[str]) -> str:
    """``get_caption``'s list: " a" for one name, " a, b, and c" for several."""
    text = ""
    for name in names:
        if name == names[-1] and len(names) != 1:
            text += " and " + name
        else:
            text += " " + name if len(names) == 1 else " " + name + ","
    return text


def caption(adding: list[str], dropping: list[str]) -> str:
    """``get_caption`` (L1012–1047), word for word (with its trailing spaces)."""
    out = ""
    if adding:
        head = "the main image has an additional finding of" if len(adding) == 1 else \
            "the main image has additional findings of"
        out += head + _listed(adding) + " than the reference image. "
    if dropping:
        head = "the main image is missing the finding of" if len(dropping) == 1 else \
            "the main image is missing the findings of"
        out += head + _listed(dropping) + " than the reference image. "
    return out


def difference(ent: dict, ref: dict, rng: random.Random) -> tuple[str, str]:
    """``diff_ques`` (L1049–1099): level changes (one in a named area ends it), then added and missing findings,
    the main study's findings in a random order as the generator shuffles them."""
    answer = ""
    main = dict(_shuffled(ent, rng))
    for name, rec in main.items():
        if name in ref:
            old = ref[name]
            if rec["level"] is not None and old["level"] is not None and rec["level"] != old["level"]:
                before, after = " ".join(old["level"]), " ".join(rec["level"])
                sentence = f"the level of {name} has changed from {before} to {after}. "
                if rec["location"] is not None and old["location"] is not None:
                    common = [w for w in rec["location"] if w in old["location"]]
                    if common and " ".join(common) != "bilateral":
                        area = " ".join(common)
                        area = area + " lung" if area in ("left", "right") else area
                        return QUESTIONS["difference"][1].replace("lxxx", area), sentence
                answer += sentence
    adding = [n for n in main if n not in ref]
    missing = [n for n in ref if n not in main]
    if adding or missing:
        answer += caption(adding, missing)
    return QUESTIONS["difference"][0], answer or "nothing has changed."


def _split(patient: str, seed: int, test_share: float) -> str:
    r = random.Random(f"{seed}:split:{patient}").random()
    return "test" if r < test_share else "validate" if r < test_share + 0.1 else "train"


def mimic_all_rows(cxr: Path, cohort: dict[str, list[dict[str, Any]]], seed: int,
                   test_share: float) -> list[dict[str, Any]]:
    """One ``mimic_all.csv`` row per study of the cohort (module doc)."""
    import pandas as pd

    meta = pd.read_csv(cxr / "mimic-cxr-jpg" / METADATA_CSV, dtype=str)
    by_study: dict[str, list[tuple[str, str, str]]] = {}
    for rec in meta.itertuples(index=False):
        by_study.setdefault(rec.study_id, []).append((rec.dicom_id, rec.ViewCodeSequence_CodeMeaning, rec.StudyDate))
    rows = []
    for patient, studies in cohort.items():
        split = _split(patient, seed, test_share)
        dates = [int(by_study[s["study_id"][1:]][0][2]) for s in studies]
        for study, date in zip(studies, dates):
            images = by_study[study["study_id"][1:]]
            dicom, meaning, _ = next((i for i in images if i[1] in VIEW_WORDS), images[0])
            labels = {c: None for c in CHEXPERT}
            for entity, column in CHEXPERT_OF.items():
                state = study["findings"][entity]
                labels[column] = 1.0 if state["present"] else 0.0 if state["annotated"] else None
            rows.append({"subject_id": int(patient[1:]), "study_id": int(study["study_id"][1:]), **labels,
                         "dicom_id": dicom, "view": meaning, "split": split, "study_date": date,
                         "study_order": float(1 + sum(d < date for d in dates)),
                         "_usable": meaning in VIEW_WORDS and "corrupt_image" not in study["messy"]})
    return rows


def pairs_of(cohort: dict[str, list[dict[str, Any]]], studies: dict[int, dict[str, Any]], seed: int,
             limit: int | None) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(main, reference) truth lines: each usable main study with a usable earlier one (at most ``limit``,
    drawn with the seed)."""
    pairs = []
    for visits in cohort.values():
        for study in visits:
            main = studies[int(study["study_id"][1:])]
            earlier = [s for s in visits if studies[int(s["study_id"][1:])]["_usable"]
                       and studies[int(s["study_id"][1:])]["study_order"] < main["study_order"]]
            if main["_usable"] and earlier:
                rng = random.Random(f"{seed}:reference:{study['study_id']}")
                pairs.append((study, earlier[rng.randrange(len(earlier))]))
    if limit is not None and limit < len(pairs):
        pairs = [pairs[i] for i in sorted(random.Random(f"{seed}:pairs").sample(range(len(pairs)), limit))]
    return pairs


def question_rows(pairs: list[tuple[dict[str, Any], dict[str, Any]]], studies: dict[int, dict[str, Any]],
                  seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The question rows of every (main, reference) pair and their truth lines."""
    rows, truth = [], []
    for study, reference in pairs:
        main = studies[int(study["study_id"][1:])]
        rng = random.Random(f"{seed}:pair:{study['study_id']}")
        ent, absent = findings(study, seed)
        ref_ent, _ = findings(reference, seed)
        asked = {
            "abnormality": abnormality(ent, rng), "presence": presence(ent, absent, rng),
            "view": view(main["view"], rng), "location": location_question(ent, rng),
            "level": attribute(ent, "level", rng), "type": attribute(ent, "type", rng),
            "difference": difference(ent, ref_ent, rng),
        }
        for qtype, qa in asked.items():
            if qa is None:
                continue
            truth.append({"row": len(rows), "question_type": qtype, "answer": qa[1], "main": ent,
                          "reported_absent": absent, "reference": ref_ent, "view": main["view"]})
            rows.append({"study_id": main["study_id"], "subject_id": main["subject_id"],
                         "ref_id": int(reference["study_id"][1:]), "question_type": qtype, "question": qa[0],
                         "answer": qa[1], "split": "val" if main["split"] == "validate" else main["split"]})
    return _balanced(rows, truth, seed)


def _balanced(rows: list[dict[str, Any]], truth: list[dict[str, Any]],
              seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows with "is there evidence of any abnormalities?" answered yes no more often than no.

    Nearly every phantom study has a finding, so without this the closed abnormality question would be
    "yes" whatever the image (a property of the phantoms, not of the release's generator). The yes rows
    kept are drawn with a seed; every other row is kept.
    """
    closed = QUESTIONS["abnormality"][2]
    yes = [k for k, r in enumerate(rows) if r["question"] == closed and r["answer"] == "yes"]
    no = sum(r["question"] == closed and r["answer"] == "no" for r in rows)
    dropped = set(yes) - set(random.Random(f"{seed}:balance").sample(yes, min(len(yes), no)))
    kept = [k for k in range(len(rows)) if k not in dropped]
    truth_of = {t["row"]: t for t in truth}
    return [rows[k] for k in kept], [{**truth_of[k], "row": n} for n, k in enumerate(kept)]


def write_diff_vqa_phantoms(cxr: str | Path, out: str | Path, *, seed: int = 0, test_share: float = 0.5,
                            pairs: int | None = None, overwrite: bool = False) -> tuple[int, int, int]:
    """Write both files, the truth and the phantom manifest; return (studies, questions, test questions)."""
    import pandas as pd

    cxr, out = Path(cxr), Path(out)
    if not 0 < test_share <= 1:
        raise InvalidInputError(f"--test-share must be above 0 and at most 1 (got {test_share}).")
    if pairs is not None and pairs < 1:
        raise InvalidInputError(f"--pairs must be at least 1 (got {pairs}).")
    cohort = read_cohort(cxr)
    all_rows = mimic_all_rows(cxr, cohort, seed, test_share)
    studies = {r["study_id"]: r for r in all_rows}
    rows, truth = question_rows(pairs_of(cohort, studies, seed, pairs), studies, seed)
    if not rows:
        raise InvalidInputError(f"The cohort in {cxr} has no pair of frontal studies; write one with more patients.")
    prepare_out(out, overwrite, GENERATOR)
    columns = ["subject_id", "study_id", *CHEXPERT, "dicom_id", "view", "split", "study_date", "study_order"]
    pd.DataFrame(all_rows, columns=columns).to_csv(out / MIMIC_ALL_FILE, index=False, lineterminator="\n")
    pd.DataFrame(rows, columns=list(QUESTION_COLUMNS)).to_csv(out / QUESTIONS_FILE, index=False, lineterminator="\n")
    write_lines(out / PHANTOM_TRUTH, truth)
    write_phantom_manifest(out, GENERATOR, seed=seed, cohort=str(cxr.resolve()), test_share=test_share, pairs=pairs)
    return len(all_rows), len(rows), sum(r["split"] == "test" for r in rows)


def _options(p: argparse.ArgumentParser) -> None:
    cohort_options(p)
    p.add_argument("--test-share", type=float, default=0.5, metavar="X",
                   help="share of patients in the test split (default %(default)s)")
    p.add_argument("--pairs", type=int, metavar="N", help="image pairs to ask about (default: every pair)")


def _write(args: argparse.Namespace) -> list[str]:
    ensure_cohort(args.cxr, args.patients, args.seed)
    studies, questions, test = write_diff_vqa_phantoms(args.cxr, args.out, seed=args.seed, test_share=args.test_share,
                                                       pairs=args.pairs, overwrite=args.overwrite)
    return [f"Wrote {studies} studies and {questions} questions ({test} in the test split) to {args.out}",
            f"  Medical-Diff-VQA folder: {args.out}  (pass it to `medtemporal build medical-diff-vqa` as --diff-vqa)",
            f"  MIMIC-CXR-JPG root:      {Path(args.cxr) / 'mimic-cxr-jpg'}  (as --mimic-cxr-jpg)",
            f"  ground truth:            {Path(args.out) / PHANTOM_TRUTH}"]


register("phantom", "medical-diff-vqa")(PhantomKind(
    help="Medical-Diff-VQA 1.0.1 phantoms (mimic_pair_questions.csv, mimic_all.csv) over a `phantoms cxr` cohort",
    description="Write mimic_all.csv and mimic_pair_questions.csv (all seven question types, worded and answered "
    "as the release's generator from the cohort's truth), phantom_truth.jsonl and phantom_manifest.json under OUT.",
    add_arguments=_options, write=_write))
