"""MI-CXR's judge-based error taxonomy (paper appendix G): each wrong answer labelled by the LLM judge.

Rules label what the item decides (`analyses.rule_label`); the paper's types
that need reading the model's output (local interval misinterpretation,
abstention, forced choice, temporal exclusivity, global integration; section 5,
appendix F) come from the judge of `medtemporal.scoring.judge`: the same
`Judge` settings (``medtemporal score RUN --judge URI`` and its options), the
judge opened as a model session (guarded, cached and retried like every call). The prompt is
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

import asyncio
import hashlib
import re
from pathlib import Path
from typing import Any, Literal, Mapping

from medtemporal.family import (
    Backend, Item, Message, PromptSet, Record, Request, RequestError, Response, TextPart, content_hash, is_correct,
    register,
)
from medtemporal.backends.session import DataUse, ModelSession, Reply
from medtemporal.backends.uri import shown_uri
from medtemporal.benchmarks.mi_cxr.balance import NULL_LETTER
from medtemporal.benchmarks.mi_cxr.stage1 import CHANGE_WORDS, SAME, interval_texts
from medtemporal.errors import BackendError, UnknownNameError
from medtemporal.runs import RunFolder
from medtemporal.scoring.judge import Judge
from medtemporal.scoring.outcomes import RunOutcomes

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


def identity(judge: Judge, session: ModelSession, prompts: PromptSet) -> dict[str, Any]:
    """What decides a label: model, settings, the prompt's sha256 and the parser (recorded in ``scores.json``)."""
    return {"uri": shown_uri(judge.uri), "backend": session.identity(), "config": dict(judge.config.__dict__),
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


def judge_errors(loaded: RunOutcomes, judge: Judge, *, prompts: PromptSet | None = None,
                 cache_path: Any = None, no_cache: bool = False, allow_remote_data: bool = False,
                 licence: str | None = None, progress: bool = True) -> dict[str, Any]:
    """Label every wrong answer of a run (all repeats; ``loaded`` as scoring read it) with the judge; returns the
    ``judge`` block of ``scores.json``.

    The caller holds the folder's writer lock (``medtemporal score --judge`` does).
    """
    folder = loaded.folder
    prompts = prompts or PromptSet()
    use = DataUse(loaded.bench.manifest.benchmark, licence or loaded.bench.manifest.licence,  # type: ignore[arg-type]
                  allow_remote_data)
    session = judge.session(use, cache_path=cache_path, no_cache=no_cache)
    ident = identity(judge, session, prompts)
    judge_id = content_hash(ident)
    log = folder.log(FILE, ErrorJudgement)
    done = set(log.resume(key=lambda j: (j.judge, j.item_id, j.repeat, j.output_sha), keep=lambda j: j.status != "error"))
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
            if (judge_id, o.item.id, r, sha) in done:
                counts["from_file"] += 1
                continue
            describe = next((c.get("output") for c in (p.calls if p else ()) if c.get("stage") == "describe"), None)
            pending.append((o.item, r, sha, request_for(o.item, output, describe, judge, prompts, o.answer)))

    def record(k: int, reply: Reply | None, error: BackendError | None) -> None:
        item, repeat, sha, _ = pending[k]
        counts["errors" if error else ("from_cache" if reply is not None and reply.cached else "asked")] += 1
        raw = reply.response.text if reply is not None else None
        label = parse_error_type(raw) if error is None else None
        log.append(ErrorJudgement(judge=judge_id, item_id=item.id, repeat=repeat, output_sha=sha, raw=raw, label=label,
                                  status="error" if error else ("ok" if label else "unparseable"),
                                  error=str(error) if error else None))

    async def ask() -> None:
        try:
            if pending:
                await session.ask_each([p[3] for p in pending], record, desc="error types", unit="label",
                                       progress=progress)
        finally:
            log.close()
            await session.aclose()

    asyncio.run(ask())
    labels = stored_labels(folder, judge_id)
    labelled = sum(v is not None for v in labels.values())
    return {"id": judge_id, **ident, "counts": {  # "judged" and "unparseable" as every judge block counts them
        **counts, "labelled": labelled, "judged": labelled, "unparseable": sum(v is None for v in labels.values())}}


def stored_labels(folder: str | Path | RunFolder, judge_id: str | None = None) -> dict[tuple[str, int], str | None]:
    """(item id, repeat) → label (None: unparseable) of ``judge_id``, or of the judge that wrote last; errors left out."""
    lines = [j for j in RunFolder.of(folder).log(FILE, ErrorJudgement).records() if j.status != "error"]
    if judge_id is None and lines:
        judge_id = lines[-1].judge
    return {(j.item_id, j.repeat): j.label for j in lines if j.judge == judge_id}


def judge_pass(loaded: RunOutcomes, judge: Judge, options: Mapping[str, Any]) -> tuple[dict[str, Any], None]:
    """The spec's ``judge`` (`medtemporal.contract.JudgeHook`): `judge_errors` with the ``score --judge`` options;
    no verdict feeds a metric."""
    return judge_errors(loaded, judge, **options), None


_BLOCK = re.compile(r"\[(?P<name>[A-Za-z' -]+)\]\n(?P<body>.*?)(?=\n\[[A-Za-z' -]+\]\n|\n\nAssign the ONE)", re.S)


class ScriptedErrorJudge(Backend):
    """Labels from the request's text by rules, in the judge's output format; a stand-in, not a judge of truth.

    Local misinterpretation when a stage-1 description names a change kind (`stage1.CHANGE_WORDS`) other than the
    annotated one; otherwise abstention (chose the null option), forced choice (gold null, or an ICR statement),
    exclusivity (TEL) or global integration (GTS).
    """

    cacheable = False

    def __init__(self, uri: str) -> None:
        super().__init__(uri=uri, concurrency=16)

    async def generate(self, request: Request) -> Response:
        text = "\n".join(p.text for m in request.messages for p in m.parts if isinstance(p, TextPart))
        blocks = {m["name"]: m["body"].strip() for m in _BLOCK.finditer(text)}
        if "Model's Choice" not in blocks:
            raise RequestError(f"{self.uri} labels only requests written with the {PROMPT} prompt.",
                               reason="not_an_error_judge_request")
        annotated = re.findall(r"^T\d → T\d: (\w+)$", blocks.get("Annotated Interval Changes", ""), re.M)
        described = interval_texts(blocks.get("Model's Interval Descriptions", ""), len(annotated) + 1)
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
