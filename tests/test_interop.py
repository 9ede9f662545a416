"""Exports loaded by their consumers (Hugging Face datasets, a VLMEvalKit TSV reader, lmms-eval's YAML and hooks)
and predictions imported back from VLMEvalKit result files and lmms-eval sample logs."""

from __future__ import annotations

import ast
import base64
import importlib.util
import io
import json

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers.tiny import make_tiny_benchmark
from PIL import Image

from medtemporal.benchmark import Manifest, load, save
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.export import export
from medtemporal.schema import ImageRef, Item
from medtemporal.scoring import read_scores

datasets = pytest.importorskip("datasets")


@pytest.fixture()
def bench(tmp_path):
    return load(make_tiny_benchmark(tmp_path, n=4))


@pytest.mark.parametrize("embed", [False, True])
def test_parquet_loads_in_datasets_with_image_sequences(bench, tmp_path, embed):
    out = tmp_path / "tiny.parquet"
    export(bench, "parquet", out, embed_images=embed)
    if embed:  # the file travels alone: the image folder is gone
        (tmp_path / "data").rename(tmp_path / "moved")
    ds = datasets.load_dataset("parquet", data_files={"test": str(out)}, split="test")
    assert isinstance(ds.features["images"].feature, datasets.Image)
    row = ds[0]
    assert len(row["images"]) == 5 and all(im.size == (16, 16) for im in row["images"])
    assert row["visit_labels"] == ["T1", "T2", "T3", "T4", "T5"] and row["patient_id"] == "p0"
    source = tmp_path / ("moved" if embed else "data") / bench.items[0].images[2].path
    assert (np.asarray(row["images"][2]) == np.asarray(Image.open(source))).all()  # T3 is the third image
    assert ds["id"] == [item.id for item in bench.items]


def _mixed_bench(tmp_path):
    """A TemMed-like benchmark: choice, yes/no and open items over two images each."""
    (tmp_path / "img").mkdir()
    for name in ("h.png", "c.png"):
        Image.new("L", (8, 8), 100).save(tmp_path / "img" / name)
    refs = [ImageRef(path="img/h.png", role="historical", label="Last visit image"),
            ImageRef(path="img/c.png", role="current", label="Current visit image")]
    common = dict(benchmark="temmed", subtype="s", images=refs, meta={"patient_id": "p1"})
    items = [
        Item.create(task="vqa", question="Is the effusion worse?", answer_type="yesno", answer="Yes", **common),
        Item.create(task="report", question="Write the report.", answer_type="open", answer="Stable.", **common),
        Item.create(task="image_pair", question="Which pair?", options={"A": "x", "B": "y"}, answer_type="choice",
                    answer="B", **common),
    ]
    manifest = Manifest(benchmark="temmed", version="1", licence="synthetic", image_root=str(tmp_path))
    return load(save(tmp_path / "bench", items, manifest))


def test_vlmevalkit_writes_one_tsv_per_layout_with_visit_framing_and_base64(tmp_path):
    bench = _mixed_bench(tmp_path)
    assert export(bench, "vlmevalkit", tmp_path / "temmed.tsv", embed_images=True) == 3
    mcq, yorn, vqa = (pd.read_csv(tmp_path / f"temmed_{k}.tsv", sep="\t", keep_default_na=False)
                      for k in ("mcq", "yorn", "vqa"))
    assert list(mcq.columns[:6]) == ["index", "question", "A", "B", "answer", "image"] and mcq.loc[0, "answer"] == "B"
    assert "A" not in yorn.columns and yorn.loc[0, "answer"] == "Yes" and vqa.loc[0, "answer"] == "Stable."
    assert yorn.loc[0, "hint"] == ("The 2 images are shown in visit order: image 1 is Last visit image, "
                                   "image 2 is Current visit image.")
    images = ast.literal_eval(yorn.loc[0, "image"])
    decoded = Image.open(io.BytesIO(base64.b64decode(images[1])))
    assert decoded.size == (8, 8) and decoded.getpixel((0, 0)) == 100


class _FunctionLoader(yaml.SafeLoader):
    """Reads lmms-eval's ``!function utils.name`` tags as the function from the folder's utils.py."""


