"""MI-CXR's judge-based error taxonomy (paper appendix G): each wrong answer labelled by the LLM judge.

Rules label what the item decides (`analyses.rule_label`); the paper's types
that need reading the model's output (local interval misinterpretation,
abstention, forced choice, temporal exclusivity, global integration; section 5,
appendix F) come from the judge of `medtemporal.scoring.judge`: the same
`Judge` settings (``medtemporal score RUN --judge URI`` and its options), the
backend opened through the runner's data-use guard and pinned to the checked
addresses, calls with retries and the response cache. The prompt is
``micxr_error_type`` (the task family, the question, choices, gold and chosen answers, the
item's annotated interval changes, the stage-1 descriptions when the run is
stage-wise, and the raw output); `parse_error_type` reads its one labelled
line strictly, anything else is ``unparseable``.

Each label is appended to the run's ``error_judgements.jsonl`` as it arrives,
keyed by judge identity, item, repeat and output hash, so a pass resumes
without asking twice; `stored_labels` reads the latest judge's labels for the
report. ``micxr-scripted-judge:errors`` stands in for a model judge offline
(the demo): it reads only the request's text and labels by rules.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Literal, Mapping

from medtemporal.backends.base import Backend, Message, Request, RequestError, Response, TextPart
from medtemporal.backends.uri import shown_uri
from medtemporal.benchmarks.mi_cxr.balance import NULL_LETTER
from medtemporal.errors import InvalidInputError, UnknownNameError
from medtemporal.prompts import PromptSet
from medtemporal.registry import register
from medtemporal.runner.cache import ResponseCache
from medtemporal.schema import Item, Record, content_hash, dumps, iter_jsonl
from medtemporal.scoring.judge import Judge, ask_all, ask_pending, settled
from medtemporal.scoring.metrics import is_correct
from medtemporal.scoring.runs import load_outcomes

PROMPT = "micxr_error_type"
FILE = "error_judgements.jsonl"
JUDGE_TYPES = {
    "local_misinterpretation": "Local interval misinterpretation",
    "abstention": "Abstention under Uncertainty",
    "forced_choice": "Forced Choice under Insufficient Evidence",
    "exclusivity": "Failure of Temporal Exclusivity",
    "global_integration": "Failure in Global Temporal Integration",
}
"""The judge's labels and the paper's names for them (appendix G; Fig. 25 leaves out local misinterpretation)."""
TASK_NAMES = {"TEL": "TEL (Temporal Event Localization)", "ICR": "ICR (Interval-wise Change Reasoning)",
              "ICR-V": "ICR-V (Interval-wise Change Reasoning, interval given)",
              "GTS": "GTS (Global Trajectory Summarization)"}
_LINE = re.compile(r"^[\s>*_#`-]*error\s*type\s*[*_`]*\s*[:=]\s*[*_`]*\s*([a-z_ ]+?)\s*[*_`.]*\s*$", re.I | re.M)


def parse_error_type(text: str | None) -> str | None:
    """The label of a judge's ``Error type: <label>`` line; None when absent, unknown or given twice differently.

    >>> parse_error_type("Error type: forced_choice")
    'forced_choice'
    >>> parse_error_type("Error type: hallucination") is None
    True
    """
    found = {m.strip().lower().replace(" ", "_") for m in _LINE.findall(text or "")}
    return found.pop() if len(found) == 1 and next(iter(found)) in JUDGE_TYPES else None


class ErrorJudgement(Record):
    """One line of ``error_judgements.jsonl``."""

    judge: str
    """Hash of the judge's identity."""
    item_id: str
    repeat: int
    output_sha: str
    raw: str | None
    label: str | None = None
    status: Literal["ok", "unparseable", "error"]
    error: str | None = None


def identity(judge: Judge, backend: Backend, prompts: PromptSet) -> dict[str, Any]:
    """What decides a label: model, settings, the prompt's sha256 and the parser (recorded in ``scores.json``)."""
    return {"uri": shown_uri(judge.uri), "backend": backend.identity(), "config": dict(judge.config.__dict__),
            "prompts": [PROMPT], "prompt_sha256": hashlib.sha256(prompts.text(PROMPT).encode()).hexdigest(),
            "parser": "one 'Error type: <label>' line (medtemporal.benchmarks.mi_cxr.error_judge.parse_error_type)",
            "task": "MI-CXR error taxonomy (appendix G)"}


