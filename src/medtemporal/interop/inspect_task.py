"""An inspect_ai task module for a benchmark of any family: one ``@task`` per benchmark task.

``medtemporal export BENCH --format inspect --out DIR`` writes

- ``DIR/medtemporal_<benchmark>.py``: one ``@task`` per benchmark task (``medtemporal_<benchmark>_<task>``), each
  built by `medtemporal.interop.inspect_hooks.medtemporal_task` (needs medtemporal and inspect_ai where it runs);
- ``DIR/samples.jsonl``: per item the very request ``medtemporal run`` sends under the benchmark's default
  protocol (`medtemporal.interop.views.requests`): the system prompt, then each message's parts in our order,
  captions and images interleaved (an image by absolute path when inspect_ai sends the file's bytes as we do, else
  the bytes we send, under ``DIR/images/``, as are images prepared outside the image root such as 3D-RAD's slices;
  with ``--embed-images`` every image is there), and the generation
  settings we send; the answer, patient, subtype, ``sent_images`` (which of the item's images are sent) and the
  item record;
- ``DIR/requirements.txt`` (`medtemporal.interop.lmms_eval.requirements`).

Run it from ``DIR`` (inspect_ai takes the task file by a relative path) with ``inspect eval
medtemporal_<benchmark>.py --model openai-api/local/<model> --model-base-url URL`` (an OpenAI-compatible server:
inspect_ai's ``openai/`` provider takes a name it does not know for OpenAI's newest model, sends it the Responses
API unless ``-M responses_api=false``, and even then drops the temperature and renames ``max_tokens``; see
docs/scaling.md) and bring the logs back with ``medtemporal import-predictions BENCH LOG... --from inspect --out RUN``.
"""

from __future__ import annotations

import base64
import json
import mimetypes
from pathlib import Path
from typing import Any

from medtemporal import __version__
from medtemporal.backends.base import ImagePart, Request, TextPart
from medtemporal.backends.images import encode_data_url
from medtemporal.benchmark import Benchmark
from medtemporal.contract import spec
from medtemporal.interop.files import folder_atomically
from medtemporal.interop.lmms_eval import group_name, requirements, scored_metrics, task_name
from medtemporal.interop.parquet import answer_text, read_bytes
from medtemporal.interop.views import protocol_name, requests, sent_images
from medtemporal.runner.options import RunOptions
from medtemporal.schema import Item

SAMPLES = "samples.jsonl"
IMAGES = "images"


def _image(path: Path, root: Path, folder: Path, name: str, embed: bool) -> str:
    """How a sample names an image: its absolute path where it is in the benchmark's image root and inspect_ai
    would send the very data URL we send (``encode_data_url``: 8-bit PNG and JPEG byte for byte, its MIME type from
    the name as inspect_ai guesses it), else the bytes we send written under ``images/`` (a relative path): so also
    images prepared outside the root (3D-RAD's slices, in the volume cache)."""
    ours = encode_data_url(path, None)
    mime = mimetypes.guess_type(path.name, strict=False)[0]
    raw = read_bytes(path)
    inside = path.resolve().is_relative_to(root.resolve())
    if not embed and inside and ours == f"data:{mime};base64,{base64.b64encode(raw).decode('ascii')}":
        return str(path)
    header, data = ours.split(",", 1)
    suffix = mimetypes.guess_extension(header.removeprefix("data:").split(";")[0]) or path.suffix
    target = folder / IMAGES / f"{name}{suffix}"
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(base64.b64decode(data))
    return f"{IMAGES}/{target.name}"


def sample(item: Item, request: Request, root: Path, folder: Path, embed: bool) -> dict[str, Any]:
    """The sample record of ``item``: our request's messages as inspect_ai reads them, and what scoring needs."""
    messages: list[dict[str, Any]] = []
    if request.system_prompt:
        messages.append({"role": "system", "content": request.system_prompt})
    n = 0
    for message in request.messages:
        if message.n_images == 0:  # sent as one string, as our backends send a text-only message
            content: Any = "\n".join(p.text for p in message.parts if isinstance(p, TextPart))
        else:
            content = []
            for part in message.parts:
                if isinstance(part, ImagePart):
                    content.append({"type": "image", "image": _image(Path(part.path), root, folder,
                                                                       f"{item.id}_{n}", embed)})
                    n += 1
                else:
                    content.append({"type": "text", "text": part.text})
        messages.append({"role": message.role, "content": content})
    cfg = request.config
    generation = {k: v for k, v in (("temperature", cfg.temperature), ("max_tokens", cfg.max_tokens),
                                    ("seed", cfg.seed), ("top_p", cfg.top_p)) if v is not None}
    return {"id": item.id, "task": item.task, "input": messages, "target": answer_text(item), "generation": generation,
            "metadata": {"subtype": item.subtype, "patient_id": item.cluster, "answer_type": item.answer_type,
                         "sent_images": sent_images(item, request, root), "item": item.model_dump_json()}}


def module(bench: Benchmark, counts: dict[str, int]) -> str:
    """The task module's source: one ``@task`` per benchmark task."""
    m = bench.manifest
    first = task_name(bench, next(iter(counts)))
    tasks = "".join(
        f"\n\n@task\ndef {task_name(bench, task)}() -> Task:\n"
        f"    \"\"\"{m.benchmark} task {task}: {n} items; metrics {', '.join(scored_metrics(m.benchmark, task))}.\"\"\"\n"
        f"    return medtemporal_task(HERE, {task!r})\n"
        for task, n in counts.items()
    )
    return f'''"""inspect_ai tasks of the medtemporal benchmark {m.benchmark} (version {m.version}), exported by medtemporal
{__version__}: each sample is the request `medtemporal run` sends under protocol {protocol_name(bench)!r} (samples.jsonl),
scored by medtemporal's extraction rules and metrics.

    pip install -r requirements.txt
    export LOCAL_API_KEY=...    # the server's key (any text for a server without one)
    inspect eval {group_name(bench)}.py --model openai-api/local/MODEL --model-base-url http://HOST:PORT/v1
    inspect eval {group_name(bench)}.py@{first} ...       # one task
    medtemporal import-predictions BENCH logs/*.eval --from inspect --out RUN
"""

from pathlib import Path

from inspect_ai import Task, task

from medtemporal.interop.inspect_hooks import medtemporal_task

HERE = Path(__file__).resolve().parent
{tasks}'''


def write_task(bench: Benchmark, out: Path, *, embed_images: bool = False, overwrite: bool = False) -> list[Path]:
    """Write the inspect_ai task folder ``out`` for ``bench``; return ``[out]``."""
    config = RunOptions().resolve(spec(bench.manifest.benchmark)).generation
    captured = requests(bench, config=config)
    counts: dict[str, int] = {}
    for item, _ in captured:
        counts[item.task] = counts.get(item.task, 0) + 1
    with folder_atomically(out, overwrite=overwrite) as tmp:
        with (tmp / SAMPLES).open("w", encoding="utf-8") as f:
            for item, request in captured:
                f.write(json.dumps(sample(item, request, bench.image_root, tmp, embed_images), ensure_ascii=False) + "\n")
        (tmp / f"{group_name(bench)}.py").write_text(module(bench, counts), encoding="utf-8")
        (tmp / "requirements.txt").write_text(requirements(bench), encoding="utf-8")
    return [out]