def _load_task(folder):
    spec = importlib.util.spec_from_file_location("lmms_task_utils", folder / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    _FunctionLoader.add_constructor("!function", lambda loader, node: getattr(utils, loader.construct_scalar(node)
                                                                             .split(".", 1)[1]))
    (path,) = folder.glob("*.yaml")
    return yaml.load(path.read_text(), Loader=_FunctionLoader)


def test_lmms_eval_task_folder_loads_and_its_hooks_work(bench, tmp_path):
    folder = tmp_path / "lmms"
    assert main(["export", str(bench.path), "--format", "lmms-eval", "--out", str(folder)]) == 0
    task = _load_task(folder)
    assert task["task"] == "medtemporal_tiny" and task["output_type"] == "generate_until"
    assert task["metric_list"] == [{"metric": "accuracy", "aggregation": "mean", "higher_is_better": True}]
    docs = datasets.load_dataset(task["dataset_path"], **task["dataset_kwargs"], split=task["test_split"])
    doc = docs[1]
    visuals = task["doc_to_visual"](doc)
    assert len(visuals) == 5 and all(v.mode == "RGB" for v in visuals)
    text = task["doc_to_text"](doc, task["lmms_eval_specific_kwargs"]["default"])
    assert text.startswith("The 5 images are shown in visit order: image 1 is T1, image 2 is T2")
    assert bench.items[1].question in text and "E. No appearance" in text
    assert task["doc_to_target"](doc) == "B"
    assert task["process_results"](doc, ["The answer is B."]) == {"accuracy": 1.0}
    assert task["process_results"](doc, ["The answer is C."]) == {"accuracy": 0.0}


def test_lmms_eval_refuses_open_items(tmp_path):
    with pytest.raises(InvalidInputError, match="not choice or yes/no"):
        export(_mixed_bench(tmp_path), "lmms-eval", tmp_path / "lmms")


def test_import_vlmevalkit_results_scores_with_our_extraction(bench, tmp_path, capsys):
    export(bench, "vlmevalkit", tmp_path / "tiny.tsv")
    results = pd.read_csv(tmp_path / "tiny.tsv", sep="\t", keep_default_na=False)
    results["prediction"] = ["The answer is A.", "The answer is B.", "I cannot tell.", "The answer is A."]
    results.to_csv(tmp_path / "MyVLM_tiny.tsv", sep="\t", index=False)
    out = tmp_path / "imported"
    assert main(["import-predictions", str(bench.path), str(tmp_path / "MyVLM_tiny.tsv"), "--from", "vlmevalkit",
                 "--out", str(out)]) == 0
    assert "imported 4 predictions" in capsys.readouterr().out
    scores = read_scores(out)
    overall = scores.score("overall", "accuracy")
    assert overall.value == 0.5 and overall.invalid == 1 and overall.n == 4  # answers A, B, C, D
    assert scores.run["model"] == "imported:vlmevalkit:MyVLM_tiny"
    lines = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    assert [p["answer"] for p in lines] == ["A", "B", None, "A"]
    assert json.loads((out / "config.json").read_text())["imported_from"]["tool"] == "vlmevalkit"
    assert main(["import-predictions", str(bench.path), str(tmp_path / "MyVLM_tiny.tsv"), "--from", "vlmevalkit",
                 "--out", str(out)]) == 2  # never over an existing run


def test_import_lmms_eval_sample_log_by_doc_id(bench, tmp_path):
    log = tmp_path / "20261123_samples_medtemporal_tiny.jsonl"
    rows = [{"doc_id": n, "target": item.answer, "resps": [["raw"]], "filtered_resps": [f"The answer is {a}."]}
            for n, (item, a) in enumerate(zip(bench.items, "ABCE"))]
    log.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    from medtemporal.interop.imports import import_predictions

    summary = import_predictions(bench, log, tmp_path / "run", tool="lmms-eval", model="qwen")
    assert summary.imported == 4 and summary.unknown == 0
    assert read_scores(tmp_path / "run").score("overall", "accuracy").value == 0.75
    with pytest.raises(InvalidInputError, match="No row of"):
        log.write_text(json.dumps({"doc_id": 99, "filtered_resps": ["A"]}) + "\n")
        import_predictions(bench, log, tmp_path / "run2", tool="lmms-eval")
