"""The LLM judge: binary Accuracy and Completeness of open answers, judged reproducibly.

The rubric is ELTLM's (paper ``seeds/003`` appendix A, Table 3): a system role
(prompt ``llm_judge_system``) and a user template with ``[Question]``, ``[Model
Answer]`` and ``[Reference Answer]`` blocks and the two binary criteria (prompt
``llm_judge``); the judge is told to output only two labelled lines.
`parse_verdict` reads them strictly; an output it cannot read is its own
bucket (``unparseable``), never a zero.

Judge calls go through the backend layer like model calls: any model URI,
``concurrency`` calls in flight, retries with backoff (`RetryPolicy`), the
response cache, and resume: each verdict is appended to the run's
``judgements.jsonl`` the moment it arrives, keyed by judge, item, kind and
answer hash, so a judge pass killed half-way asks nothing twice when run
again. A judge is identified by its URI, backend identity, generation
settings and the sha256 of both templates (`Judge.identity`); verdicts of
another judge are never mixed in. Besides the model's answers, every pass
judges each item's reference answer and an empty answer: the calibration row
(``reference`` should be ≈ 1/1, ``empty`` 0/0).

Metrics (kind ``metric``, ``needs_judge``): ``judge_accuracy`` and
``judge_completeness`` (share of judged items scoring 1; unparseable verdicts
left out; a missing answer is 0 without a call), and
``judge_unparseable_rate``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import sys
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Coroutine, Iterator, Literal, Sequence, TypeVar

import numpy as np
from tqdm import tqdm

from medtemporal.backends.base import Backend, BackendError, GenerateConfig, Message, Request, TextPart
from medtemporal.backends.uri import shown_uri
from medtemporal.errors import InvalidInputError
from medtemporal.prompts import PromptSet
from medtemporal.registry import register
from medtemporal.runner.cache import ResponseCache, default_cache_path, request_key
from medtemporal.runner.retry import RetryPolicy, call_with_retries
from medtemporal.schema import Item, Record, content_hash, dumps, iter_jsonl
from medtemporal.scoring.metrics import Answer
from medtemporal.writes import disk_error

R = TypeVar("R", bound=Record)

JUDGEMENTS = "judgements.jsonl"
SYSTEM_PROMPT = "llm_judge_system"
USER_PROMPT = "llm_judge"
Kind = Literal["answer", "reference", "empty"]
Status = Literal["ok", "unparseable", "error"]

_LABELS = ("accuracy", "completeness")
_LINE = re.compile(
    r"^[\s>*_#`-]*(?:\d+[.)]\s*)?[*_`]*\s*(accuracy|completeness)\s*(?:\(\s*0\s*/\s*1\s*\))?\s*[*_`]*\s*[:=：]"
    r"\s*[*_`]*\s*([01])(?:\s*/\s*1)?(?![\d.,]\d|\d)(.*)$",
    re.IGNORECASE,
)
_MENTION = re.compile(r"\b(accuracy|completeness)\b", re.IGNORECASE)


def parse_verdict(text: str | None) -> tuple[int, int] | None:
    """(accuracy, completeness) from a judge's output, or None when it cannot be read strictly.

    Each score must sit on its own line as ``Label: 0|1`` (``Label (0/1): 1``,
    ``**Accuracy:** 1``, ``Accuracy: 1/1`` and a numbered or bulleted line are
    read; prose on other lines is ignored). A missing label, a label whose
    line carries no 0/1 score, two different scores for one label, or both
    labels on one line make the output unparseable.

    >>> parse_verdict("Accuracy: 1\\nCompleteness: 0")
    (1, 0)
    >>> parse_verdict("Accuracy: 1") is None
    True
    """
    if not text:
        return None
    found: dict[str, set[int]] = {k: set() for k in _LABELS}
    for line in text.splitlines():
        mentions = {m.lower() for m in _MENTION.findall(line)}
        match = _LINE.match(line)
        if match:
            label = match.group(1).lower()
            if _MENTION.search(match.group(3)) and mentions >= set(_LABELS):
                return None  # both labels on one line
            found[label].add(int(match.group(2)))
        elif mentions and re.match(r"^[\s>*_#`-]*(?:\d+[.)]\s*)?[*_`]*\s*(accuracy|completeness)\s*[*_`]*\s*[:=：]",
                                   line, re.IGNORECASE):
            return None  # a label line whose score is not 0 or 1
    if any(len(v) != 1 for v in found.values()):
        return None
    return found["accuracy"].pop(), found["completeness"].pop()


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

    def identity(self, backend: Backend, prompts: PromptSet) -> dict[str, Any]:
        """What decides a verdict: model, settings and the templates' sha256 (recorded in ``scores.json``)."""
        text = prompts.text(SYSTEM_PROMPT) + "\0" + prompts.text(USER_PROMPT)
        return {
            "uri": shown_uri(self.uri),
            "backend": backend.identity(),
            "config": asdict(self.config),
            "prompts": [SYSTEM_PROMPT, USER_PROMPT],
            "prompt_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "parser": "strict two-line (medtemporal.scoring.judge.parse_verdict)",
        }


