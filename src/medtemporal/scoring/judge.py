"""The LLM judge engine: a rubric's verdicts on open answers, judged reproducibly and resumably.

A `Rubric` (inspect's model-graded scorer takes its template the same way) is a
paper's: its system and user templates, the criteria it scores and the strict
parser of the judge's output; it lives in the family's folder (ELTLM's is
`medtemporal.benchmarks.eltlm.rubric`) and is named by the family's
`BenchmarkSpec.judge`. `judge_answers` asks any judge model — opened
as a `medtemporal.backends.session.ModelSession`, so guarded, cached and
retried like every call — for each item's answer, and also for its reference
answer and an empty answer (the calibration row: ``reference`` should score ≈
1, ``empty`` 0). Each verdict is appended to the run's ``judgements.jsonl``
the moment it arrives, keyed by judge, item, kind and answer hash, so a judge
pass killed half-way asks nothing twice when run again; verdicts of another
judge (URI, settings, templates: `Judge.identity`) are never mixed in. An
output the parser cannot read is its own bucket (``unparseable``), never a
zero; a call that failed is an ``error``, counted and asked again next time.

Verdicts reach metrics explicitly, on each outcome (`Outcome.verdict`):
`judged_share` builds a rubric criterion's metric (share of judged answers
scoring 1; a missing answer is 0 without a call) and ``judge_unparseable_rate``
is the share of answers whose verdict could not be read.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Literal, Mapping, Sequence

import numpy as np
from pydantic import ConfigDict

from medtemporal.backends.base import GenerateConfig, Message, Request, TextPart
from medtemporal.backends.session import DataUse, ModelSession, Reply, RetryPolicy
from medtemporal.backends.uri import shown_uri
from medtemporal.bounds import CONCURRENCY_MAX, check_range
from medtemporal.errors import BackendError, InvalidInputError
from medtemporal.prompts import PromptSet
from medtemporal.registry import register
from medtemporal.runs import RunFolder
from medtemporal.schema import Item, Licence, Record, content_hash
from medtemporal.scoring.metrics import Answer
from medtemporal.scoring.outcomes import RunOutcomes

Kind = Literal["answer", "reference", "empty"]
Status = Literal["ok", "unparseable", "error"]


@dataclass(frozen=True)
class Rubric:
    """A paper's judging rubric: templates, criteria and a strict parser.

    Attributes:
        name: what the rubric is (recorded), e.g. ``"ELTLM appendix A, Table 3"``.
        user: user template, rendered with ``question``, ``model_answer`` and ``reference_answer``.
        criteria: the scores a verdict holds, in order (``("accuracy", "completeness")``).
        parse: judge output → one 0/1 score per criterion, or None when it cannot be read strictly.
        parser: how ``parse`` reads (recorded).
        system: system template, if the rubric has one.
    """

    name: str
    user: str
    criteria: tuple[str, ...]
    parse: Callable[[str | None], tuple[int, ...] | None]
    parser: str
    system: str | None = None

    @property
    def templates(self) -> tuple[str, ...]:
        return tuple(t for t in (self.system, self.user) if t)

    def request(self, item: Item, answer: str, config: GenerateConfig, prompts: PromptSet) -> Request:
        """The judge request for one answer."""
        user = prompts.render(self.user, question=item.question, model_answer=answer,
                              reference_answer=item.reference or str(item.answer))
        messages = (Message("user", (TextPart(user),)),)
        if self.system:
            messages = (Message("system", (TextPart(prompts.render(self.system)),)), *messages)
        return Request(messages, config)

    def __call__(self, run: RunOutcomes, judge: Judge, options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Verdict]]:
        """The rubric as the family's judge (`medtemporal.contract.JudgeHook`): every answer of ``run`` judged
        (`judge_answers` with ``options``); the ``judge`` block of ``scores.json`` and each item's verdict.

        Raises:
            InvalidInputError: the run has several repeats (the judge scores runs of one repeat only).
        """
        repeats = len(run.by_repeat)
        if repeats > 1:
            raise InvalidInputError(f"{run.path} has {repeats} repeats; the LLM judge scores runs of one "
                                    "repeat only, so score it without --judge or judge a run made without "
                                    "--repeats.")
        outcomes = run.by_repeat[0] if run.by_repeat else []
        answers = {o.item.id: (o.answer if isinstance(o.answer, str) else None) for o in outcomes}
        judged = judge_answers(run.folder, run.items, answers, judge, self, **options)
        return judged.summary(), {o.item.id: judged.verdict(o.item.id) for o in outcomes}


@dataclass(frozen=True)
class Judge:
    """Which model judges and how: URI, generation settings and call policy."""

    uri: str
    temperature: float = 0.0
    max_tokens: int = 64
    seed: int | None = None
    concurrency: int | None = None
    """Calls in flight (default: the backend's)."""
    attempts: int = RetryPolicy.max_attempts
    timeout_s: float | None = RetryPolicy.timeout_s

    @property
    def config(self) -> GenerateConfig:
        """Generation settings of every judge call."""
        return GenerateConfig(temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed)

    def session(self, use: DataUse, **policy: Any) -> ModelSession:
        """The judge model as a session (guarded for ``use``, cached, retried with the judge's policy)."""
        check_range(self.concurrency, "--judge-concurrency", 1, CONCURRENCY_MAX)
        retry = RetryPolicy(max_attempts=self.attempts, timeout_s=self.timeout_s)
        return ModelSession.open(self.uri, use=use, retry=retry, concurrency=self.concurrency, **policy)


class Judgement(Record):
    """One verdict line of ``judgements.jsonl``."""

    model_config = ConfigDict(frozen=True, extra="ignore")  # lines of earlier versions are read, then ignored

    judge: str
    """Hash of the judge's identity."""
    item_id: str
    kind: Kind
    answer_sha: str
    raw: str | None
    scores: dict[str, int] | None = None
    status: Status
    error: str | None = None


@dataclass(frozen=True)
class Verdict:
    """A judged answer as metrics read it: one 0/1 score per criterion (None unless ``ok`` or ``missing``)."""

    scores: dict[str, int] | None
    status: Status | Literal["missing"]


@dataclass
class JudgePass:
    """What one judge pass decided and did."""

    identity: dict[str, Any]
    judge_id: str
    criteria: tuple[str, ...]
    verdicts: dict[tuple[Kind, str], Verdict] = field(default_factory=dict)
    asked: int = 0
    from_cache: int = 0
    from_file: int = 0
    errors: int = 0
    error_example: str | None = None
    unparseable_example: str | None = None
    """The first verdict of an answer the rubric's parser could not read (said when most could not be)."""

    def verdict(self, item_id: str) -> Verdict:
        """The verdict of an item's answer (``error`` when it has none)."""
        return self.verdicts.get(("answer", item_id), Verdict(None, "error"))

    def summary(self) -> dict[str, Any]:
        """The ``judge`` block of ``scores.json``: identity, counts and the calibration row."""
        answers = [v for (k, _), v in self.verdicts.items() if k == "answer"]
        return {
            "id": self.judge_id,
            **self.identity,
            "counts": {
                "judged": sum(v.status == "ok" for v in answers),
                "unparseable": sum(v.status == "unparseable" for v in answers),
                "errors": sum(v.status == "error" for v in answers),
                "missing_answers": sum(v.status == "missing" for v in answers),
                "asked": self.asked, "from_cache": self.from_cache, "from_file": self.from_file,
                "failed_calls": self.errors,
            },
            "error_example": self.error_example,
            "unparseable_example": self.unparseable_example,
            "calibration": {k: self._calibration(k) for k in ("reference", "empty")},
        }

    def _calibration(self, kind: Kind) -> dict[str, Any]:
        ok = [v for (k, _), v in self.verdicts.items() if k == kind and v.status == "ok"]
        bad = sum(1 for (k, _), v in self.verdicts.items() if k == kind and v.status != "ok")
        row: dict[str, Any] = {"n": len(ok), "unparseable_or_error": bad}
        for criterion in self.criteria:
            values = [v.scores[criterion] for v in ok if v.scores]
            row[criterion] = round(float(np.mean(values)), 6) if values else None
        return row


def answer_sha(text: str) -> str:
    """The short hash that keys a judged text in a judge log."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def identity(judge: Judge, session: ModelSession, rubric: Rubric, prompts: PromptSet) -> dict[str, Any]:
    """What decides a verdict: model, settings, the rubric and its templates' sha256 (recorded in ``scores.json``)."""
    text = "\0".join(prompts.text(t) for t in rubric.templates)
    return {
        "uri": shown_uri(judge.uri),
        "backend": session.identity(),
        "config": asdict(judge.config),
        "rubric": rubric.name,
        "prompts": list(rubric.templates),
        "prompt_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "parser": rubric.parser,
    }


def judge_answers(
    folder: RunFolder,
    items: Sequence[Item],
    answers: dict[str, str | None],
    judge: Judge,
    rubric: Rubric,
    *,
    prompts: PromptSet | None = None,
    cache_path: Any = None,
    no_cache: bool = False,
    allow_remote_data: bool = False,
    licence: Licence | Callable[[], Licence] = "open",
    progress: bool = True,
    calibrate: bool = True,
) -> JudgePass:
    """Judge each item's answer, reference and an empty answer with ``rubric``; resume from ``judgements.jsonl``.

    Args:
        folder: The run folder (its writer lock held by the caller); ``judgements.jsonl`` is appended there.
        items: The items scored.
        answers: Item id → the model's answer text (None: no answer, scored 0 without a call).
        judge: The judge model and settings.
        rubric: The family's rubric.
        prompts: Templates, replaceable.
        cache_path: Response cache file (default: the shared one).
        no_cache: Neither read nor write the response cache (``judgements.jsonl`` still resumes).
        allow_remote_data: Allow credentialed text to go to a non-local judge endpoint.
        licence: The licence of what the run answered (credentialed text is guarded), or a function judging it
            (`medtemporal.provenance.run_licence` of the run's images), called only for an off-host judge.
        progress: Show a progress bar on a terminal.
        calibrate: Also judge each reference and an empty answer (the calibration row); False for a judge as
            costly as GREEN, where only the answers are asked.
    """
    prompts = prompts or PromptSet()
    use = DataUse(items[0].benchmark if items else "", licence, allow_remote_data)  # type: ignore[arg-type]
    session = judge.session(use, cache_path=cache_path, no_cache=no_cache)
    ident = identity(judge, session, rubric, prompts)
    result = JudgePass(ident, content_hash({"engine": 2, **ident}), rubric.criteria)
    todo: list[tuple[Kind, Item, str]] = []
    for item in items:
        answer = answers.get(item.id)
        if answer is None:
            result.verdicts[("answer", item.id)] = Verdict(dict.fromkeys(rubric.criteria, 0), "missing")
        else:
            todo.append(("answer", item, answer))
        if calibrate:
            todo += [("reference", item, item.reference or str(item.answer)), ("empty", item, "")]
    log = folder.judgements(Judgement)
    done = log.resume(key=lambda j: (j.judge, j.kind, j.item_id, j.answer_sha), keep=lambda j: j.status != "error")
    pending = []
    for kind, item, text in todo:
        line = done.get((result.judge_id, kind, item.id, answer_sha(text)))
        if line is not None:
            result.verdicts[(kind, item.id)] = Verdict(line.scores, line.status)
            result.from_file += 1
            if line.status == "unparseable" and kind == "answer":
                result.unparseable_example = result.unparseable_example or line.raw
        else:
            pending.append((kind, item, text))

    def record(k: int, reply: Reply | None, error: BackendError | None) -> None:
        kind, item, text = pending[k]
        raw = reply.response.text if reply is not None else None
        parsed = rubric.parse(raw) if error is None else None
        status: Status = "error" if error else ("ok" if parsed else "unparseable")
        if error is not None:
            result.errors += 1
            result.error_example = result.error_example or str(error)
        elif reply is not None and reply.cached:
            result.from_cache += 1
        else:
            result.asked += 1
        scores = dict(zip(rubric.criteria, parsed)) if parsed else None
        if status == "unparseable" and kind == "answer":
            result.unparseable_example = result.unparseable_example or raw
        log.append(Judgement(judge=result.judge_id, item_id=item.id, kind=kind, answer_sha=answer_sha(text), raw=raw,
                             scores=scores, status=status, error=str(error) if error else None))
        result.verdicts[(kind, item.id)] = Verdict(scores, status)

    async def ask() -> None:
        try:
            if pending:
                requests = [rubric.request(item, text, judge.config, prompts) for _, item, text in pending]
                await session.ask_each(requests, record, desc="judging", unit="verdict", progress=progress)
        finally:
            log.close()
            await session.aclose()

    asyncio.run(ask())
    return result


def stored_verdicts(folder: RunFolder, judge_id: str) -> dict[str, Judgement]:
    """Item id → the last parsed verdict on its answer by the judge ``judge_id`` (``scores.json``'s ``judge.id``)."""
    return {j.item_id: j for j in folder.judgements(Judgement).records()
            if j.judge == judge_id and j.kind == "answer" and j.status == "ok"}


def reduce_judged(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Share of 1s among judged items: ``sums[..., 0] / sums[..., 1]`` (NaN when none was judged)."""
    judged = sums[..., 1]
    return np.where(judged > 0, sums[..., 0] / np.where(judged > 0, judged, 1), np.nan)


def judged_share(criterion: str) -> Callable[[Sequence[Item], Sequence[Answer], Sequence[Any]], np.ndarray]:
    """The per-sample statistics of a rubric criterion's metric: (score, judged) per answer, where unparseable
    verdicts and failed calls count as not judged and a missing answer as judged 0. Register the result with
    ``needs_judge=True`` and ``aggregation=reduce_judged``."""

    def per_sample(items: Sequence[Item], answers: Sequence[Answer], verdicts: Sequence[Any]) -> np.ndarray:
        _require(verdicts, len(items))
        out = np.zeros((len(items), 2))
        for row, v in enumerate(verdicts):
            if v.status in ("ok", "missing"):
                out[row] = ((v.scores or {}).get(criterion, 0), 1)
        return out

    per_sample.__name__ = f"judge_{criterion}"
    return per_sample


def _require(verdicts: Sequence[Any], n: int) -> None:
    if len(verdicts) != n or any(v is None for v in verdicts):
        raise InvalidInputError("The judge metrics need a judge; score with `medtemporal score RUN --judge URI`.")


@register("metric", "judge_unparseable_rate", higher_is_better=False, aggregation="mean", percent=True,
          needs_judge=True, description="share of answers whose judge verdict could not be parsed or failed")
def judge_unparseable_rate(items: Sequence[Item], answers: Sequence[Answer], verdicts: Sequence[Any]) -> np.ndarray:
    """1.0 where the verdict was unparseable or the judge call failed."""
    _require(verdicts, len(items))
    return np.fromiter((v.status in ("unparseable", "error") for v in verdicts), float, len(items))
