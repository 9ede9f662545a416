"""Runs inside VLMEvalKit's environment (``bench/interop.py`` starts it): exported TSVs through VLMEvalKit itself.

For each dataset name (a TSV under ``$LMUData``): VLMEvalKit's ``build_dataset`` loads it, its
``infer_data_job`` runs the scripted instruction follower (``tests/helpers/follower.py``, a
``BaseModel`` here) over the prompts its ``build_prompt`` makes, writing its usual result file, and
its evaluator scores that file where it has one for the layout: the custom MCQ dataset's exact
matching, and ``ImageYORNDataset``'s for Y/N (custom VQA datasets cannot score). Writes a JSON summary:
per dataset the class, the rows, the result file, VLMEvalKit's accuracy, and every prompt the model got
(its text and image files, in order).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "helpers"))

from follower import Follower, read_items  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--bench", type=Path, required=True, help="benchmark folder (its items.jsonl)")
    p.add_argument("--datasets", nargs="+", required=True, help="names of TSVs under $LMUData")
    p.add_argument("--work", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    os.environ.setdefault("PRED_FORMAT", "xlsx")

    from vlmeval.dataset import build_dataset
    from vlmeval.dataset.image_yorn import ImageYORNDataset
    from vlmeval.inference import infer_data_job
    from vlmeval.smp import get_pred_file_path
    from vlmeval.vlm.base import BaseModel

    follower = Follower(read_items(args.bench))

    class FollowerVLM(BaseModel):
        """The scripted instruction follower as a VLMEvalKit model: images first, then text, as VLMEvalKit sends."""

        INTERLEAVE = True

        def __init__(self) -> None:
            super().__init__()
            self.calls: list[dict] = []

        def generate_inner(self, message, dataset=None):  # noqa: ANN001, ANN201
            text = "\n".join(m["value"] for m in message if m["type"] == "text")
            images = [m["value"] for m in message if m["type"] == "image"]
            self.calls.append({"prompt": text, "images": images})
            return follower.reply(text)

    summary = {}
    args.work.mkdir(parents=True, exist_ok=True)
    for name in args.datasets:
        dataset = build_dataset(name)
        model = FollowerVLM()
        infer_data_job(model, work_dir=str(args.work), model_name="MedtemporalFollower", dataset=dataset,
                       verbose=False, api_nproc=1)
        result = get_pred_file_path(str(args.work), "MedtemporalFollower", name, use_env_format=True)
        accuracy = None
        if dataset.TYPE == "MCQ":
            table = dataset.evaluate(result, model="exact_matching", nproc=1)
            accuracy = float(table.loc[table["split"] == "test", "Overall"].iloc[0]) if "split" in table else None
        elif name.endswith(("_yorn", "_yorn_text")):  # Y/N layout: VLMEvalKit's Y/N evaluator (a custom VQA dataset cannot score)
            table = ImageYORNDataset(dataset=name).evaluate(result, nproc=1)
            accuracy = float(table["Overall"].iloc[0]) / 100
        summary[name] = {"class": type(dataset).__name__, "rows": len(dataset), "result": result,
                         "their_accuracy": accuracy, "calls": model.calls}
        print(f"{name}: {type(dataset).__name__}, {len(dataset)} rows, {len(model.calls)} prompts, "
              f"VLMEvalKit accuracy {accuracy}", flush=True)
    args.out.write_text(json.dumps(summary))


if __name__ == "__main__":
    main()
