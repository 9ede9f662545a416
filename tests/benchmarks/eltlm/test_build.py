"""Building ELTLM from phantom MIMIC-CXR: selection, both question types, answers checked against the truth."""

import json
from collections import Counter

import pytest
from helpers.phantoms import make_cxr_phantoms

from medtemporal.benchmark import load
from medtemporal.benchmarks.eltlm.build import CHANGE, LENGTHS, report_text
from medtemporal.cli import main
from medtemporal.sources.mimic_cxr import read_report, report_path


@pytest.fixture(scope="module")
def phantoms(tmp_path_factory):
    return make_cxr_phantoms(tmp_path_factory.mktemp("eltlm"), patients=8, seed=3, image_size=64)


@pytest.fixture(scope="module")
def built(phantoms, tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "b"
    args = ["build", "eltlm", "--mimic-cxr-jpg", str(phantoms.mimic_cxr_jpg), "--qba", str(phantoms.qba),
            "--seed", "5", "--out", str(out)]
    assert main(args) == 0
    return load(out), args


def truth(phantoms):
    rows = [json.loads(line) for line in (phantoms.root / "phantom_truth.jsonl").read_text().splitlines()]
    return {r["study_id"]: r for r in rows}


def test_sequences_of_two_to_five_time_ordered_studies_with_both_types(built, phantoms):
    bench, _ = built
    assert bench.manifest.licence == "synthetic" and bench.manifest.seed == 5
    assert {i.task for i in bench.items} == {"perception", "reasoning"}
    by_study = truth(phantoms)
    for item in bench.items:
        ids = item.meta["study_ids"]
        assert len(ids) in LENGTHS and item.subtype == f"{len(ids)}_studies"
        times = [by_study[s]["timestamp"] for s in ids]
        assert times == sorted(times) and [by_study[s]["frontal"] for s in ids] == [r.path for r in item.images]
    seen = Counter(s for i in bench.items if i.task == "perception" for s in i.meta["study_ids"])
    assert max(seen.values()) == 1  # sequences do not overlap
    differs = [i.meta["study_ids"] != sorted(i.meta["study_ids"]) for i in bench.items]  # phantom ids: 8 digits
    assert [i.meta["date_order_differs"] for i in bench.items] == differs and 0 < sum(differs) < len(differs)
    assert bench.manifest.config["order"] == "date" and bench.manifest.config["date_order_differs"] == sum(differs)


def test_perception_references_quote_the_later_reports_change_sentences(built, phantoms):
    bench, _ = built
    for item in (i for i in bench.items if i.task == "perception"):
        ids = item.meta["study_ids"]
        for k in range(1, len(ids)):
            part = item.reference.split(f"Exam {k} to exam {k + 1}: ")[1].split(" Exam ")[0]
            path = phantoms.mimic_cxr_jpg / report_path(item.meta["patient_id"], ids[k])
            report = " ".join(read_report(path).values())
            if part != "no significant interval change.":
                assert CHANGE.search(part) and all(s.strip() in report for s in part.split(". ") if s.strip())


def test_reasoning_trends_agree_with_the_phantom_truth(built, phantoms):
    bench, _ = built
    by_study = truth(phantoms)
    checked = 0
    for item in (i for i in bench.items if i.task == "reasoning"):
        entity, ids = item.meta["entity"], item.meta["study_ids"]
        states = [by_study[s]["findings"].get(entity) for s in ids]
        if any(s is None or not (s["annotated"] and s["certain"] and s["quality_ok"]) for s in states):
            continue  # the reader rightly sees less than the truth here
        first, last = (s["severity_level"] if s["present"] else 0 for s in (states[0], states[-1]))
        expected = "Worsened" if last > first else "Improved" if last < first else "Stable"
        assert item.answer.startswith(expected + "."), (item.answer, states)
        checked += 1
    assert checked >= 5


def test_the_same_data_and_seed_give_byte_identical_items(built, tmp_path):
    bench, args = built
    out = tmp_path / "again"
    assert main([*args[:-1], str(out)]) == 0
    assert (out / "items.jsonl").read_bytes() == (bench.path / "items.jsonl").read_bytes()


def test_short_or_non_comparative_reports_break_a_sequence():
    from medtemporal.benchmarks.eltlm.build import chains
    from medtemporal.schema import Study, Timeline

    def study(i, text):
        return Study(patient_id="p1", study_id=f"s5000000{i}", report={"findings": text})

    long = "There is a new small right pleural effusion compared to the prior study today."
    plain = "Heart size is normal. Lungs are clear. There is no effusion or pneumothorax seen."
    tl = Timeline(patient_id="p1", source="t", licence="synthetic",
                  studies=(study(1, plain), study(2, long), study(3, "Too short."), study(4, plain), study(5, long),
                           study(6, plain), study(7, long)))
    from collections import Counter as C

    excluded = C()
    runs = chains(tl, excluded)
    assert [[s.study_id[-1] for s in r] for r in runs] == [["1", "2"], ["4", "5"], ["6", "7"]]
    assert excluded == {"study_report_too_short": 1, "study_no_comparison": 1}
    assert report_text(tl.studies[0]) == plain
