"""Medical-Diff-VQA phantoms: every answer follows from the cohort's truth, worded as the release's generator."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from medtemporal.benchmark import load
from medtemporal.benchmarks.medical_diff_vqa.phantom import caption
from medtemporal.benchmarks.medical_diff_vqa.release import QUESTION_COLUMNS, TYPES
from medtemporal.cli import main
from medtemporal.phantoms.cxr import CxrPhantom

ADDED = re.compile(r"the main image has (?:an additional finding|additional findings) of (.+?) than the reference image\. ")
MISSING = re.compile(r"the main image is missing the findings? of (.+?) than the reference image\. ")
LEVEL = re.compile(r"the level of (.+?) has changed from (.+?) to (.+?)\. ")


def _names(listed: str) -> list[str]:
    return [n.strip() for n in re.split(r", and |, | and ", listed)]


def _where(rec: dict) -> str:
    return " ".join(rec["location"])


def test_get_caption_wording_word_for_word():  # question_gen.py L1012-1047, with its trailing spaces and commas
    assert caption(["edema"], []) == "the main image has an additional finding of edema than the reference image. "
    assert caption(["a", "b"], ["c"]) == ("the main image has additional findings of a, and b than the reference image. "
                                          "the main image is missing the finding of c than the reference image. ")
    assert caption([], ["a", "b", "c"]) == "the main image is missing the findings of a, b, and c than the reference image. "


def test_every_answer_follows_from_the_truth(diffvqa: Path):
    rows = pd.read_csv(diffvqa / "mimic_pair_questions.csv", dtype=str, keep_default_na=False)
    assert tuple(rows.columns) == QUESTION_COLUMNS
    truth = [json.loads(line) for line in (diffvqa / "phantom_truth.jsonl").read_text().splitlines()]
    assert len(truth) == len(rows) and set(rows["question_type"]) == set(TYPES)
    checked: Counter[str] = Counter()
    for row, t in zip(rows.itertuples(), truth):
        main, ref, q, a = t["main"], t["reference"], row.question, row.answer
        assert a == t["answer"] and row.question_type == t["question_type"]
        if q == "is there evidence of any abnormalities in this image?":
            assert a == ("yes" if main else "no")
        elif m := re.fullmatch(r"is there (.+?) in the (.+?) area\?", q):
            place = m.group(2).removesuffix(" lung")
            assert a == ("yes" if m.group(1) in main and _where(main[m.group(1)]) == place else "no"), q
            if a == "no":  # the generator mirrors the side of a finding the study has
                assert m.group(1) in main and _where(main[m.group(1)]) != place
        elif m := re.fullmatch(r"is there (?:evidence of )?(.+?)(?: in this image)?\?", q):
            assert a == ("yes" if m.group(1) in main else "no"), q
        elif m := re.fullmatch(r"is the (.+?) bilateral\?", q):
            assert a == "yes" and main[m.group(1)]["location"] == ["bilateral"]
        elif q == "what abnormalities are seen in this image?":
            assert a == ", ".join(main)
        elif row.question_type == "view":
            pa = t["view"] == "postero-anterior"
            expected = {"which view is this image taken?": "PA view" if pa else "AP view",
                        "is this PA view?": "yes" if pa else "no", "is this AP view?": "no" if pa else "yes"}
            assert a == expected[q]
        elif m := re.fullmatch(r"(?:where in the image is the|where is the) (.+?)(?: located)?\?", q):
            assert a == _where(main[m.group(1)]) + " area"
        elif m := re.fullmatch(r"is the (.+?) located on the left side or right side\?", q):
            assert a == f"{main[m.group(1)]['location'][0]} side"
        elif m := re.fullmatch(r"what (level|type) is the (.+?)\?", q):
            assert a == " ".join(main[m.group(2)][m.group(1)])
        else:
            assert row.question_type == "difference", q
            _check_difference(q, a, main, ref)
        checked[row.question_type] += 1
    assert set(checked) == set(TYPES)


def _check_difference(q: str, a: str, main: dict, ref: dict) -> None:
    if a == "nothing has changed.":
        assert set(main) == set(ref) and all(main[n]["level"] == ref[n]["level"] or None in (main[n]["level"],
                                                                                          ref[n]["level"]) for n in main)
        return
    assert a.endswith(". ") and ADDED.sub("", MISSING.sub("", LEVEL.sub("", a))) == ""
    for name, old, new in LEVEL.findall(a):
        assert ref[name]["level"] == [old] and main[name]["level"] == [new] and old != new
    if q != "what has changed compared to the reference image?":  # a level change in a named area, alone
        (name, _, _), = LEVEL.findall(a)
        area = " ".join(w for w in main[name]["location"] if w in ref[name]["location"])
        assert q == f"what has changed in the {area + ' lung' if area in ('left', 'right') else area} area?"
        return
    added = [n for m in ADDED.findall(a) for n in _names(m)]
    missing = [n for m in MISSING.findall(a) for n in _names(m)]
    assert sorted(added) == sorted(set(main) - set(ref)) and sorted(missing) == sorted(set(ref) - set(main))


def test_the_release_files_build_with_the_test_split_and_the_truth_is_kept(diffvqa, cxr_phantoms: CxrPhantom, tmp_path):
    out = tmp_path / "bench"
    assert main(["build", "medical-diff-vqa", "--diff-vqa", str(diffvqa), "--mimic-cxr-jpg",
                 str(cxr_phantoms.mimic_cxr_jpg), "--out", str(out), "--no-audit"]) == 0
    bench = load(out)
    rows = pd.read_csv(diffvqa / "mimic_pair_questions.csv", dtype=str, keep_default_na=False)
    test = rows[rows["split"] == "test"]
    assert len(bench.items) == len(test) and bench.manifest.licence == "synthetic" and not bench.manifest.exclusions
    assert [it.reference for it in bench.items] == list(test["answer"])
    assert {it.task for it in bench.items} == {"closed", "open", "difference"}
    assert bench.manifest.config["rows_per_split"] == dict(sorted(Counter(rows["split"]).items()))
    again = tmp_path / "again"
    assert main(["build", "medical-diff-vqa", "--diff-vqa", str(diffvqa), "--mimic-cxr-jpg",
                 str(cxr_phantoms.mimic_cxr_jpg), "--out", str(again), "--no-audit"]) == 0
    assert (out / "items.jsonl").read_bytes() == (again / "items.jsonl").read_bytes()


@pytest.mark.parametrize("seed", [0, 3])
def test_the_same_seed_writes_the_same_bytes(cxr_phantoms: CxrPhantom, tmp_path, seed):
    for name in ("a", "b"):
        assert main(["phantoms", "medical-diff-vqa", "--cxr", str(cxr_phantoms.root), "--seed", str(seed),
                     "--pairs", "10", "--out", str(tmp_path / name)]) == 0
    for file in ("mimic_pair_questions.csv", "mimic_all.csv", "phantom_truth.jsonl"):
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes()
    assert len({(r.study_id, r.ref_id) for r in pd.read_csv(tmp_path / "a" / "mimic_pair_questions.csv").itertuples()}) == 10
