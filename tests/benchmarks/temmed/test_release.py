"""Readers of the released TemMed-Bench JSON files, on small files in exactly the released structure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from helpers.tiny_clip import tiny_clip

from medtemporal.benchmark import load
from medtemporal.benchmarks.temmed.release import read_official
from medtemporal.benchmarks.temmed.refs import LEARNED_EMBEDDER
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.retrieval import load_corpus


def _img(root: Path, patient: int, study: int) -> str:
    rel = f"train/patient{patient}/study{study}/view1_frontal"
    (root / "PNG" / rel).parent.mkdir(parents=True, exist_ok=True)
    Image.new("L", (8, 8), patient * 10 + study).save(root / "PNG" / f"{rel}.png")
    return f"{rel}.jpg"


def _release(tmp_path: Path) -> tuple[Path, Path]:
    root, files = tmp_path / "chexpert", tmp_path / "release"
    files.mkdir(parents=True)
    test = []
    for p in (1, 2, 3):
        test.append({
            "image_path": _img(root, p, 2).replace(".jpg", ".png"),
            "historical_image_path": _img(root, p, 1),
            "reference_images": [_img(root, 7, 3).replace(".jpg", ".png")],
            "hist_reference_images": [_img(root, 7, 2).replace(".jpg", ".png")],
            "VQA_Final": [{"VQA_question": f"Has the effusion of {p} improved?", "VQA_answer": "Yes."},
                          {"VQA_question": f"Has the edema of {p} worsened?", "VQA_answer": "No"}],
            "condition_changes_report": f"Stable effusion {p}.",
            "reference_condition_changes_reports": ["Improving edema."],
        })
    corpus = [{"image_path": _img(root, 7, 3), "historical_image_path": _img(root, 7, 2),
               "condition_changes_report": "Improving edema."},
              {"image_path": _img(root, 1, 4), "historical_image_path": _img(root, 1, 3),
               "condition_changes_report": "Stable effusion."}]  # patient1 is also in the test set
    pairs = [{"right_option": "B", "condition_change": "stable effusion", "option": {"A": 2, "B": 0, "C": 1},
              "Retrieval_TrainSet_now_idx": 1}]
    selected = [{"img_id": 2, "question_id": 1}, {"img_id": 0, "question_id": 0}]
    for name, data in [("TestSet_VQA_ReportGeneration_Final.json", test), ("TrainSet_KnowledgeCorpus_Final.json", corpus),
                       ("TestSet_ImagePairSelection.json", pairs), ("TestSet_SelectedVQA_2000.json", selected)]:
        (files / name).write_text(json.dumps(data, indent=4))
    return root, files


def test_released_files_become_items_with_their_references(tmp_path: Path) -> None:
    root, files = _release(tmp_path)
    official = read_official(files, root)
    vqa = [i for i in official.items if i.task == "vqa"]
    assert [(i.meta["instance"], i.meta["question_id"], i.answer) for i in vqa] == [(2, 1, "No"), (0, 0, "Yes")]
    assert vqa[0].images[0].path == "PNG/train/patient3/study1/view1_frontal.png"
    assert vqa[0].images[1].path == "PNG/train/patient3/study2/view1_frontal.png"
    reports = [i for i in official.items if i.task == "report"]
    assert [r.reference for r in reports] == ["Stable effusion 1.", "Stable effusion 2.", "Stable effusion 3."]
    ref = reports[0].meta["retrieval"]["official"][0]
    assert (ref["historical"], ref["current"], ref["report"]) == (
        "PNG/train/patient7/study2/view1_frontal.png", "PNG/train/patient7/study3/view1_frontal.png", "Improving edema.")
    (pair,) = [i for i in official.items if i.task == "image_pair"]
    assert pair.answer == "B" and pair.question == "stable effusion" and pair.meta["instance"] == 0
    assert [r.path.split("/")[2] for r in pair.images[::2]] == ["patient3", "patient1", "patient2"]
    assert pair.meta["retrieval"]["official"][0]["report"] == "Stable effusion."
    assert official.overlap == {"test_patients": 3, "corpus_patients": 2, "overlap_patients": 1,
                                "overlap_test_instances": 1}


def test_build_imports_the_release_and_reports_the_overlap(tmp_path: Path) -> None:
    root, files = _release(tmp_path)
    out = tmp_path / "bench"
    assert main(["build", "temmed", "--official", str(files), "--chexpert-plus", str(root), "--out", str(out),
                 "--embedder", "none"]) == 0
    bench = load(out)
    assert bench.manifest.config["split"]["overlap_patients"] == 1
    assert bench.manifest.config["embedder"] is None and bench.manifest.config["retrievers"] == ["official"]
    assert bench.manifest.licence == "credentialed"
    assert len(load_corpus(out / "corpus.jsonl")) == 2
    assert all(i.meta["retriever"] == "official" and "ablation" in i.meta for i in bench.items)
    assert set(bench.manifest.sources) == {p.name for p in files.glob("*.json")}


def test_real_data_defaults_to_the_learned_encoder_which_offline_fails_in_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, files = _release(tmp_path)
    out = tmp_path / "bench"
    assert main(["build", "temmed", "--official", str(files), "--chexpert-plus", str(root), "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"medtemporal: error: The retrieval encoder '{LEARNED_EMBEDDER.split(':', 1)[1]}' is not in the Hugging Face "
        "cache and HF_HUB_OFFLINE=1 forbids downloading it; run once online, or pass --embedder clip:/path/to/model, "
        "or --embedder pixel.\n")
    assert not out.exists()


@pytest.mark.slow
def test_an_import_with_a_learned_encoder_adds_every_retriever_of_table_5(tmp_path: Path) -> None:
    root, files = _release(tmp_path)
    clip = tiny_clip(tmp_path / "clip")
    out = tmp_path / "bench"
    assert main(["build", "temmed", "--official", str(files), "--chexpert-plus", str(root), "--out", str(out),
                 "--embedder", f"clip:{clip}"]) == 0
    bench = load(out)
    config = bench.manifest.config
    assert config["embedder"] == f"clip:{clip}" and config["retrievers"] == ["official", "image", "pairwise", "text"]
    assert config["embedder_identity"]["weights"] == [["model.safetensors", (clip / "model.safetensors").stat().st_size]]
    for item in bench.items:
        expected = {"official"} if item.task == "image_pair" else {"official", "image", "pairwise", "text"}
        assert set(item.meta["retrieval"]) == expected and item.meta["retriever"] == "official"
        assert all(len(refs) == 2 for name, refs in item.meta["retrieval"].items() if name != "official")


def test_without_the_selection_file_every_question_is_an_item(tmp_path: Path) -> None:
    root, files = _release(tmp_path)
    (files / "TestSet_SelectedVQA_2000.json").unlink()
    official = read_official(files, root)
    assert sum(i.task == "vqa" for i in official.items) == 6 and not official.selected_vqa


@pytest.mark.parametrize(("name", "edit", "message"), [
    ("TestSet_ImagePairSelection.json", lambda d: d[0].pop("Retrieval_TrainSet_now_idx"),
     "record 0 is not a TemMed-Bench image-pair question \\(key `Retrieval_TrainSet_now_idx` is missing\\)"),
    ("TestSet_ImagePairSelection.json", lambda d: d[0]["option"].update(A=9), "must map A, B and C"),
    ("TestSet_VQA_ReportGeneration_Final.json", lambda d: d[0]["VQA_Final"][0].update(VQA_answer="Maybe"), "neither Yes nor No"),
    ("TestSet_SelectedVQA_2000.json", lambda d: d[0].update(question_id=5), "points outside"),
    ("TestSet_SelectedVQA_2000.json", lambda d: d[0].update(img_id="x"), "img_id 'x' is not an integer index"),
    ("TestSet_ImagePairSelection.json", lambda d: d[0].update(Retrieval_TrainSet_now_idx=[0, 1]),
     r"Retrieval_TrainSet_now_idx \[0, 1\] is not an integer index"),
    ("TestSet_ImagePairSelection.json", lambda d: d[0].update(option=[2, 0, 1]), "key `option` must be a JSON object"),
    ("TestSet_VQA_ReportGeneration_Final.json", lambda d: d[1].update(VQA_Final=None),
     "record 1 is not a TemMed-Bench test instance \\(key `VQA_Final` must be a JSON list\\)"),
    ("TestSet_VQA_ReportGeneration_Final.json", lambda d: d[1]["VQA_Final"][0].pop("VQA_answer"),
     "record 1 has a VQA_Final entry that is not a question with its answer \\(key `VQA_answer` is missing\\)"),
    ("TrainSet_KnowledgeCorpus_Final.json", lambda d: d[0].update(image_path="train/patient99/study1/view1_frontal.jpg"),
     "No image for train/patient99"),
])
def test_malformed_release_files_fail_in_one_sentence(tmp_path: Path, name: str, edit, message: str) -> None:
    root, files = _release(tmp_path)
    data = json.loads((files / name).read_text())
    edit(data)
    (files / name).write_text(json.dumps(data))
    with pytest.raises(InvalidInputError, match=message):
        read_official(files, root)
