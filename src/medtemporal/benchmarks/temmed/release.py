"""Readers of TemMed-Bench's released JSON files (the ``_Final`` files after the authors'
``Get_Report_*`` notebooks have filled in the CheXpert Plus reports).

- ``TestSet_VQA_ReportGeneration_Final.json``: the 1,000 test instances, a list of
  ``{image_path, historical_image_path, reference_images, hist_reference_images,
  VQA_Final: [{VQA_question, VQA_answer}], condition_changes_report,
  reference_condition_changes_reports}``; ``image_path`` is the current image.
- ``TestSet_SelectedVQA_2000.json``: the evaluated VQA questions, ``[{img_id, question_id}]``
  (indices into the test list and its ``VQA_Final``).
- ``TestSet_ImagePairSelection.json``: ``[{right_option, condition_change, option: {A, B, C →
  test index}, Retrieval_TrainSet_now_idx}]`` (the last indexes the corpus).
- ``TrainSet_KnowledgeCorpus_Final.json``: ``[{image_path, historical_image_path,
  condition_changes_report}]``.

Image paths (``.jpg`` or ``.png``, with or without a ``PNG/`` or absolute prefix)
are resolved against the CheXpert Plus root. The released references become
each item's ``official`` retrieval; the patient overlap of the released split
is reported (the release splits instances, not patients).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medtemporal.benchmarks.temmed.pipeline import (
    BENCHMARK,
    LETTERS,
    Instance,
    base_meta,
    pair_images,
    patient_overlap,
    report_items,
)
from medtemporal.family import InvalidInputError, Item
from medtemporal.retrieval import PairEntry
from medtemporal.sources.chexpert_plus import resolve_image, study_key
from medtemporal.sources.release_schema import ANY, Field, Schema

TEST_FILE = "TestSet_VQA_ReportGeneration_Final.json"
SELECTED_FILE = "TestSet_SelectedVQA_2000.json"
PAIRS_FILE = "TestSet_ImagePairSelection.json"
CORPUS_FILE = "TrainSet_KnowledgeCorpus_Final.json"
_PAIR = (Field("image_path"), Field("historical_image_path"), Field("condition_changes_report", ANY))
TEST = Schema("a TemMed-Bench test instance", (*_PAIR[:2], Field("VQA_Final", list), _PAIR[2]))
QA = Schema("a question with its answer", (Field("VQA_question", ANY), Field("VQA_answer", ANY)))
SELECTED = Schema("a selected VQA question", (Field("img_id", ANY), Field("question_id", ANY)))
PAIRS = Schema("a TemMed-Bench image-pair question", (
    Field("right_option", ANY), Field("condition_change", ANY), Field("option", dict),
    Field("Retrieval_TrainSet_now_idx", ANY),
))
CORPUS = Schema("a TemMed-Bench corpus instance", _PAIR)
"""The records of the four released files (indices are read with `_index`, which also takes them as text)."""


def read_records(path: Path, schema: Schema) -> list[dict[str, Any]]:
    """A released JSON list, each element a record of ``schema``; one clear sentence otherwise."""
    return schema.json_list(path, what=f"TemMed-Bench's released {path.name}")


def yes_no(answer: str, where: str) -> str:
    """``Yes``/``No`` from a released answer (``Yes``, ``Yes.``, ``No``, ``No.``)."""
    text = str(answer).strip().rstrip(".")
    if text.lower() not in ("yes", "no"):
        raise InvalidInputError(f"{where}: VQA_answer {answer!r} is neither Yes nor No; fix that record.")
    return text.capitalize()


def _index(value: Any, where: str, field: str) -> int:
    """``value`` as an integer index, or one clear sentence naming the record."""
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{where}: {field} {value!r} is not an integer index; fix that record.") from None


def _patient(path: str) -> str:
    return study_key(path)[0]


def _instance(rec: dict, root: Path) -> Instance:
    patient, study = study_key(rec["image_path"])
    _, prior = study_key(rec["historical_image_path"])
    return Instance(patient, resolve_image(root, rec["historical_image_path"]), resolve_image(root, rec["image_path"]),
                    str(rec["condition_changes_report"] or ""), f"{patient}/{study}", f"{patient}/{prior}")


@dataclass
class Official:
    """The released files as items, corpus and split facts."""

    items: list[Item]
    corpus: list[PairEntry]
    test: list[Instance]
    overlap: dict[str, int]
    selected_vqa: bool


def _official_refs(rec: dict, root: Path, where: str) -> list[dict]:
    cur = rec.get("reference_images") or []
    hist = rec.get("hist_reference_images") or []
    reports = rec.get("reference_condition_changes_reports") or []
    if not (len(cur) == len(hist) == len(reports)):
        raise InvalidInputError(f"{where}: reference_images, hist_reference_images and their reports differ in length.")
    return [{"id": None, "historical": resolve_image(root, h), "current": resolve_image(root, c),
             "report": str(r or ""), "score": None} for c, h, r in zip(cur, hist, reports)]


def read_official(folder: Path, image_root: Path) -> Official:
    """Items of the three tasks and the corpus from the released files in ``folder``.

    Args:
        folder: Holds the four released files (the selected-VQA file is optional: without it,
            every question of ``VQA_Final`` becomes an item).
        image_root: CheXpert Plus root (holds ``PNG/``); every image must exist there.
    """
    test_path = folder / TEST_FILE
    raw_test = read_records(test_path, TEST)
    raw_corpus = read_records(folder / CORPUS_FILE, CORPUS)
    raw_pairs = read_records(folder / PAIRS_FILE, PAIRS)
    for i, rec in enumerate(raw_test):
        problem = next((p for qa in rec["VQA_Final"] if (p := QA.problem(qa)) is not None), None)
        if problem is not None:
            raise InvalidInputError(f"{test_path}, record {i} has a VQA_Final entry that is not {QA.record} "
                                    f"({problem}); fix or remove it.")
    test = [_instance(rec, image_root) for rec in raw_test]
    corpus = [PairEntry(id=i, patient_id=_patient(rec["image_path"]),
                        historical=resolve_image(image_root, rec["historical_image_path"]),
                        current=resolve_image(image_root, rec["image_path"]),
                        report=str(rec["condition_changes_report"] or "")) for i, rec in enumerate(raw_corpus)]
    refs = [_official_refs(rec, image_root, f"{test_path}, element {i}") for i, rec in enumerate(raw_test)]
    extra = {i: {"retriever": "official", "retrieval": {"official": r}} for i, r in enumerate(refs)}

    selected_path = folder / SELECTED_FILE
    if selected_path.is_file():
        chosen = [(_index(s["img_id"], f"{SELECTED_FILE}, element {k}", "img_id"),
                   _index(s["question_id"], f"{SELECTED_FILE}, element {k}", "question_id"))
                  for k, s in enumerate(read_records(selected_path, SELECTED))]
    else:
        chosen = [(i, j) for i, rec in enumerate(raw_test) for j in range(len(rec["VQA_Final"]))]
    vqa = []
    for i, j in chosen:
        where = f"{selected_path.name}: img_id {i}, question_id {j}"
        if not 0 <= i < len(raw_test) or not 0 <= j < len(raw_test[i]["VQA_Final"]):
            raise InvalidInputError(f"{where} points outside {TEST_FILE}; use the matching release files.")
        qa = raw_test[i]["VQA_Final"][j]
        vqa.append(Item.create(benchmark=BENCHMARK, task="vqa", subtype="vqa", images=pair_images(test[i]),
                               question=str(qa["VQA_question"]), answer_type="yesno",
                               answer=yes_no(qa["VQA_answer"], where),
                               meta={**base_meta(test[i], i), "question_id": j, **extra[i]}))

    pairs = []
    for k, rec in enumerate(raw_pairs):
        where = f"{PAIRS_FILE}, element {k}"
        given = rec["option"]
        options = {letter: _index(given[letter], where, f"option {letter}") for letter in LETTERS if letter in given}
        if set(options) != set(LETTERS) or not all(0 <= v < len(test) for v in options.values()):
            raise InvalidInputError(f"{where}: option must map A, B and C to test indices; fix that record.")
        if rec["right_option"] not in options:
            raise InvalidInputError(f"{where}: right_option {rec['right_option']!r} is not A, B or C.")
        c = _index(rec["Retrieval_TrainSet_now_idx"], where, "Retrieval_TrainSet_now_idx")
        if not 0 <= c < len(corpus):
            raise InvalidInputError(f"{where}: Retrieval_TrainSet_now_idx {c} is outside {CORPUS_FILE}.")
        target = options[rec["right_option"]]
        ref = {"id": c, "historical": corpus[c].historical, "current": corpus[c].current, "report": corpus[c].report,
               "score": None}
        images = [r for letter in LETTERS for r in pair_images(test[options[letter]], letter)]
        pairs.append(Item.create(benchmark=BENCHMARK, task="image_pair", subtype="image_pair", images=images,
                                 question=str(rec["condition_change"]),
                                 options={letter: f"image pair {letter}" for letter in LETTERS}, answer_type="choice",
                                 answer=rec["right_option"],
                                 meta={**base_meta(test[target], target), "options": options, "pair_index": k,
                                       "retriever": "official", "retrieval": {"official": [ref]}}))
    corpus_instances = [Instance(e.patient_id, e.historical, e.current, e.report) for e in corpus]
    items = [*vqa, *report_items(test, extra), *pairs]
    return Official(items, corpus, test, patient_overlap(test, corpus_instances), selected_path.is_file())
