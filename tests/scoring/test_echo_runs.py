"""A model that echoes the choices it was shown, run through `medtemporal run` / `score` on every choice family.

The model is the loopback OpenAI-compatible server (`helpers.fake_openai`, ``echo="line"`` or ``"lines"``)
reached through the real ``openai`` client. Under MI-CXR's rule (E.5) an echo names several choices and is
invalid: every echoed answer must be scored wrong and counted invalid, on MI-CXR, on 3D-RAD's closed tasks
(strict) and on TemMed's image-pair task. The released rules are kept as released and checked to be: 3D-RAD's
``"X."`` rule counts every echo right, TemMed's VQA rule reads an echoed "Yes, No" as Yes. Answers stored by
the old rule (``letter@1``, which read a one-line echo as its first letter) are extracted again when scored.
The baselines answer through the same runs and keep their scores (the oracle 100%, nothing invalid).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.fake_openai import TEST_API_KEY, FakeOpenAI
from helpers.phantoms import make_cxr_phantoms
from helpers.temmed import build_args as temmed_build_args
from helpers.temmed import temmed_data  # noqa: F401  (fixture)

from medtemporal.cli import main
from medtemporal.phantoms.ct_rate import write_ct_rate
from medtemporal.scoring.extraction import rule_id


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI.start() as srv:
        yield srv


@pytest.fixture(autouse=True)
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(tmp_path / "cache" / "responses.sqlite"))
    monkeypatch.setenv("MEDTEMPORAL_VOLUME_CACHE", str(tmp_path / "volumes"))


@pytest.fixture(scope="module")
def micxr_bench(tmp_path_factory) -> Path:
    phantom = make_cxr_phantoms(tmp_path_factory.mktemp("cxr"), patients=24, seed=5, image_size=64)
    out = tmp_path_factory.mktemp("micxr") / "bench"
    assert main(["build", "mi-cxr", "--mimic-cxr-jpg", str(phantom.mimic_cxr_jpg), "--qba", str(phantom.qba),
                 "--max-items", "400", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def temmed_bench(temmed_data, tmp_path_factory) -> Path:  # noqa: F811
    out = tmp_path_factory.mktemp("temmed") / "bench"
    assert main(temmed_build_args(temmed_data, out, "--tasks", "vqa,image_pair")) == 0
    return out


@pytest.fixture(scope="module")
def rad3d_bench(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ct") / "root"
    write_ct_rate(root, patients=6, seed=3, shape=(32, 32, 8))
    out = tmp_path_factory.mktemp("rad3d") / "bench"
    assert main(["build", "3d-rad", "--ct-rate", str(root), "--tasks", "task4,task5,task6", "--out", str(out)]) == 0
    return out


CT = ["--protocol", "ct", "--protocol-option", "slices=2", "--protocol-option", "size=16"]


def run(bench: Path, out: Path, model: str, *extra: str) -> dict:
    assert main(["run", str(bench), "--model", model, "--out", str(out), "--no-progress", *extra]) == 0
    return json.loads((out / "scores.json").read_text())


def score_of(scores: dict, group: str, metric: str = "accuracy") -> dict:
    return next(s for s in scores["scores"] if s["group"] == group and s["metric"] == metric)


def predictions(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


def as_letter_v1(out: Path) -> None:
    """Rewrite a run's answers as ``letter@1`` stored them: a one-line echo read as its first letter."""
    lines = [{**p, "answer": "A", "extraction": "letter@1"} for p in predictions(out)]
    (out / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in lines))


@pytest.mark.parametrize("mode", ["line", "lines"])
def test_echoes_are_invalid_on_mi_cxr(server, micxr_bench, tmp_path, mode):
    server.reset()
    server.configure(echo=mode)
    out = tmp_path / "echo"
    scores = run(micxr_bench, out, server.uri("echo-vlm"))
    overall = score_of(scores, "overall")
    outputs = [p["raw_output"] for p in predictions(out)]
    assert outputs[0].startswith("A. T1 → T2" + (" B. " if mode == "line" else "\nB. "))
    assert overall["n"] > 100 and overall["value"] == 0 and overall["invalid"] == overall["n"]
    assert scores["counts"]["rules"] == {rule_id("letter"): len(outputs)}
    as_letter_v1(out)  # answers stored by the old rule are extracted again, and are invalid
    assert main(["score", str(out)]) == 0
    again = json.loads((out / "scores.json").read_text())
    assert again["counts"]["re_extracted"] == len(outputs) and score_of(again, "overall")["invalid"] == len(outputs)


def test_echoes_are_invalid_on_3d_rad_strict_and_right_as_released(server, rad3d_bench, tmp_path):
    server.reset()
    server.configure(echo="line")
    out = tmp_path / "echo"
    scores = run(rad3d_bench, out, server.uri("echo-vlm"), *CT)
    assert predictions(out)[0]["raw_output"] in ("A. Yes B. No", "A. Refractory Lesion (Persistent or recurrent, "
                                                 "now present) B. Resolved Lesion (Previously present or recurrent, "
                                                 "now absent) C. New Lesion (Absent previously, now present) "
                                                 "D. No Abnormality (Always absent)")
    for task in ("task4", "task5", "task6"):
        s = score_of(scores, f"task:{task}")
        assert s["n"] > 0 and s["value"] == 0 and s["invalid"] == s["n"], task
    released = {s["group"]: s for s in scores["variants"]["as released"]["scores"]}
    assert all(released[f"task:{t}"]["value"] == 1.0 for t in ("task4", "task5", "task6"))  # "<gold>." in every echo


def test_temmed_echoes_are_scored_as_the_release_reads_them(server, temmed_bench, tmp_path):
    server.reset()
    server.configure(echo="line")
    pair = run(temmed_bench, tmp_path / "pair", server.uri("echo-vlm"), "--tasks", "image_pair")
    assert predictions(tmp_path / "pair")[0]["raw_output"] == "A: B: C:"
    s = score_of(pair, "task:image_pair")
    assert s["n"] > 0 and s["value"] == 0 and s["invalid"] == s["n"]  # no "my answer is x": invalid
    vqa = run(temmed_bench, tmp_path / "vqa", server.uri("echo-vlm"), "--tasks", "vqa")
    assert {p["raw_output"] for p in predictions(tmp_path / "vqa")} == {"Yes, No"}  # the prompt's "[Yes, No]"
    s = score_of(vqa, "task:vqa")
    assert s["invalid"] == 0 and s["value"] == pytest.approx(0.5, abs=0.05)  # read as Yes, as released


@pytest.mark.parametrize("family", ["mi-cxr", "temmed", "3d-rad"])
def test_baselines_are_read_as_before(family, micxr_bench, temmed_bench, rad3d_bench, tmp_path):
    """Bare letters still extract (TemMed's image-pair baselines answer in the release's "My answer is X")."""
    bench, group = {"mi-cxr": (micxr_bench, "overall"), "temmed": (temmed_bench, "task:image_pair"),
                    "3d-rad": (rad3d_bench, "overall")}[family]
    oracle = run(bench, tmp_path / "oracle", "baseline:oracle")
    assert score_of(oracle, "overall")["value"] == 1.0 and score_of(oracle, "overall")["invalid"] == 0
    for model in ("baseline:constant-A", "baseline:random", "baseline:majority"):
        s = score_of(run(bench, tmp_path / model.split(":")[1], model), group)
        assert s["invalid"] == 0 and 0 < s["value"] < 1, model
