"""Baselines read no pixels, so they run on a 3D-RAD benchmark whose volumes are absent (e.g. an official import
without CT-RATE); a model that reads images is still refused before anything is written."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from medtemporal.benchmark import load
from medtemporal.benchmarks.rad3d.baselines import history_answer
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.runner import run

OFFICIAL = Path(__file__).resolve().parents[3] / ".." / "shared" / "official" / "3d-rad"


def test_baselines_run_without_volumes_and_image_models_are_refused(rad3d_bench, tmp_path):
    empty = tmp_path / "no-volumes"
    empty.mkdir()
    items = {i.id: i for i in load(rad3d_bench).items if i.task == "task6"}
    for model in ("rad3d:history", "baseline:constant-D", "baseline:random", "baseline:majority"):
        out = tmp_path / model.replace(":", "-")
        summary = run(rad3d_bench, model, out, tasks=["task6"], image_root=empty, protocol="ct", progress=False)
        assert summary.n_errors == 0 and summary.done == len(items)
    lines = [json.loads(x) for x in (tmp_path / "rad3d-history" / "predictions.jsonl").read_text().splitlines()]
    for p in lines:  # the volume is named, never prepared or sent
        parts = p["prompt"][0]["parts"]
        assert all(set(part) == {"text"} for part in parts) and "not sent: this model reads no images" in parts[0]["text"]
        item = items[p["item_id"]]
        assert p["answer"] == history_answer(item.question, tuple(item.options))
    with pytest.raises(InvalidInputError, match="missing"):  # reads images: refused before the run starts
        run(rad3d_bench, "openai+http://127.0.0.1:9/v1:m", tmp_path / "model", tasks=["task6"], image_root=empty, protocol="ct",
            progress=False)
    assert not (tmp_path / "model" / "predictions.jsonl").exists()


@pytest.mark.skipif(not OFFICIAL.is_dir(), reason="../shared/official/3d-rad is absent")
def test_history_rule_on_the_official_import_without_ct_rate(tmp_path, capsys):
    bench, out = tmp_path / "bench", tmp_path / "run"
    assert main(["build", "3d-rad", "--official", str(OFFICIAL), "--tasks", "task6", "--no-audit",
                 "--out", str(bench)]) == 0
    assert main(["run", str(bench), "--model", "rad3d:history", "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    items = {i.id: i for i in load(bench).items}
    by = defaultdict(list)
    for line in (out / "predictions.jsonl").read_text().splitlines():
        p = json.loads(line)
        by[items[p["item_id"]].subtype].append(p["answer"] == items[p["item_id"]].answer)
    assert round(100 * float(np.mean([np.mean(v) for v in by.values()])), 2) == 75.92  # FACTS §1.1