class Judgement(Record):
    """One verdict line of ``judgements.jsonl``."""

    judge: str
    """Hash of the judge's identity."""
    item_id: str
    kind: Kind
    answer_sha: str
    raw: str | None
    accuracy: int | None = None
    completeness: int | None = None
    status: Status
    error: str | None = None


@dataclass(frozen=True)
class Verdict:
    """A judged answer as metrics read it."""

    accuracy: int | None
    completeness: int | None
    status: Status | Literal["missing"]


@dataclass
class JudgePass:
    """What one judge pass decided and did."""

    identity: dict[str, Any]
    judge_id: str
    verdicts: dict[tuple[Kind, str], Verdict]
    asked: int = 0
    from_cache: int = 0
    from_file: int = 0
    errors: int = 0

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
            },
            "calibration": {k: self._calibration(k) for k in ("reference", "empty")},
        }

    def _calibration(self, kind: Kind) -> dict[str, Any]:
        ok = [v for (k, _), v in self.verdicts.items() if k == kind and v.status == "ok"]
        bad = sum(1 for (k, _), v in self.verdicts.items() if k == kind and v.status != "ok")
        mean = (lambda xs: round(float(np.mean(xs)), 6) if xs else None)
        return {"n": len(ok), "unparseable_or_error": bad, "accuracy": mean([v.accuracy for v in ok]),
                "completeness": mean([v.completeness for v in ok])}


def _answer_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def judge_answers(
    run_dir: str | Path,
    items: Sequence[Item],
    answers: dict[str, str | None],
    judge: Judge,
    *,
    prompts: PromptSet | None = None,
    cache_path: str | Path | None = None,
    no_cache: bool = False,
    allow_remote_data: bool = False,
    licence: str = "open",
    progress: bool = True,
) -> JudgePass:
    """Judge each item's answer, reference and an empty answer; resume from ``judgements.jsonl``.

    Args:
        run_dir: Run folder; ``judgements.jsonl`` is appended there.
        items: The items scored.
        answers: Item id → the model's answer text (None: no answer, scored 0 without a call).
        judge: The judge model and settings.
        prompts: Templates (``llm_judge_system``, ``llm_judge``), replaceable.
        cache_path: Response cache file (default `default_cache_path`).
        no_cache: Neither read nor write the response cache (``judgements.jsonl`` still resumes).
        allow_remote_data: Allow credentialed text to go to a non-local judge endpoint.
        licence: The benchmark's licence (credentialed text is guarded).
        progress: Show a progress bar on a terminal.
    """
    from medtemporal.backends import load
    from medtemporal.runner.guard import guard_backend

    prompts = prompts or PromptSet()
    backend = load(judge.uri)
    if judge.concurrency is not None:
        if judge.concurrency < 1:
            raise InvalidInputError(f"--judge-concurrency must be at least 1, not {judge.concurrency}.")
        backend.concurrency = judge.concurrency
    guard_backend(backend, items[0].benchmark if items else "", licence, allow_remote_data)
    identity = judge.identity(backend, prompts)
    result = JudgePass(identity, content_hash(identity), {})
    todo: list[tuple[Kind, Item, str]] = []
    for item in items:
        reference = item.reference or str(item.answer)
        answer = answers.get(item.id)
        if answer is None:
            result.verdicts[("answer", item.id)] = Verdict(0, 0, "missing")
        else:
            todo.append(("answer", item, answer))
        todo += [("reference", item, reference), ("empty", item, "")]
    path = Path(run_dir) / JUDGEMENTS
    done = _done(path, result.judge_id)
    pending = []
    for kind, item, text in todo:
        line = done.get((kind, item.id, _answer_sha(text)))
        if line is not None:
            result.verdicts[(kind, item.id)] = Verdict(line.accuracy, line.completeness, line.status)
            result.from_file += 1
        else:
            pending.append((kind, item, text))
    ask_pending(backend, bool(pending), no_cache, cache_path,
                lambda cache: _ask_all(backend, judge, prompts, pending, result, path, cache, progress))
    return result


