"""An lmms-eval task folder for a benchmark of choice or yes/no items: YAML + ``utils.py`` + the data.

``medtemporal export BENCH --format lmms-eval --out DIR`` writes

- ``DIR/<task>.yaml``: ``dataset_path: parquet`` over the data file, ``generate_until`` with the
  benchmark's generation settings (greedy), and ``accuracy`` (mean, higher is better) from
  ``process_results``;
- ``DIR/utils.py``: `medtemporal.interop.lmms_eval_utils` (visuals, prompt, extraction);
- ``DIR/<task>.parquet``: the Parquet export (images by absolute path, or embedded).

Run it with ``lmms-eval --include_path DIR --tasks <task> --log_samples ...``. Open-ended
families (report generation) have no lmms-eval metric here: score them with medtemporal.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from medtemporal.backends.base import GenerateConfig
from medtemporal.benchmark import Benchmark
from medtemporal.errors import InvalidInputError
from medtemporal.writes import write_atomic

CLOSED = frozenset({"choice", "yesno"})


def task_name(bench: Benchmark) -> str:
    """``medtemporal_<benchmark>`` with characters lmms-eval task names avoid replaced by ``_``."""
    return "medtemporal_" + re.sub(r"[^A-Za-z0-9_]+", "_", bench.manifest.benchmark)


def task_yaml(task: str, data_file: Path, version: str, max_new_tokens: int = GenerateConfig.max_tokens) -> str:
    """The task's YAML (``!function`` tags as lmms-eval reads them); greedy, as medtemporal runs by default."""
    return f"""# Exported by medtemporal (benchmark version {version}); see utils.py.
task: {task}
dataset_path: parquet
dataset_kwargs:
  data_files:
    test: {data_file}
test_split: test
output_type: generate_until
doc_to_visual: !function utils.doc_to_visual
doc_to_text: !function utils.doc_to_text
doc_to_target: !function utils.doc_to_target
generation_kwargs:
  max_new_tokens: {max_new_tokens}
  temperature: 0
  do_sample: false
process_results: !function utils.process_results
metric_list:
  - metric: accuracy
    aggregation: mean
    higher_is_better: true
lmms_eval_specific_kwargs:
  default:
    pre_prompt: ""
    post_prompt: ""
metadata:
  version: "{version}"
"""


def write_task(bench: Benchmark, out: Path, *, embed_images: bool = False) -> int:
    """Write the task folder ``out`` for ``bench``; return the number of items.

    Raises:
        InvalidInputError: the benchmark has open-ended or ordering items (no lmms-eval metric here).
    """
    from medtemporal.export import to_parquet

    bad = next((it for it in bench.items if it.answer_type not in CLOSED), None)
    if bad is not None:
        raise InvalidInputError(
            f"Item {bad.id} ({bad.task}) is {bad.answer_type}, not choice or yes/no; the lmms-eval export holds "
            "closed questions only, so export the others as parquet or vlmevalkit."
        )
    if out.exists() and not out.is_dir():
        raise InvalidInputError(f"--out {out} is a file; the lmms-eval export writes a folder, so name a folder.")
    out.mkdir(parents=True, exist_ok=True)
    task = task_name(bench)
    data = (out / f"{task}.parquet").resolve()
    n = to_parquet(bench, data, embed_images=embed_images)
    shutil.copyfile(Path(__file__).with_name("lmms_eval_utils.py"), out / "utils.py")
    write_atomic(out / f"{task}.yaml", task_yaml(task, data, bench.manifest.version))
    return n