def request_for(item: Item, output: str | None, descriptions: str | None, judge: Judge,
                prompts: PromptSet, chosen: Any) -> Request:
    """The judge request for one wrong answer."""
    annotation = "\n".join(f"T{i} → T{i + 1}: {c}" for i, c in enumerate(item.meta.get("changes") or (), 1))
    subject = item.meta.get("abnormality")
    text = prompts.render(
        PROMPT, task=TASK_NAMES.get(item.task, item.task), question=item.question, options="\n".join(f"{k}. {v}" for k, v in item.options.items()),
        gold=f"{item.answer}. {item.options.get(str(item.answer), '')}",
        chosen="(no valid answer)" if chosen is None else f"{chosen}. {item.options.get(str(chosen).upper(), '')}",
        annotation=(f"({subject})\n{annotation}" if subject and annotation else annotation) or "(not recorded)",
        descriptions=descriptions or "(none: the model answered directly)", output=output or "(no output)")
    return Request((Message("user", (TextPart(text),)),), judge.config)


def judge_errors(run_dir: str | Path, judge: Judge, *, prompts: PromptSet | None = None,
                 cache_path: str | Path | None = None, no_cache: bool = False, allow_remote_data: bool = False,
                 licence: str | None = None, progress: bool = True) -> dict[str, Any]:
    """Label every wrong answer of a run (all repeats) with the judge; returns the ``judge`` block of ``scores.json``."""
    from medtemporal.backends import load
    from medtemporal.runner.guard import guard_backend

    prompts = prompts or PromptSet()
    loaded = load_outcomes(run_dir)
    backend = load(judge.uri)
    if judge.concurrency is not None:
        if judge.concurrency < 1:
            raise InvalidInputError(f"--judge-concurrency must be at least 1, not {judge.concurrency}.")
        backend.concurrency = judge.concurrency
    guard_backend(backend, loaded.bench.manifest.benchmark, licence or loaded.bench.manifest.licence, allow_remote_data)
    ident = identity(judge, backend, prompts)
    judge_id = content_hash(ident)
    path = Path(run_dir) / FILE
    done = _done(path, judge_id)
    pending: list[tuple[Item, int, str, Request]] = []
    counts = {"wrong": 0, "from_file": 0, "asked": 0, "from_cache": 0, "errors": 0}
    for r, outcomes in enumerate(loaded.by_repeat):
        for o in outcomes:
            if is_correct(o.item, o.answer):
                continue
            counts["wrong"] += 1
            p = loaded.latest.get((o.item.id, r))
            output = p.raw_output if p else None
            sha = hashlib.sha256((output or "").encode()).hexdigest()[:16]
            if (o.item.id, r, sha) in done:
                counts["from_file"] += 1
                continue
            describe = next((c.get("output") for c in (p.calls if p else ()) if c.get("stage") == "describe"), None)
            pending.append((o.item, r, sha, request_for(o.item, output, describe, judge, prompts, o.answer)))
    ask_pending(backend, bool(pending), no_cache, cache_path,
                lambda cache: _ask_all(backend, judge, judge_id, pending, path, cache, counts, progress))
    labels = stored_labels(run_dir, judge_id)
    return {"id": judge_id, **ident, "counts": {
        **counts, "labelled": sum(v is not None for v in labels.values()),
        "unparseable": sum(v is None for v in labels.values())}}


def _done(path: Path, judge_id: str) -> set[tuple[str, int, str]]:
    """(item, repeat, output hash) already settled by ``judge_id``; a line cut short by a kill is removed first."""
    return {(j.item_id, j.repeat, j.output_sha) for j in settled(path, ErrorJudgement, judge_id)}


async def _ask_all(backend: Backend, judge: Judge, judge_id: str, pending: list[tuple[Item, int, str, Request]],
                   path: Path, cache: ResponseCache | None, counts: dict[str, int], progress: bool) -> None:
    with path.open("a", encoding="utf-8") as log:

        def record(k: int, raw: str | None, error: str | None, source: str) -> None:
            item, repeat, sha, _ = pending[k]
            counts[source] += 1
            label = parse_error_type(raw) if error is None else None
            line = ErrorJudgement(judge=judge_id, item_id=item.id, repeat=repeat, output_sha=sha, raw=raw, label=label,
                                  status="error" if error else ("ok" if label else "unparseable"), error=error)
            log.write(dumps(line) + "\n")
            log.flush()

        await ask_all(backend, judge, [p[3] for p in pending], cache, record, desc="error types", unit="label",
                      progress=progress)