def ask_pending(backend: Backend, anything: bool, no_cache: bool, cache_path: str | Path | None,
                ask: Callable[[ResponseCache | None], Coroutine[Any, Any, None]]) -> None:
    """Run ``ask(cache)`` with the response cache open (none with ``no_cache`` or an uncacheable backend),
    or, when there is nothing to ask, just close the backend."""
    if not anything:
        asyncio.run(backend.aclose())
        return
    cache = None if no_cache or not backend.cacheable else ResponseCache(cache_path or default_cache_path())
    try:
        asyncio.run(ask(cache))
    finally:
        if cache is not None:
            cache.close()


def _done(path: Path, judge_id: str) -> dict[tuple[str, str, str], Judgement]:
    """Settled verdicts (ok or unparseable) of ``judge_id`` already in ``path``; errors are asked again.

    A last line cut short by a kill (no final newline) is removed first, so the pass resumes cleanly.
    """
    return {(j.kind, j.item_id, j.answer_sha): j for j in settled(path, Judgement, judge_id)}


def settled(path: Path, record: type[R], judge_id: str) -> Iterator[R]:
    """The records of ``judge_id`` in the JSON-lines file ``path`` whose status is not ``error`` (those are
    asked again); a last line cut short by a kill (no final newline) is removed first."""
    if not path.is_file():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as fh:
            fh.truncate(data.rfind(b"\n") + 1)
    yield from (r for r in iter_jsonl(path, record) if r.judge == judge_id and r.status != "error")


def request_for(item: Item, answer: str, judge: Judge, prompts: PromptSet) -> Request:
    """The judge request for one answer: the rubric's system message and the filled user template."""
    user = prompts.render(USER_PROMPT, question=item.question, model_answer=answer,
                          reference_answer=item.reference or str(item.answer))
    return Request((Message("system", (TextPart(prompts.render(SYSTEM_PROMPT)),)),
                    Message("user", (TextPart(user),))), judge.config)


async def ask_all(backend: Backend, judge: Judge, requests: Sequence[Request], cache: ResponseCache | None,
                  record: Callable[[int, str | None, str | None, str], None], *, desc: str, unit: str,
                  progress: bool) -> None:
    """Ask the judge every request (the cache first, then the backend with the judge's retries and
    concurrency) and hand each reply to ``record(index, text, error, source)`` as it comes, ``source``
    being ``from_cache``, ``asked`` or ``errors``; the backend is closed at the end."""
    gate = asyncio.Semaphore(max(1, backend.concurrency))
    policy = RetryPolicy(max_attempts=judge.attempts, timeout_s=judge.timeout_s)
    timeout = policy.timeout_s if backend.endpoint else None
    ident = backend.identity()
    bar = tqdm(total=len(requests), desc=desc, unit=unit, disable=not (progress and sys.stderr.isatty()))

    async def one(k: int, request: Request) -> None:
        key = request_key(ident, request)
        response = cache.get(key) if cache is not None else None
        source, error = "from_cache", None
        if response is None:
            try:
                response = await call_with_retries(lambda: backend.generate(request), policy,
                                                   timeout_s=timeout, slot=gate)
                source = "asked"
                if cache is not None:
                    cache.put(key, response)
            except BackendError as exc:
                source, error = "errors", str(exc)
        record(k, response.text if response is not None else None, error, source)
        bar.update()

    try:
        await asyncio.gather(*(one(k, r) for k, r in enumerate(requests)))
    finally:
        bar.close()
        await backend.aclose()


