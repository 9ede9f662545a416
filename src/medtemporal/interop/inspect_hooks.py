"""What a task module exported by ``medtemporal export --format inspect`` calls (`medtemporal.interop.inspect_task`).

`medtemporal_task` builds one benchmark task's inspect_ai ``Task``: its samples (our request's messages, captions
and images in our order), a solver that sends them with our generation settings, and a scorer that extracts the
answer with the benchmark's rule; its metrics are the task's, each computed over all the task's items at once as
``medtemporal score`` does (`medtemporal.interop.tool_scoring`). Building the task computes every metric once on
one item (`check_requirements`), so a missing package or nltk data stops ``inspect eval`` before its first request.
inspect_ai is imported where it is used (it is in the ``interop`` extra, not a core dependency).
"""

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from typing import TYPE_CHECKING

from medtemporal.interop.inspect_task import SAMPLES
from medtemporal.interop.tool_scoring import aggregate, check_requirements, metric_names, per_item
from medtemporal.schema import Item

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ContentImage, ContentText
    from inspect_ai.scorer import Metric, Scorer
    from inspect_ai.solver import Solver


@lru_cache(maxsize=4)
def _records(folder: Path) -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(line) for line in (folder / SAMPLES).read_text("utf-8").splitlines() if line)


@lru_cache(maxsize=4)
def _items(folder: Path) -> dict[str, Item]:
    return {r["id"]: Item.model_validate_json(r["metadata"]["item"]) for r in _records(folder)}


def _content(part: dict[str, Any], folder: Path) -> "ContentText | ContentImage":
    from inspect_ai.model import ContentImage, ContentText

    if part["type"] == "text":
        return ContentText(text=part["text"])
    image = Path(part["image"])
    return ContentImage(image=str(image if image.is_absolute() else folder / image))


def _message(message: dict[str, Any], folder: Path) -> "ChatMessageSystem | ChatMessageUser":
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser

    content = message["content"]
    if not isinstance(content, str):
        content = [_content(part, folder) for part in content]
    return ChatMessageSystem(content=content) if message["role"] == "system" else ChatMessageUser(content=content)


def dataset(folder: Path, task: str) -> "MemoryDataset":
    """The samples of one benchmark task, in the benchmark's order."""
    from inspect_ai.dataset import MemoryDataset, Sample

    return MemoryDataset([
        Sample(id=r["id"], input=[_message(m, folder) for m in r["input"]], target=r["target"],
               metadata={**r["metadata"], "generation": r["generation"]})
        for r in _records(folder) if r["task"] == task
    ], name=task)


def send_ours() -> "Solver":
    """Send the sample's messages once, with the generation settings ``medtemporal run`` sends for it."""
    from inspect_ai.solver import Generate, Solver, TaskState, solver

    @solver(name="medtemporal_send")
    def send() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            return await generate(state, **state.metadata["generation"])

        return solve

    return send()


def _task_metric(name: str, folder: Path) -> "Metric":
    from inspect_ai.scorer import Metric, SampleScore, metric

    @metric(name=name)
    def task_metric() -> Metric:
        def compute(scores: list[SampleScore]) -> float:
            items = _items(folder)
            if any(s.score.metadata.get("errors", {}).get(name) for s in scores):
                return float("nan")  # the outputs stay in the log: import-predictions + score
            chosen = [items[str(s.sample_id)] for s in scores]
            value = aggregate(name, chosen, [s.score.metadata["answer"] for s in scores],
                              [s.score.metadata["output"] for s in scores], items.values())
            return value if math.isfinite(value) else float("nan")

        return compute

    return task_metric()


def medtemporal_scorer(folder: Path, task: str) -> "Scorer":
    """Extract each answer with the benchmark's rule; the task's metrics over all its items (`aggregate`)."""
    from inspect_ai.scorer import Score, Scorer, Target, scorer
    from inspect_ai.solver import TaskState

    names = metric_names(next(item for item in _items(folder).values() if item.task == task))

    @scorer(metrics=[_task_metric(n, folder) for n in names], name=f"medtemporal_{task}")
    def score_ours() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            item = _items(folder)[str(state.sample_id)]
            output = state.output.completion
            answer, values = per_item(item, output)
            own = {n: (None if math.isnan(v) else v) for n, (v, _) in values.items()}
            return Score(value=own, answer=answer if answer is None or isinstance(answer, str) else json.dumps(answer),
                         metadata={"answer": answer, "output": output,
                                   "errors": {n: e for n, (_, e) in values.items() if e}})

        return score

    return score_ours()


def medtemporal_task(folder: Path, task: str) -> "Task":
    """The inspect_ai ``Task`` of benchmark task ``task`` exported in ``folder``."""
    from inspect_ai import Task

    folder = Path(folder)
    items = [item for item in _items(folder).values() if item.task == task]
    check_requirements(items[:1], f"The inspect_ai task {task} in {folder}")
    return Task(dataset=dataset(folder, task), solver=send_ours(), scorer=medtemporal_scorer(folder, task),
                metadata={"medtemporal_task": task})