def stored_labels(run_dir: str | Path, judge_id: str | None = None) -> dict[tuple[str, int], str | None]:
    """(item id, repeat) → label (None: unparseable) of ``judge_id``, or of the judge that wrote last; errors left out."""
    path = Path(run_dir) / FILE
    if not path.is_file():
        return {}
    lines = [j for j in iter_jsonl(path, ErrorJudgement) if j.status != "error"]
    if judge_id is None and lines:
        judge_id = lines[-1].judge
    return {(j.item_id, j.repeat): j.label for j in lines if j.judge == judge_id}


def judge_pass(run_dir: Path, judge: Judge, options: Mapping[str, Any]) -> dict[str, Any]:
    """The spec's ``judge_pass`` hook: `judge_errors` with the ``score --judge`` options."""
    return judge_errors(run_dir, judge, **options)


_BLOCK = re.compile(r"\[(?P<name>[A-Za-z' -]+)\]\n(?P<body>.*?)(?=\n\[[A-Za-z' -]+\]\n|\n\nAssign the ONE)", re.S)


class ScriptedErrorJudge(Backend):
    """Labels from the request's text by rules, in the judge's output format; a stand-in, not a judge of truth.

    Local misinterpretation when a stage-1 description names a change kind (`analyses.CHANGE_WORDS`) other than the
    annotated one; otherwise abstention (chose the null option), forced choice (gold null, or an ICR statement),
    exclusivity (TEL) or global integration (GTS).
    """

    cacheable = False

    def __init__(self, uri: str) -> None:
        super().__init__(uri=uri, concurrency=16)

    async def generate(self, request: Request) -> Response:
        from medtemporal.benchmarks.mi_cxr.analyses import CHANGE_WORDS, SAME, _interval_texts

        text = "\n".join(p.text for m in request.messages for p in m.parts if isinstance(p, TextPart))
        blocks = {m["name"]: m["body"].strip() for m in _BLOCK.finditer(text)}
        if "Model's Choice" not in blocks:
            raise RequestError(f"{self.uri} labels only requests written with the {PROMPT} prompt.",
                               reason="not_an_error_judge_request")
        annotated = re.findall(r"^T\d → T\d: (\w+)$", blocks.get("Annotated Interval Changes", ""), re.M)
        described = _interval_texts(blocks.get("Model's Interval Descriptions", ""), len(annotated) + 1)
        for said, change in zip(described, annotated):
            kinds = {k for k, pattern in CHANGE_WORDS.items() if said and re.search(pattern, said, re.I)}
            if len(kinds) == 1 and kinds != {SAME.get(change, change)}:
                return Response("Error type: local_misinterpretation", model=self.uri)
        chosen, gold = blocks["Model's Choice"][:1], blocks.get("Correct Answer", "")[:1]
        task = blocks.get("Task", "").split(" ", 1)[0]
        if chosen == NULL_LETTER:
            label = "abstention"
        elif gold == NULL_LETTER or task in ("ICR", "ICR-V"):
            label = "forced_choice"
        elif task == "TEL":
            label = "exclusivity"
        else:
            label = "global_integration"
        return Response(f"Error type: {label}", model=self.uri)

    def identity(self) -> dict[str, Any]:
        return {"uri": self.uri, "instrument": "scripted stand-in for the error-type judge (rules on the prompt text)"}


@register("backend", "micxr-scripted-judge", example="micxr-scripted-judge:errors",
          description="scripted stand-in for MI-CXR's error-type judge (demos, tests; not a judge of truth)")
def load_scripted_error_judge(uri: str, target: str) -> Backend:
    """The scripted error judge named by ``target`` (only ``errors``)."""
    if target != "errors":
        raise UnknownNameError(f"Unknown scripted error judge {target!r}. Available: errors.")
    return ScriptedErrorJudge(uri)