async def _ask_all(backend: Backend, judge: Judge, prompts: PromptSet, pending: list[tuple[Kind, Item, str]],
                   result: JudgePass, path: Path, cache: ResponseCache | None, progress: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        await _log_all(backend, judge, prompts, pending, result, path, cache, progress)
    except OSError as exc:  # a full or read-only disk: one sentence naming the folder (verdicts kept are kept)
        raise disk_error(exc, path) or exc from None


async def _log_all(backend: Backend, judge: Judge, prompts: PromptSet, pending: list[tuple[Kind, Item, str]],
                   result: JudgePass, path: Path, cache: ResponseCache | None, progress: bool) -> None:
    with path.open("a", encoding="utf-8") as log:

        def record(k: int, raw: str | None, error: str | None, source: str) -> None:
            kind, item, text = pending[k]
            setattr(result, source, getattr(result, source) + 1)
            parsed = parse_verdict(raw) if error is None else None
            status: Status = "error" if error else ("ok" if parsed else "unparseable")
            line = Judgement(judge=result.judge_id, item_id=item.id, kind=kind, answer_sha=_answer_sha(text), raw=raw,
                             accuracy=parsed[0] if parsed else None, completeness=parsed[1] if parsed else None,
                             status=status, error=error)
            log.write(dumps(line) + "\n")
            log.flush()
            result.verdicts[(kind, item.id)] = Verdict(line.accuracy, line.completeness, status)

        requests = [request_for(item, text, judge, prompts) for _, item, text in pending]
        await ask_all(backend, judge, requests, cache, record, desc="judging", unit="verdict", progress=progress)


_VERDICTS: ContextVar[dict[str, Verdict] | None] = ContextVar("judge_verdicts", default=None)


@contextlib.contextmanager
def use_verdicts(verdicts: dict[str, Verdict]) -> Iterator[None]:
    """Make item id → answer verdict available to the judge metrics while scoring."""
    token = _VERDICTS.set(verdicts)
    try:
        yield
    finally:
        _VERDICTS.reset(token)


def _verdicts(items: Sequence[Item]) -> list[Verdict]:
    verdicts = _VERDICTS.get()
    if verdicts is None:
        raise InvalidInputError("The judge metrics need a judge; score with `medtemporal score RUN --judge URI`.")
    return [verdicts.get(i.id, Verdict(None, None, "error")) for i in items]


def reduce_judged(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Share of 1s among judged items: ``sums[..., 0] / sums[..., 1]`` (NaN when none was judged)."""
    judged = sums[..., 1]
    return np.where(judged > 0, sums[..., 0] / np.where(judged > 0, judged, 1), np.nan)


def _judged(items: Sequence[Item], field: str) -> np.ndarray:
    out = np.zeros((len(items), 2))
    for row, v in enumerate(_verdicts(items)):
        if v.status in ("ok", "missing"):
            out[row] = (getattr(v, field) or 0, 1)
    return out


@register("metric", "judge_accuracy", higher_is_better=True, aggregation=reduce_judged, percent=True,
          needs_judge=True, description="LLM judge Accuracy (ELTLM appendix A): share of judged answers scored 1; "
          "unparseable verdicts left out and counted apart")
def judge_accuracy(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample (accuracy, judged) from the verdicts in scope (`use_verdicts`)."""
    return _judged(items, "accuracy")


@register("metric", "judge_completeness", higher_is_better=True, aggregation=reduce_judged, percent=True,
          needs_judge=True, description="LLM judge Completeness (ELTLM appendix A): share of judged answers "
          "scored 1; unparseable verdicts left out and counted apart")
def judge_completeness(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample (completeness, judged) from the verdicts in scope (`use_verdicts`)."""
    return _judged(items, "completeness")


@register("metric", "judge_unparseable_rate", higher_is_better=False, aggregation="mean", percent=True,
          needs_judge=True, description="share of answers whose judge verdict could not be parsed or failed")
def judge_unparseable_rate(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """1.0 where the verdict was unparseable or the judge call failed."""
    return np.fromiter((v.status in ("unparseable", "error") for v in _verdicts(items)), float, len(items))
