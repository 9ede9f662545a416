"""The released 3D-RAD test split: loads whole, the category rule holds on every Task 6 row,
and the trivial baselines give FACTS §1.1's figures. Skips when ../shared is absent."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from medtemporal.benchmarks.rad3d.baselines import history_answer
from medtemporal.benchmarks.rad3d.labels import category
from medtemporal.benchmarks.rad3d.release import ROWS, VolumeMap, read_official
from medtemporal.benchmarks.rad3d.scoring import released
from medtemporal.errors import InvalidInputError
from medtemporal.scoring import extract, is_correct

OFFICIAL = Path(__file__).resolve().parents[3] / ".." / "shared" / "official" / "3d-rad"
pytestmark = pytest.mark.skipif(not OFFICIAL.is_dir(), reason="../shared/official/3d-rad is absent")


@pytest.fixture(scope="module")
def items():
    return read_official(OFFICIAL)[0]


def macro(items, answers) -> float:
    """Mean over subtypes of strict-extraction accuracy, × 100."""
    by = defaultdict(list)
    for item, text in zip(items, answers):
        by[item.subtype].append(is_correct(item, extract(item, text).answer))
    return round(100 * float(np.mean([np.mean(v) for v in by.values()])), 2)


def test_loads_all_41_files_whole(items):
    assert len(items) == ROWS == 33_910
    tasks = defaultdict(int)
    for item in items:
        tasks[item.task] += 1
    assert tasks == {"task1": 1024, "task2": 2666, "task3": 1002, "task4": 23472, "task5": 2873, "task6": 2873}
    open_items = [i for i in items if i.answer_type == "open"]
    assert all(not i.options and i.reference == i.answer for i in open_items)
    assert {tuple(i.options) for i in items if i.task == "task4"} == {("A", "B")}
    assert items[0].images[0].path.startswith("dataset/valid/valid_")


def test_task6_category_rule_agrees_with_every_row(items):
    task6 = [i for i in items if i.task == "task6"]
    assert len(task6) == 2873
    for item in task6:
        current = int(item.answer in ("A", "C"))
        assert category(item.meta["history"], current) == item.answer, item.question
        assert len(item.meta["history"]) == "bcdefgh".index(item.meta["letter"]) + 1


def test_tasks5_and_6_line_up(items):
    t5 = [i for i in items if i.task == "task5"]
    t6 = [i for i in items if i.task == "task6"]
    assert [(i.meta["volume"], i.meta["label"], i.answer) for i in t5] == \
        [(i.meta["volume"], i.meta["label"], i.answer) for i in t6]


def test_baselines_reproduce_facts(items):
    t4 = [i for i in items if i.task == "task4"]
    t5 = [i for i in items if i.task == "task5"]
    t6 = [i for i in items if i.task == "task6"]
    assert macro(t4, ["B"] * len(t4)) == 82.01
    assert macro(t4, ["A"] * len(t4)) == 17.99
    assert macro(t5, ["D"] * len(t5)) == 46.09
    assert macro(t6, [history_answer(i.question, tuple(i.options)) for i in t6]) == 75.92
    assert macro(t6, [history_answer(i.question, tuple(i.options), "history-any") for i in t6]) == 70.18
    # The history rule says nothing on Task 5 (no history in its questions): it is always-D there.
    assert macro(t5, [history_answer(i.question, tuple(i.options)) for i in t5]) == 46.09


def test_released_rule_rewards_option_echo(items):
    item = next(i for i in items if i.task == "task5" and i.answer == "C")
    echo = "A. Refractory\nB. Resolved\nC. New\nD. No Abnormality"
    assert released(item, echo) == "C"
    assert extract(item, echo).answer is None  # strict: several letters → invalid
    assert released(item, "C") is None and extract(item, "C").answer == "C"


def test_volume_prefix_and_map(tmp_path):
    mapping = VolumeMap(prefix="train")
    assert mapping.path("test_12_b_1.nii.gz") == "dataset/train/train_12/train_12_b/train_12_b_1.nii.gz"
    with pytest.raises(InvalidInputError, match="no row for"):
        VolumeMap(paths={}).path("test_12_b_1.nii.gz")


def test_bad_folder_is_one_sentence(tmp_path):
    with pytest.raises(InvalidInputError, match="six released task folders"):
        read_official(tmp_path)


def test_build_command_imports_the_release(tmp_path, capsys):
    """``build 3d-rad --official`` over a copy holding the first rows of each of the 41 released CSVs."""
    import pandas as pd

    from medtemporal.benchmark import load
    from medtemporal.cli import main

    src = next(OFFICIAL.rglob("Task1_Image_Observation")).parent
    small = tmp_path / "3DRAD" / "test"
    for path in sorted(src.glob("*/*.csv")):
        (small / path.parent.name).mkdir(parents=True, exist_ok=True)
        pd.read_csv(path, dtype=str, keep_default_na=False).head(3).to_csv(small / path.parent.name / path.name, index=False)
    out = tmp_path / "bench"
    assert main(["build", "3d-rad", "--official", str(tmp_path), "--out", str(out)]) == 0
    capsys.readouterr()
    bench = load(out)
    assert len(bench.items) == 41 * 3 and len(bench.manifest.sources) == 41
    assert bench.manifest.licence == "credentialed" and bench.manifest.config["source"] == "official"
    next(small.glob("Task5*/c.csv")).unlink()
    assert main(["build", "3d-rad", "--official", str(small), "--out", str(tmp_path / "b2")]) == 2
    err = capsys.readouterr().err.strip()
    assert "c.csv does not exist" in err and "\n" not in err


def test_export_writes_the_released_layout_back(items, tmp_path):
    """Every released CSV, read back from our export, equals the original cell for cell."""
    import pandas as pd

    from medtemporal.benchmarks.rad3d.release import write_official

    assert write_official(items, tmp_path) == ROWS
    src = next(OFFICIAL.rglob("Task1_Image_Observation")).parent
    originals = sorted(src.glob("*/*.csv"))
    assert len(originals) == 41
    for path in originals:
        ours = pd.read_csv(tmp_path / path.parent.name / path.name, dtype=str, keep_default_na=False)
        theirs = pd.read_csv(path, dtype=str, keep_default_na=False)
        pd.testing.assert_frame_equal(ours, theirs, check_dtype=False)
