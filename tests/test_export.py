"""`medtemporal export`: Parquet, VLMEvalKit TSV, the family layouts (MI-CXR, 3D-RAD) and the refusals."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from helpers.rad3d import SHAPE, build_args

from medtemporal.benchmark import Manifest, load, save
from medtemporal.benchmarks.mi_cxr.release import read_official
from medtemporal.benchmarks.rad3d.command import build as build_rad3d
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.export import export
from medtemporal.interop.parquet import item_from_row
from medtemporal.phantoms.ct_rate import write_ct_rate
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
    pytest.importorskip("datasets")
    out = tmp_path / "x.parquet"
    bench = load(bench_dir)
    done = export(bench, "parquet", out)
    assert done.items == 3 and done.paths == (out,)
    table = pq.read_table(out)
    assert table.column_names == ["id", "benchmark", "task", "subtype", "patient_id", "question", "options",
                                  "answer_type", "answer", "reference", "images", "visit_labels", "visits",
                                  "timestamps", "image_refs", "image_paths", "sent_images", "meta"]  # no volumes
    hf = json.loads(table.schema.metadata[b"huggingface"])["info"]["features"]
    assert hf["images"] == {"feature": {"_type": "Image"}, "_type": "List"}  # datasets.Features, not legacy Sequence
    rows = table.to_pylist()
    for row, item in zip(rows, bench.items):
        assert row["id"] == item.id and row["answer"] == item.answer and row["patient_id"] == item.meta["patient_id"]
        assert {o["label"]: o["text"] for o in row["options"]} == item.options
        assert [ImageRef(**ref) for ref in row["image_refs"]] == list(item.images)
        assert row["images"] == [{"bytes": None, "path": str(bench.image_root / r.path)} for r in item.images]
        assert row["visit_labels"] == ["T1", "T2", "T3", "T4", "T5"] and row["visits"] == [1, 2, 3, 4, 5]
        assert row["image_paths"] == [r.path for r in item.images]
        assert row["sent_images"] == [0, 1, 2, 3, 4]  # the default protocol sends every visit, in order
        assert json.loads(row["meta"]) == item.meta
        assert item_from_row(row) == item
    manifest = Manifest.model_validate_json(table.schema.metadata[b"medtemporal.manifest"])
    assert manifest == bench.manifest
    assert table.schema.metadata[b"medtemporal.protocol"] == b"direct"


def test_vlmevalkit_mcq_carries_our_instruction_and_the_framing(bench_dir, tmp_path):
    out = tmp_path / "x.tsv"
    bench = load(bench_dir)
    assert export(bench, "vlmevalkit", out, allow_remote_data=True).paths == (out,)  # no phantom: credentialed
    df = pd.read_csv(out, sep="\t", keep_default_na=False)
    assert list(df.columns) == ["index", "question", "A", "B", "C", "D", "E", "answer", "image_path", "hint",
                                "category", "l2-category", "split", "id", "sent_images"]
    assert df.loc[0, "hint"] == ("The 5 images are shown in order: image 1 is T1, image 2 is T2, image 3 is T3, "
                                 "image 4 is T4, image 5 is T5.")
    assert df.loc[0, "question"] == (
        "The images above are 5 chest X-rays of the same patient, labelled T1 to T5 in chronological order.\n\n"
        "During which interval does pneumothorax 1 new appearance occur?\n\n"
        "Answer with the letter of the single correct option.")  # mcq_direct without its options (VLMEvalKit lists them)
    assert df["index"].tolist() == [0, 1, 2] and df["answer"].tolist() == ["B", "E", "A"]
    assert df["category"].tolist() == ["TEL", "TEL", "GTS"]
    paths = ast.literal_eval(df.loc[0, "image_path"])
    assert paths == [str(bench.image_root / r.path) for r in bench.items[0].images]
    assert df.loc[1, "E"] == "There is no new appearance of pneumothorax"


def test_micxr_export_reads_back(bench_dir, tmp_path):
    out = tmp_path / "micxr.jsonl"
    export(load(bench_dir), "micxr", out)
    again, _ = read_official(out)
    assert [(i.question, i.options, i.answer, i.subtype) for i in again] == [
        (i.question, i.options, i.answer, i.subtype) for i in load(bench_dir).items
    ]


def test_3drad_export_of_a_phantom_build_reads_back_as_the_same_items(tmp_path):
    write_ct_rate(tmp_path / "ct", patients=3, seed=0, shape=SHAPE, volumes=False)
    items, manifest = build_rad3d(build_args(tmp_path / "ct", tmp_path / "bench", no_volume_check=True))
    bench = load(save(tmp_path / "bench", items, manifest))
    assert main(["export", str(bench.path), "--format", "3drad", "--out", str(tmp_path / "3DRAD" / "test")]) == 0
    assert len(list((tmp_path / "3DRAD" / "test").rglob("*.csv"))) == 41  # every released CSV, empty ones too
    again, _ = build_rad3d(build_args(tmp_path / "ct", tmp_path / "again", official=tmp_path / "3DRAD",
                                      no_volume_check=True))

    def key(item: Item) -> tuple:
        return item.task, item.subtype, item.images[0].path, item.question, item.options, item.answer

    assert sorted(map(key, again)) == sorted(map(key, items))


def test_cli_export_refuses_to_overwrite_and_names_bad_input(bench_dir, tmp_path, capsys):
    pytest.importorskip("datasets")
    out = tmp_path / "x.parquet"
    assert main(["export", str(bench_dir), "--format", "parquet", "--out", str(out)]) == 0
    assert capsys.readouterr().err.strip() == f"Wrote 3 items to {out} (parquet)."
    assert main(["export", str(bench_dir), "--format", "parquet", "--out", str(out)]) == 2
    assert "pass --overwrite" in capsys.readouterr().err
    assert main(["export", str(bench_dir), "--format", "parquet", "--out", str(out), "--overwrite"]) == 0
    capsys.readouterr()
    assert main(["export", str(tmp_path / "nothing"), "--format", "micxr", "--out", str(tmp_path / "y")]) == 2
    err = capsys.readouterr().err.strip()
    assert "is not a benchmark folder" in err and err.count("\n") == 0


def _mixed(tmp_path) -> Item:
    """A TemMed-like benchmark with choice, yes/no and open items (three VLMEvalKit layouts)."""
    from PIL import Image

    (tmp_path / "img").mkdir()
    for name in ("h.png", "c.png"):
        Image.new("L", (8, 8), 100).save(tmp_path / "img" / name)
    refs = [ImageRef(path="img/h.png", role="historical", label="Last visit image:"),
            ImageRef(path="img/c.png", role="current", label="Current visit image:")]
    common = dict(benchmark="temmed", subtype="s", images=refs, meta={"patient_id": "p1"})
    items = [
        Item.create(task="vqa", question="Is the effusion worse?", answer_type="yesno", answer="Yes", **common),
        Item.create(task="report", question="Write the report.", answer_type="open", answer="Stable.",
                    reference="Stable.", **common),
        Item.create(task="image_pair", question="decreased effusion", options={"A": "image pair A", "B": "image pair B"},
                    answer_type="choice", answer="B", **common),
    ]
    manifest = Manifest(benchmark="temmed", version="1", licence="credentialed", image_root=str(tmp_path))
    return save(tmp_path / "bench", items, manifest)


def test_vlmevalkit_names_the_files_it_writes_and_never_overwrites_them_unasked(tmp_path, capsys):
    bench = _mixed(tmp_path)
    out = tmp_path / "temmed.tsv"
    assert main(["export", str(bench), "--format", "vlmevalkit", "--out", str(out), "--allow-remote-data"]) == 0
    files = [tmp_path / f"temmed_{k}.tsv" for k in ("yorn", "vqa", "mcq")]
    assert capsys.readouterr().err.strip() == f"Wrote 3 items to {', '.join(map(str, files))} (vlmevalkit)."
    assert not out.exists() and all(f.is_file() for f in files)
    files[2].write_text("my own notes\n")
    assert main(["export", str(bench), "--format", "vlmevalkit", "--out", str(out), "--allow-remote-data"]) == 2
    err = capsys.readouterr().err
    assert str(files[2]) in err and "pass --overwrite" in err and err.count("\n") == 1
    assert files[2].read_text() == "my own notes\n"  # nothing replaced
    assert main(["export", str(bench), "--format", "vlmevalkit", "--out", str(out), "--overwrite",
                 "--allow-remote-data"]) == 0
    assert files[2].read_text().startswith("index\tquestion\tA\tB\tanswer")


def test_hf_folder_is_refused_for_credentialed_data(tmp_path, capsys):
    bench = _mixed(tmp_path)
    assert main(["export", str(bench), "--format", "hf", "--out", str(tmp_path / "hub")]) == 2
    err = capsys.readouterr().err
    assert "credentialed data, whose data-use agreement forbids redistribution" in err and err.count("\n") == 1
    assert not (tmp_path / "hub").exists() and not (tmp_path / "hub.partial").exists()


def test_unknown_format_and_embed_for_a_family_layout_are_one_sentence(bench_dir, tmp_path):
    with pytest.raises(InvalidInputError, match="Unknown export format 'xlsx'.*use one of parquet, hf"):
        export(load(bench_dir), "xlsx", tmp_path / "x")
    with pytest.raises(InvalidInputError, match="--embed-images applies to"):
        export(load(bench_dir), "micxr", tmp_path / "x.jsonl", embed_images=True)


def test_interop_never_imports_export():
    """export → interop only (issue 20 §7): the writers and readers of other tools' formats stand alone."""
    import medtemporal.interop

    for module in Path(medtemporal.interop.__file__).parent.glob("*.py"):
        tree = ast.parse(module.read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
        assert not any(n == "medtemporal.export" or n.startswith("medtemporal.export.") for n in names), module.name
