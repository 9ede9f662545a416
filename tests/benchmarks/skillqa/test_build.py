"""``medtemporal build skillqa``: deterministic items, the paper's shuffle, renamed identifiers, bad input."""

from __future__ import annotations

import itertools
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from medtemporal.benchmark import load
from medtemporal.benchmarks.skillqa.command import presentation, relabel
from medtemporal.cli import main
from medtemporal.sources.skill_frames import GOLD, FrameSet, read_frame_sets


def _build(frames: Path, out: Path, *extra: str) -> int:
    return main(["build", "skillqa", "--frames", str(frames), "--out", str(out), *extra])


def test_same_seed_gives_byte_identical_items(frames: Path, tmp_path: Path) -> None:
    assert _build(frames, tmp_path / "a", "--seed", "7") == 0
    assert _build(frames, tmp_path / "b", "--seed", "7") == 0
    assert _build(frames, tmp_path / "c", "--seed", "8") == 0
    a, b, c = ((tmp_path / x / "items.jsonl").read_bytes() for x in "abc")
    assert a == b and a != c


def test_items_hold_the_true_order_of_the_labels_shown(frames: Path, tmp_path: Path) -> None:
    assert _build(frames, tmp_path / "b") == 0
    bench = load(tmp_path / "b")
    gold = {s.id: s for s in read_frame_sets(frames)}
    assert bench.manifest.licence == "synthetic" and len(bench.items) == len(gold)
    for item in bench.items:
        fs = gold[item.meta["instance"]]
        labels = list(item.options)
        assert labels == [chr(ord("A") + k) for k in range(len(labels))]  # A, B, C ... in the order shown
        assert [ref.label for ref in item.images] == [f"Frame {x}" for x in labels]
        mapping = item.meta["identifiers"]
        assert [mapping[x] for x in item.answer] == list(fs.order)
        assert [Path(ref.path).stem for ref in item.images] == [mapping[x] for x in labels]
        assert item.answer_type == "ordering" and item.subtype == f"{fs.procedure}_{len(fs.order)}"
        for shown, original in mapping.items():  # the rationale names frames as shown
            if f"Frame {original}," in fs.rationale:
                assert f"Frame {shown}," in item.reference


def test_shuffle_is_uniform_over_all_permutations_identity_included() -> None:
    fs = FrameSet(id="x", procedure="CPR", order=("A", "B", "C", "D"), rationale="", frames={})
    shown = Counter(tuple(presentation(fs, seed, keep=False, rename=False)[0]) for seed in range(2400))
    assert set(shown) == set(itertools.permutations("ABCD"))  # the paper excludes no permutation
    assert 60 <= shown[("A", "B", "C", "D")] <= 145  # 100 expected (1/24)


def test_renamed_identifiers_and_kept_identifiers(frames: Path, tmp_path: Path) -> None:
    assert _build(frames, tmp_path / "r", "--rename-identifiers") == 0
    assert _build(frames, tmp_path / "k", "--keep-identifiers") == 0
    gold = {s.id: s for s in read_frame_sets(frames)}
    for item in load(tmp_path / "r").items:
        assert all(len(x) == 4 and x.isalnum() and x.islower() for x in item.options)
        assert [item.meta["identifiers"][x] for x in item.answer] == list(gold[item.meta["instance"]].order)
        assert "Frame A," not in item.reference and f"Frame {item.answer[0]}," in item.reference
    for item in load(tmp_path / "k").items:
        fs = gold[item.meta["instance"]]
        assert item.answer == list(fs.order) and list(item.options) == sorted(fs.order)
        assert item.reference == fs.rationale


def test_relabel_renames_frame_mentions_only() -> None:
    text = "Frame A shows the box; Frames B and C the pads. A rescuer kneels."
    assert relabel(text, {"A": "C", "B": "A", "C": "B"}) == "Frame C shows the box; Frames A and B the pads. A rescuer kneels."


@pytest.mark.parametrize("damage", ["missing frame", "unknown identifier", "non-image", "duplicate id", "mixed"])
def test_bad_input_is_one_sentence_and_keeps_the_old_benchmark(frames: Path, tmp_path: Path, capsys, damage: str) -> None:
    out = tmp_path / "bench"
    assert _build(frames, out) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    bad = tmp_path / "bad"
    shutil.copytree(frames, bad)
    first = json.loads((bad / GOLD).read_text().splitlines()[0])
    folder = bad / first["id"]
    if damage == "missing frame":
        (folder / "B.jpg").unlink()
    elif damage == "unknown identifier":
        shutil.copyfile(folder / "A.jpg", folder / "Q.jpg")
    elif damage == "non-image":
        (folder / "C.jpg").write_bytes(b"GIF89a but not really")
    elif damage == "duplicate id":
        (bad / GOLD).write_text((bad / GOLD).read_text() + json.dumps(first) + "\n")
    else:
        (folder / "A.jpg").rename(folder / "A.jpeg")
    capsys.readouterr()
    assert _build(bad, out, "--overwrite") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("medtemporal: ")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
