"""Runs inside lmms-eval's environment (``bench/interop.py`` starts it): an exported task folder through lmms-eval.

lmms-eval's ``TaskManager(include_path=FOLDER)`` finds the exported group and tasks, its ``simple_evaluate``
runs the scripted instruction follower (``tests/helpers/follower.py``, an ``lmms`` model here) and scores
with the folder's ``process_results`` / ``aggregation``, and its ``EvaluationTracker`` writes the results
and ``*_samples_<task>.jsonl`` files as its command line does. Writes a JSON summary: the tasks found,
lmms-eval's value of every metric per task, the sample files, and every prompt the model got (task, item
id, text, number of images).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "helpers"))

from follower import Follower, read_items  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--bench", type=Path, required=True, help="benchmark folder (its items.jsonl)")
    p.add_argument("--tasks", type=Path, required=True, help="the exported lmms-eval task folder")
    p.add_argument("--group", required=True)
    p.add_argument("--work", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()

    from lmms_eval.api.model import lmms
    from lmms_eval.evaluator import simple_evaluate
    from lmms_eval.loggers import EvaluationTracker
    from lmms_eval.tasks import TaskManager

    follower = Follower(read_items(args.bench))
    calls: list[dict] = []

    class FollowerLMM(lmms):
        """The scripted instruction follower as an lmms-eval model."""

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

        def generate_until_multi_round(self, requests):  # noqa: ANN001, ANN201
            raise NotImplementedError("generation tasks only")

    manager = TaskManager(include_path=str(args.tasks))
    found = sorted(t for t in manager.all_tasks if t.startswith(args.group))
    results = simple_evaluate(model=FollowerLMM(), tasks=[args.group], task_manager=manager, log_samples=True,
                              bootstrap_iters=0)
    samples = results.pop("samples")
    tracker = EvaluationTracker(output_path=str(args.work))
    tracker.general_config_tracker.log_experiment_args(model_source="medtemporal_follower",
                                                       model_args="pretrained=medtemporal_follower",
                                                       system_instruction=None, chat_template=None,
                                                       fewshot_as_multiturn=False)
    tracker.save_results_aggregated(results=results, samples=samples,
                                    datetime_str=datetime.datetime.now().strftime("%Y%m%dT%H%M%S"))
    for task in samples:
        tracker.save_results_samples(task_name=task, samples=samples[task])
    metrics = {task: {k.split(",")[0]: v for k, v in values.items() if k.endswith(",none") and "stderr" not in k}
               for task, values in results["results"].items() if task != args.group}
    files = sorted(str(f) for f in args.work.rglob("*_samples_*.jsonl"))
    args.out.write_text(json.dumps({"tasks": found, "metrics": metrics, "samples": files, "calls": calls},
                                   default=float))
    print(f"{args.group}: lmms-eval found the group and {len(found) - 1} tasks, answered {len(calls)} docs", flush=True)


if __name__ == "__main__":
    main()
