"""The released MI-CXR file format: reading, writing, importing as a benchmark, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medtemporal.benchmark import load
from medtemporal.benchmarks.mi_cxr.pipeline import MiCxrConfig, build_items
from medtemporal.benchmarks.mi_cxr.release import read_official, write_official
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError

HEAD = Path(__file__).parents[3] / "../shared/official/mi-cxr/micxr_test.head.jsonl"
needs_head = pytest.mark.skipif(not HEAD.is_file(), reason="the released MI-CXR head file is not available")


def fake_root(tmp_path: Path, items) -> Path:
    """A MIMIC-CXR-JPG-shaped folder with an empty file at every image path the items name."""
    root = tmp_path / "mimic-cxr-jpg"
    (root / "files").mkdir(parents=True)
    for item in items:
        for ref in item.images:
            (root / ref.path).parent.mkdir(parents=True, exist_ok=True)
            (root / ref.path).touch()
    return root


@needs_head
def test_head_file_round_trips_byte_for_byte(tmp_path):
    items, _ = read_official(HEAD)
    assert [i.subtype for i in items] == [json.loads(line)["qtype"] for line in HEAD.read_text().splitlines()]
    gts = items[0]
    assert gts.task == "GTS" and gts.answer == "E" and list(gts.options) == list("ABCDE")
    assert [r.label for r in gts.images] == ["T1", "T2", "T3", "T4", "T5"]
    assert gts.meta["patient_id"] == "p14993854" and gts.meta["study_ids"][0] == "s52186348"
    assert items[2].options["A"] == "T1 \u2192 T2" and items[2].answer == "B"
    out = tmp_path / "again.jsonl"
    assert write_official(items, out) == len(items)
    assert out.read_bytes() == HEAD.read_bytes()


@needs_head
def test_head_file_imports_as_a_benchmark_and_exports_back(tmp_path, capsys):
    root = fake_root(tmp_path, read_official(HEAD)[0])
    bench_dir = tmp_path / "bench"
    assert main(["build", "mi-cxr", "--official", str(HEAD), "--mimic-cxr-jpg", str(root), "--out", str(bench_dir)]) == 0
    bench = load(bench_dir)
    assert len(bench.items) == 4 and bench.manifest.licence == "credentialed"
    assert bench.image_root == root.resolve() and HEAD.name in bench.manifest.sources
    out = tmp_path / "exported.jsonl"
    assert main(["export", str(bench_dir), "--format", "micxr", "--out", str(out)]) == 0
    assert out.read_bytes() == HEAD.read_bytes()


def test_built_items_round_trip_through_the_format(timelines, tmp_path):
    items, _ = build_items(timelines[:60], MiCxrConfig(max_items=120, icr_variant=True))
    path = tmp_path / "micxr.jsonl"
    write_official(items, path)
    again, _ = read_official(path)
    assert [(i.task, i.subtype, i.question, i.options, i.answer) for i in again] == [
        (i.task, i.subtype, i.question, i.options, i.answer) for i in items
    ]
    assert [[r.path for r in i.images] for i in again] == [[r.path for r in i.images] for i in items]
    assert [i.meta["q_id"] for i in again] == list(range(len(items)))


def test_wrong_image_root_gives_one_sentence(tmp_path, capsys, timelines):
    items, _ = build_items(timelines[:30], MiCxrConfig(max_items=40))
    official = tmp_path / "q.jsonl"
    write_official(items, official)
    not_root = tmp_path / "elsewhere"
    not_root.mkdir()
    code = main(["build", "mi-cxr", "--official", str(official), "--mimic-cxr-jpg", str(not_root), "--out", str(tmp_path / "b")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "no files/ folder" in err and err.count("\n") == 0
    (not_root / "files").mkdir()
    with pytest.raises(InvalidInputError, match="None of the .* images"):
        from medtemporal.benchmarks.mi_cxr.command import import_official

        import_official(official, not_root)
    assert not (tmp_path / "b").exists()


def test_bad_record_names_line_and_key(tmp_path):
    path = tmp_path / "bad.jsonl"
    good = {"q_id": 0, "group_type": "TEL", "qtype": "single_emergence",
            "images": {f"T{i}": f"files/p10/p1/s{i}/a.jpg" for i in range(1, 6)},
            "question": "Q?", "choices": {x: x for x in "ABCDE"}, "answer": "A"}
    bad = {k: v for k, v in good.items() if k != "answer"}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(InvalidInputError, match=r"line 2 .*`answer` is missing"):
        read_official(path)
    path.write_text(json.dumps({**good, "answer": "F"}) + "\n")
    with pytest.raises(InvalidInputError, match="line 1 .*not one of the choices"):
        read_official(path)
    with pytest.raises(InvalidInputError, match="does not exist"):
        read_official(tmp_path / "missing.jsonl")


@needs_head
def test_the_head_file_imports_without_images_when_verification_is_off(tmp_path):
    out = tmp_path / "bench"
    assert main(["build", "mi-cxr", "--official", str(HEAD), "--mimic-cxr-jpg", str(tmp_path / "absent"),
                 "--no-verify-images", "--out", str(out)]) == 0
    assert len(load(out).items) == 4
    assert main(["export", str(out), "--format", "micxr", "--out", str(tmp_path / "back.jsonl")]) == 0
    assert (tmp_path / "back.jsonl").read_bytes() == HEAD.read_bytes()


def test_repeated_lines_are_kept_once_and_counted_and_a_shared_q_id_is_refused(tmp_path, capsys):
    """Issue 32 §3: duplicated rows in ``build mi-cxr --official`` gave 20 items with 10 ids, counted twice."""
    records = [{"q_id": k, "group_type": "TEL", "qtype": "single_emergence",
                "images": {f"T{i}": f"files/p10/p1000000{k}/s{k}{i}/a.jpg" for i in range(1, 6)},
                "question": f"Q{k}?", "choices": {x: x for x in "ABCDE"}, "answer": "A"} for k in range(10)]
    path = tmp_path / "micxr_test.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records + records))
    items, repeated = read_official(path)
    assert len(items) == 10 and repeated == 10
    root = fake_root(tmp_path, items)
    assert main(["build", "mi-cxr", "--official", str(path), "--mimic-cxr-jpg", str(root), "--out",
                 str(tmp_path / "bench")]) == 0
    bench = load(tmp_path / "bench")
    assert len(bench.items) == len({i.id for i in bench.items}) == 10
    assert bench.manifest.exclusions["repeated_line"] == 10 and "repeats 10 line(s)" in capsys.readouterr().err
    path.write_text("".join(json.dumps(r) + "\n" for r in [*records, {**records[3], "answer": "B"}]))
    with pytest.raises(InvalidInputError, match="line 11 gives q_id 3 to another record than .*line 4"):
        read_official(path)
