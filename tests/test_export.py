"""`medtemporal export`: Parquet, VLMEvalKit TSV and MI-CXR layouts of one benchmark folder."""

from __future__ import annotations

import ast
import json

import pandas as pd
import pyarrow.parquet as pq
import pytest

from medtemporal.benchmark import Manifest, load, save
from medtemporal.benchmarks.mi_cxr.official import read_official
from medtemporal.cli import main
from medtemporal.export import export, item_from_row
from medtemporal.schema import ImageRef, Item


def _item(n: int, answer: str = "B", **extra) -> Item:
    images = [
        ImageRef(path=f"files/p10/p1000000{n}/s5{n}00000{v}/img{v}.jpg", visit=v, role="visit", label=f"T{v}",
                 timestamp=f"2150-01-0{v}T00:00:00")
        for v in range(1, 6)
    ]
    fields = dict(
        benchmark="mi-cxr", task="TEL", subtype="single_emergence", images=images,
        question=f"During which interval does pneumothorax {n} new appearance occur?",
        options={"A": "T1 \u2192 T2", "B": "T2 \u2192 T3", "C": "T3 \u2192 T4", "D": "T4 \u2192 T5",
                 "E": "There is no new appearance of pneumothorax"},
        answer_type="choice", answer=answer, meta={"patient_id": f"p1000000{n}", "window": n},
    )
    return Item.create(**{**fields, **extra})


@pytest.fixture()
def bench_dir(tmp_path):
    items = [_item(1), _item(2, "E"), _item(3, "A", task="GTS", subtype="single_entity_interval_summary")]
    manifest = Manifest(benchmark="mi-cxr", version="1", licence="synthetic", image_root=str(tmp_path / "root"))
    return save(tmp_path / "bench", items, manifest)


def test_parquet_holds_every_field_and_no_pixels(bench_dir, tmp_path):
    out = tmp_path / "x.parquet"
    bench = load(bench_dir)
    assert export(bench, "parquet", out) == 3
    table = pq.read_table(out)
    assert table.column_names == ["id", "benchmark", "task", "subtype", "patient_id", "question", "options",
                                  "answer_type", "answer", "reference", "images", "visit_labels", "visits",
                                  "timestamps", "image_refs", "image_paths", "meta"]
    assert not any("map" in str(f.type) for f in table.schema)
    rows = table.to_pylist()
    for row, item in zip(rows, bench.items):
        assert row["id"] == item.id and row["answer"] == item.answer and row["patient_id"] == item.meta["patient_id"]
        assert {o["label"]: o["text"] for o in row["options"]} == item.options
        assert [ImageRef(**ref) for ref in row["image_refs"]] == list(item.images)
        assert row["images"] == [{"bytes": None, "path": str(bench.image_root / r.path)} for r in item.images]
        assert row["visit_labels"] == ["T1", "T2", "T3", "T4", "T5"] and row["visits"] == [1, 2, 3, 4, 5]
        assert row["image_paths"] == [r.path for r in item.images]
        assert json.loads(row["meta"]) == item.meta
        assert item_from_row(row) == item
    manifest = Manifest.model_validate_json(table.schema.metadata[b"medtemporal.manifest"])
    assert manifest == bench.manifest


def test_vlmevalkit_tsv_layout(bench_dir, tmp_path):
    out = tmp_path / "x.tsv"
    bench = load(bench_dir)
    export(bench, "vlmevalkit", out)
    df = pd.read_csv(out, sep="\t", keep_default_na=False)
    assert list(df.columns) == ["index", "question", "A", "B", "C", "D", "E", "answer", "image_path", "hint",
                                "category", "l2-category", "split", "id"]
    assert df.loc[0, "hint"].startswith("The 5 images are shown in visit order: image 1 is T1 (2150-01-01), image 2 is T2")
    assert df["index"].tolist() == [0, 1, 2] and df["answer"].tolist() == ["B", "E", "A"]
    assert df["category"].tolist() == ["TEL", "TEL", "GTS"]
    paths = ast.literal_eval(df.loc[0, "image_path"])
    assert paths == [str(bench.image_root / r.path) for r in bench.items[0].images]
    assert df.loc[1, "E"] == "There is no new appearance of pneumothorax"


def test_micxr_export_reads_back(bench_dir, tmp_path):
    out = tmp_path / "micxr.jsonl"
    export(load(bench_dir), "micxr", out)
    again = read_official(out)
    assert [(i.question, i.options, i.answer, i.subtype) for i in again] == [
        (i.question, i.options, i.answer, i.subtype) for i in load(bench_dir).items
    ]


def test_cli_export_refuses_to_overwrite_and_names_bad_input(bench_dir, tmp_path, capsys):
    out = tmp_path / "x.parquet"
    assert main(["export", str(bench_dir), "--format", "parquet", "--out", str(out)]) == 0
    assert main(["export", str(bench_dir), "--format", "parquet", "--out", str(out)]) == 2
    assert "pass --overwrite" in capsys.readouterr().err
    assert main(["export", str(bench_dir), "--format", "parquet", "--out", str(out), "--overwrite"]) == 0
    capsys.readouterr()
    assert main(["export", str(tmp_path / "nothing"), "--format", "micxr", "--out", str(tmp_path / "y")]) == 2
    err = capsys.readouterr().err.strip()
    assert "is not a benchmark folder" in err and err.count("\n") == 0
