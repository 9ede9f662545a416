"""TemMed-Bench construction on phantoms: split, balance, labels against the truth, determinism."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from helpers.temmed import TEST_SIZE, build_args, temmed_bench, temmed_data  # noqa: F401 (fixtures)

from medtemporal.benchmark import load
from medtemporal.benchmarks.temmed.command import PAPER, default_test_size
from medtemporal.benchmarks.temmed.text import find_statements, pathology_patterns, sentences
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.retrieval import load_corpus
from medtemporal.scoring import extract

DIRECTION = {"unchanged": "unchanged", "worsened": "worsened", "improved": "improved", "resolved": "improved"}


def _truth(data: Path) -> dict[str, list[dict]]:
    """Study ("patientX/studyN") → its impression sentences with the annotated change."""
    out = {}
    for line in (data / "phantom_truth.jsonl").read_text().splitlines():
        rec = json.loads(line)
        out["/".join(rec["study"].split("/")[1:])] = rec["sentences"]
    return out


def test_default_split_is_the_papers_random_one_and_reports_its_patient_overlap(temmed_bench: Path) -> None:
    bench = load(temmed_bench)
    corpus = load_corpus(temmed_bench / "corpus.jsonl")
    test_patients = {i.meta["patient_id"] for i in bench.items}
    shared = test_patients & {e.patient_id for e in corpus}
    split = bench.manifest.config["split"]
    assert bench.manifest.config["split_rule"] == "random"
    assert split["overlap_patients"] == len(shared) > 0 and split["test_patients"] == len(test_patients)
    assert len({i.meta["instance"] for i in bench.items if i.task == "report"}) == TEST_SIZE
    assert bench.manifest.licence == "synthetic"


def test_patient_split_keeps_every_patient_on_one_side(temmed_data: Path, tmp_path: Path) -> None:
    assert main(build_args(temmed_data, tmp_path / "p", "--split", "patient", "--tasks", "report")) == 0
    bench = load(tmp_path / "p")
    test_patients = {i.meta["patient_id"] for i in bench.items}
    assert test_patients and not test_patients & {e.patient_id for e in load_corpus(tmp_path / "p/corpus.jsonl")}
    assert bench.manifest.config["split"]["overlap_patients"] == 0 and bench.manifest.config["split_rule"] == "patient"


def test_every_change_sentence_can_become_a_question(temmed_data: Path, tmp_path: Path) -> None:
    assert main(build_args(temmed_data, tmp_path / "v", "--tasks", "vqa,report", "--vqa-items", "100000")) == 0
    bench = load(tmp_path / "v")
    reports = [i for i in bench.items if i.task == "report"]
    asked = Counter((i.meta["instance"], i.meta["sentence"]) for i in bench.items if i.task == "vqa")
    every = Counter((r.meta["instance"], s) for r in reports for s in sentences(r.reference))
    excluded = bench.manifest.exclusions.get("vqa_sentence_without_direction", 0)
    unbalanced = bench.manifest.exclusions.get("vqa_left_out_for_balance", 0)
    assert sum(every.values()) - sum(asked.values()) == excluded + unbalanced
    assert excluded <= 0.02 * sum(every.values())
    # each named change is answered Yes exactly as often as No, about each finding named
    vqa = [i for i in bench.items if i.task == "vqa"]
    named = Counter((i.subtype, i.meta["finding"], i.answer) for i in vqa)
    assert all(named[(s, k, "Yes")] == named[(s, k, "No")] for s, k, _ in named)
    assert {i.subtype for i in vqa} >= {"vqa_improved", "vqa_unchanged", "vqa_worsened"}


def test_instances_pair_the_most_recent_prior_frontal_with_the_current_one(temmed_bench: Path, temmed_data: Path) -> None:
    truth = _truth(temmed_data)
    for item in load(temmed_bench).items:
        if item.task != "report":
            continue
        hist, cur = item.images
        assert (hist.role, hist.label, cur.role, cur.label) == ("historical", "Last visit image:", "current", "Current visit image:")
        patient, study = item.meta["study"].split("/")
        assert cur.path.endswith(f"{patient}/{study}/view1_frontal.png")
        assert hist.path.endswith(f"{patient}/study{int(study[5:]) - 1}/view1_frontal.png")
        assert all(s for s in sentences(item.reference))  # every sentence of the reference ...
        assert len(truth[item.meta["study"]]) == len(sentences(item.reference))  # ... is one truth sentence


def test_vqa_is_balanced_and_every_answer_follows_from_the_truth(temmed_bench: Path, temmed_data: Path) -> None:
    truth = _truth(temmed_data)
    vqa = [i for i in load(temmed_bench).items if i.task == "vqa"]
    counts = Counter(i.answer for i in vqa)
    assert len(vqa) == 60 and counts["Yes"] == counts["No"] == 30
    for item in vqa:
        (sent,) = [s for s in truth[item.meta["study"]] if s["text"].rstrip(".").lower() == item.meta["sentence"].lower()]
        direction = DIRECTION[sent["change"]]
        assert item.meta["direction"] == direction
        assert (item.answer == "Yes") == (item.meta["asked"] == direction)
        assert item.question.endswith("since the last visit?")
        assert extract(item, item.answer).answer == item.answer


def test_image_pair_has_one_matching_option_and_uniform_letters(temmed_bench: Path, temmed_data: Path) -> None:
    truth = _truth(temmed_data)
    bench = load(temmed_bench)
    reports = {i.meta["instance"]: i for i in bench.items if i.task == "report"}
    pairs = [i for i in bench.items if i.task == "image_pair"]
    assert len(pairs) >= 30
    letters = Counter(i.answer for i in pairs)
    assert max(letters.values()) - min(letters.values()) <= len({i.subtype for i in pairs})  # one per balanced subtype
    for subtype in {i.subtype for i in pairs}:  # uniform within each subtype too: no per-subtype answer prior
        within = Counter(i.answer for i in pairs if i.subtype == subtype)
        assert max(within.values()) - min(within[x] for x in "ABC") <= 1
    pattern = pathology_patterns()
    for item in pairs:
        assert [r.option for r in item.images] == ["A", "A", "B", "B", "C", "C"]
        assert item.images[0].label == "A:\nLast visit image:"
        options = item.meta["options"]
        assert options[item.answer] == item.meta["instance"]
        assert len(set(options.values())) == 3
        for letter, index in options.items():
            report = reports[index]
            found = [s for s in find_statements(report.reference) if s.pathology == item.meta["pathology"]]
            directions = {s.direction for s in found}
            if letter == item.answer:
                assert item.meta["direction"] in directions
            else:  # a distractor: same pathology, only other (known) directions, another patient
                assert found and item.meta["direction"] not in directions and None not in directions
                assert report.meta["patient_id"] != item.meta["patient_id"]
                study_sents = truth[report.meta["study"]]
                mentioned = [s for s in study_sents if pattern[item.meta["pathology"]].search(s["text"])]
                assert all(DIRECTION.get(s["change"]) != item.meta["direction"] for s in mentioned)


def test_retrieval_references_and_ablation_images_are_stored(temmed_bench: Path) -> None:
    bench = load(temmed_bench)
    corpus = load_corpus(temmed_bench / "corpus.jsonl")
    for item in bench.items:
        refs = item.meta["retrieval"]
        if item.task == "image_pair":
            assert list(refs) == ["tfidf"] and item.meta["retriever"] == "tfidf"
        else:
            assert set(refs) == {"pairwise", "image"} and item.meta["retriever"] == "pairwise"
            scores = [r["score"] for r in refs["pairwise"]]
            assert scores == sorted(scores, reverse=True) and len(scores) == 5
        for r in refs[item.meta["retriever"]]:
            entry = corpus[r["id"]]
            assert (entry.historical, entry.current, entry.report) == (r["historical"], r["current"], r["report"])
        assert set(item.meta["ablation"]) == {"random_historical", "random_current"}
    assert list((temmed_bench / "embeddings").glob("*.npy"))


def test_same_data_and_seed_give_byte_identical_items(temmed_bench: Path, temmed_data: Path, tmp_path: Path) -> None:
    assert main(build_args(temmed_data, tmp_path / "again")) == 0
    assert (tmp_path / "again/items.jsonl").read_bytes() == (temmed_bench / "items.jsonl").read_bytes()
    assert (tmp_path / "again/corpus.jsonl").read_bytes() == (temmed_bench / "corpus.jsonl").read_bytes()
    assert main(build_args(temmed_data, tmp_path / "other", "--seed", "1")) == 0
    assert (tmp_path / "other/items.jsonl").read_bytes() != (temmed_bench / "items.jsonl").read_bytes()


def test_task_subsets_and_caps(temmed_data: Path, tmp_path: Path) -> None:
    assert main(build_args(temmed_data, tmp_path / "b", "--tasks", "report,image_pair", "--pair-items", "9")) == 0
    counts = Counter(i.task for i in load(tmp_path / "b").items)
    assert counts == {"report": TEST_SIZE, "image_pair": 9}


def test_without_test_size_small_data_gets_a_scaled_test_set_with_a_note(
        temmed_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["build", "temmed", "--chexpert-plus", str(temmed_data), "--out", str(tmp_path / "b"), "--vqa-items", "20"]
    assert main(args) == 0
    config = load(tmp_path / "b").manifest.config
    instances = config["test_instances"] + config["corpus_instances"]
    assert instances < 4 * PAPER["test_size"]
    assert (config["test_instances"], config["test_size_from"]) == (instances // 4, "scaled")
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("temmed: ")]
    assert len(notes) == 1 and f"using {instances // 4} (1 in 4)" in notes[0] and "--test-size N" in notes[0]
    assert default_test_size(4000) == (1000, None) and default_test_size(10**5) == (1000, None)
    assert default_test_size(3999)[0] == 999 and default_test_size(2)[0] == 1


def test_an_explicit_test_size_is_kept(temmed_bench: Path) -> None:
    config = load(temmed_bench).manifest.config
    assert (config["test_instances"], config["test_size_from"]) == (TEST_SIZE, "--test-size")


@pytest.mark.parametrize(("extra", "message"), [
    (["--test-size", "100000"], "does not leave a corpus"),
    (["--tasks", "vqa,essay"], "unknown tasks"),
    (["--pathology-keywords", " , "], "is empty"),
    (["--embedder", "pixel:x"], "integer"),
])
def test_bad_options_fail_in_one_sentence(temmed_data: Path, tmp_path: Path, extra: list[str], message: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(build_args(temmed_data, tmp_path / "x", *extra)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not (tmp_path / "x").exists()


def test_missing_data_folder(tmp_path: Path) -> None:
    import argparse

    from medtemporal.benchmarks.temmed.command import build

    args = argparse.Namespace(chexpert_plus=tmp_path / "nope", tasks="vqa", official=None)
    with pytest.raises(InvalidInputError, match="is not a folder"):
        build(args)


def test_vqa_questions_from_a_model_are_cached_and_never_decide_the_answer(temmed_data: Path, temmed_bench: Path,
                                                                           tmp_path: Path) -> None:
    from helpers.fake_openai import FakeOpenAI

    cache = tmp_path / "cache.sqlite"
    with FakeOpenAI.start() as server:  # it answers a letter, not a question: every draft falls back
        args = build_args(temmed_data, tmp_path / "m", "--llm", server.uri(), "--llm-cache", str(cache))
        assert main(args) == 0
        counts = server.stats()["counts"]
        calls = sum(counts.values())
        assert 50 <= calls <= 60 and set(counts.values()) == {1}  # one call per distinct prompt (drafts may repeat one)
        assert main([*args[:5], str(tmp_path / "m2"), *args[6:]]) == 0
        assert sum(server.stats()["counts"].values()) == calls  # the second build is served from the cache
    built = [i for i in load(tmp_path / "m").items if i.task == "vqa"]
    plain = [i for i in load(temmed_bench).items if i.task == "vqa"]
    assert [i.answer for i in built] == [i.answer for i in plain]
    assert [i.question for i in built] == [i.question for i in plain]
    assert {i.meta["question_source"] for i in built} == {"template (model output unusable)"}
    assert load(tmp_path / "m").manifest.config["vqa_question_sources"] == {"template (model output unusable)": 60}
