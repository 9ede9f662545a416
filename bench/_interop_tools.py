"""Runs in a tool's environment (``bench/interop.py`` starts it): the tool itself drives the scripted follower.

``vlmevalkit``: ``build_dataset`` on each TSV under ``$LMUData``, ``infer_data_job``, then the MCQ exact matching and
``ImageYORNDataset.evaluate`` on Y/N files (``run.py`` scores neither custom Y/N nor VQA files). ``lmms-eval``:
``TaskManager(include_path=...)``, ``simple_evaluate`` and ``EvaluationTracker``'s sample logs. Writes a summary.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "helpers"))

from follower import Follower, read_items  # noqa: E402


def vlmevalkit(args: argparse.Namespace, follower: Follower) -> dict:
    os.environ.setdefault("PRED_FORMAT", "xlsx")
    from vlmeval.dataset import build_dataset
    from vlmeval.dataset.image_yorn import ImageYORNDataset
    from vlmeval.inference import infer_data_job
    from vlmeval.smp import get_pred_file_path
    from vlmeval.vlm.base import BaseModel

    class FollowerVLM(BaseModel):
        INTERLEAVE = True
        calls: list[dict]

        def generate_inner(self, message, dataset=None):  # noqa: ANN001, ANN201
            text = "\n".join(m["value"] for m in message if m["type"] == "text")
            self.calls.append({"prompt": text, "images": [m["value"] for m in message if m["type"] == "image"]})
            return follower.reply(text)

    summary = {}
    args.work.mkdir(parents=True, exist_ok=True)
    for name in args.datasets:
        dataset, model = build_dataset(name), FollowerVLM()
        model.calls = []
        infer_data_job(model, work_dir=str(args.work), model_name="MedtemporalFollower", dataset=dataset,
                       verbose=False, api_nproc=1)
        result = get_pred_file_path(str(args.work), "MedtemporalFollower", name, use_env_format=True)
        accuracy = None
        if dataset.TYPE == "MCQ":
            table = dataset.evaluate(result, model="exact_matching", nproc=1)
            accuracy = float(table.loc[table["split"] == "test", "Overall"].iloc[0]) if "split" in table else None
        elif name.endswith(("_yorn", "_yorn_text")):
            accuracy = float(ImageYORNDataset(dataset=name).evaluate(result, nproc=1)["Overall"].iloc[0]) / 100
        summary[name] = {"class": type(dataset).__name__, "rows": len(dataset), "result": result,
                         "their_accuracy": accuracy, "calls": model.calls}
    return summary


def lmms_eval(args: argparse.Namespace, follower: Follower) -> dict:
    from lmms_eval.api.model import lmms
    from lmms_eval.evaluator import simple_evaluate
    from lmms_eval.loggers import EvaluationTracker
    from lmms_eval.tasks import TaskManager

    calls: list[dict] = []

    class FollowerLMM(lmms):
        def generate_until(self, requests):  # noqa: ANN001, ANN201
            replies = []
            for request in requests:
                context, _, doc_to_visual, doc_id, task, split = request.args
                doc = self.task_dict[task][split][doc_id]
                calls.append({"task": task, "id": doc["id"], "prompt": context, "images": len(doc_to_visual(doc))})
                replies.append(follower.reply(context))
            return replies

        def loglikelihood(self, requests):  # noqa: ANN001, ANN201
            raise NotImplementedError("generation tasks only")
        generate_until_multi_round = loglikelihood

    manager = TaskManager(include_path=str(args.tasks))
    results = simple_evaluate(model=FollowerLMM(), tasks=[args.group], task_manager=manager, log_samples=True,
                              bootstrap_iters=0)
    samples = results.pop("samples")
    tracker = EvaluationTracker(output_path=str(args.work))
    tracker.general_config_tracker.log_experiment_args(
        model_source="medtemporal_follower", model_args="pretrained=medtemporal_follower", system_instruction=None,
        chat_template=None, fewshot_as_multiturn=False)
    tracker.save_results_aggregated(results=results, samples=samples,
                                    datetime_str=datetime.datetime.now().strftime("%Y%m%dT%H%M%S"))
    for task in samples:
        tracker.save_results_samples(task_name=task, samples=samples[task])
    metrics = {task: {k.split(",")[0]: v for k, v in values.items() if k.endswith(",none") and "stderr" not in k}
               for task, values in results["results"].items() if task != args.group}
    return {"tasks": sorted(t for t in manager.all_tasks if t.startswith(args.group)), "metrics": metrics,
            "samples": sorted(str(f) for f in args.work.rglob("*_samples_*.jsonl")), "calls": calls}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("tool", choices=["vlmevalkit", "lmms-eval"])
    for name in ("--bench", "--work", "--out", "--tasks"):  # benchmark folder, tool's folder, summary, lmms-eval tasks
        p.add_argument(name, type=Path)
    p.add_argument("--datasets", nargs="+")  # VLMEvalKit: TSV names under $LMUData; lmms-eval: the exported --group
    p.add_argument("--group")
    args = p.parse_args()
    run = vlmevalkit if args.tool == "vlmevalkit" else lmms_eval
    args.out.write_text(json.dumps(run(args, Follower(read_items(args.bench))), default=float))


if __name__ == "__main__":
    main()
