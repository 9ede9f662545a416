"""The run: items × model × protocol → ``predictions.jsonl``, resumable by construction.

Each answered item is appended to ``predictions.jsonl`` with one ``write``
the moment it is done (fsync'd in the background, see `medtemporal.append_log.AppendLog`),
after its response went into the response cache, so a run killed at any
moment resumes with the same command and asks the model nothing it had
already answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import inspect
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medtemporal._gc import start_up, started
from medtemporal.backends.base import (
    REFUSED,
    Backend,
    GenerateConfig,
    ImagePart,
    Request,
    Response,
    TextPart,
)
from medtemporal.append_log import AppendLog
from medtemporal.backends import preload as preload_backend
from medtemporal.backends.baselines import prior_pairs
from medtemporal.backends.session import DataUse, ModelSession
from medtemporal.benchmark import FIRST, SPREAD, Benchmark
from medtemporal.contract import spec
from medtemporal.benchmark import load as load_benchmark
from medtemporal.errors import BackendError, InvalidInputError
from medtemporal.image_roots import record_image
from medtemporal.models import Resolved
from medtemporal.models import resolve as resolve_model
from medtemporal.prompts import PromptSet
from medtemporal.provenance import run_licence
from medtemporal.protocols.base import Solver
from medtemporal.registry import lookup
from medtemporal.runner.config import build_config, now
from medtemporal.runner.options import RunOptions
from medtemporal.runner.progress import Progress
from medtemporal.runner.repeats import repeat_config, sample_index
from medtemporal.runs import RunFolder
from medtemporal.schema import Item, Prediction
from medtemporal.scoring import extract, score_run

BROKEN_STREAK = 25
"""At least this many failed items in a row stop a run (more with high concurrency)."""
REFUSED_STREAK = 5
"""This many items in a row whose connection was refused stop a run at once: nothing listens at the endpoint."""


@dataclass
class RunSummary:
    """What one call of `run` did."""

    run_dir: Path
    total: int
    """Answers the run asks for: items (after ``limit``) × repeats."""
    done: int = 0
    """Items answered in this call."""
    skipped_existing: int = 0
    """Items already answered in the folder (resumed)."""
    errors: dict[str, int] = field(default_factory=dict)
    """Items that failed in this call, by reason (``rate_limited``, ``bad_image`` ...)."""
    error_examples: dict[str, str] = field(default_factory=dict)
    """One error message per reason."""
    wall_s: float = 0.0
    requests: int = 0
    """Calls made to the model (retries included)."""
    cache_hits: int = 0
    truncated: int = 0
    """Items answered in this call whose reply was cut off at the token limit (``finish_reason`` length)."""
    input_tokens: int = 0
    output_tokens: int = 0
    stopped: str | None = None
    """Why the run stopped before the end (``--max-errors``, a broken endpoint), else None."""
    skipped: str | None = None
    """Which tasks the run left out and why (open tasks for a backend that answers only closed ones), else None."""
    scored: bool = False
    repeats: int = 1

    @property
    def n_errors(self) -> int:
        return sum(self.errors.values())

    @property
    def failure(self) -> str | None:
        """One sentence when the run failed as a whole (it stopped early, or every item it tried failed), else None."""
        if self.stopped:
            return f"The run stopped early: {self.stopped}"
        if self.n_errors and not self.done and not self.skipped_existing:
            reason = max(self.errors, key=self.errors.__getitem__)
            return (f"All {self.n_errors} items failed ({reason}: {self.error_examples[reason].rstrip('.')}); fix the "
                    "model or endpoint and run the same command again.")
        return None

    @property
    def pending(self) -> int:
        """Items neither answered nor failed (left by a stop)."""
        return self.total - self.skipped_existing - self.done - self.n_errors

    def __str__(self) -> str:
        lines = [
            f"{self.run_dir}: {self.done} answered, {self.skipped_existing} already done, "
            f"{self.n_errors} failed, {self.pending} pending of {self.total} "
            f"{'items' if self.repeats == 1 else f'answers ({self.repeats} repeats per item)'} in {self.wall_s:.1f} s "
            f"({self.requests} model calls, {self.cache_hits} from cache, "
            f"{self.input_tokens} input / {self.output_tokens} output tokens)."
        ]
        if self.skipped:
            lines.append(f"  {self.skipped}")
        if self.truncated:
            lines.append(f"  {self.truncated} answers were cut off at the token limit (truncated; raise --max-tokens).")
        for reason, n in sorted(self.errors.items(), key=lambda kv: -kv[1]):
            lines.append(f"  {n} × {reason}: {self.error_examples[reason]}")
        if self.n_errors:
            lines.append("  Failed items are tried again when the same command is run again.")
        if self.stopped:
            lines.append(f"Stopped early: {self.stopped}")
        return "\n".join(lines)


@dataclass
class _ItemCalls:
    """Accounting of the model calls made for one item."""

    request_hash: str = ""
    last: Request | None = None
    """The latest request: the one whose output is scored."""
    input_tokens: int = 0
    output_tokens: int = 0
    counted_tokens: bool = False
    finish_reason: str | None = None
    """The last call's, or ``length`` once any call was cut off."""

    def add(self, response: Response) -> None:
        if self.finish_reason != "length":
            self.finish_reason = response.finish_reason
        if response.input_tokens is not None or response.output_tokens is not None:
            self.counted_tokens = True
        self.input_tokens += response.input_tokens or 0
        self.output_tokens += response.output_tokens or 0


class _Runner:
    """The state of one run in progress."""

    def __init__(
        self,
        session: ModelSession,
        solver: Solver,
        config: GenerateConfig,
        image_root: Path,
        log: AppendLog[Prediction],
        summary: RunSummary,
        concurrency: int,
        max_errors: int | None,
    ) -> None:
        self.session = session
        self.solver = solver
        self.config = config
        self.image_root = image_root
        self.log = log
        self.summary = summary
        self.concurrency = concurrency
        self.max_errors = max_errors
        self.broken_after = max(BROKEN_STREAK, 2 * concurrency)
        """Failed items in a row that stop the run: a dead endpoint is not worth a weekend of retries."""
        self.streak = 0
        self.refused = 0
        """Items in a row whose connection was refused."""
        self.tasks: list[asyncio.Task[None]] = []

    async def generate(self, request: Request, calls: _ItemCalls, sample: int = 0) -> Response:
        """The ``generate`` a protocol gets: the session's call (image limit, cache, retries) and accounting.

        ``sample`` is the repeat index that keys the cache when repeats are distinct samples
        (`medtemporal.runner.repeats.sample_index`).
        """
        calls.last = request
        calls.request_hash = await self.session.key(request, sample)
        reply = await self.session.ask(request, key=calls.request_hash)
        calls.add(reply.response)
        return reply.response

    async def answer(self, item: Item, repeat: int = 0) -> Prediction:
        """Run the protocol on ``item`` for repeat ``repeat``; a backend failure becomes an error prediction."""
        calls = _ItemCalls()
        start = time.perf_counter()
        sample = sample_index(self.config, repeat)

        async def generate(request: Request) -> Response:
            return await self.generate(request, calls, sample)

        common: dict[str, Any] = {"item_id": item.id, "model": self.session.uri, "protocol": self.solver.name,
                                  "repeat": repeat}
        try:
            solution = await self.solver.solve(item, self.image_root, generate, repeat_config(self.config, repeat))
        except BackendError as exc:
            reason = getattr(exc, "reason", "backend_error")
            return Prediction(
                **common,
                request_hash=calls.request_hash,
                raw_output=None,
                latency_s=round(time.perf_counter() - start, 4),
                error=f"{reason}: {exc}",
            )
        extraction = extract(item, solution.output)
        return Prediction(
            **common,
            request_hash=calls.request_hash,
            raw_output=solution.output,
            answer=extraction.answer,
            extraction=extraction.rule,
            latency_s=round(time.perf_counter() - start, 4),
            input_tokens=calls.input_tokens if calls.counted_tokens else None,
            output_tokens=calls.output_tokens if calls.counted_tokens else None,
            finish_reason=calls.finish_reason,
            calls=_once(solution.calls, solution.output),
            prompt=_prompt(calls.last, self.image_root),
        )

    def record(self, prediction: Prediction, progress: Progress) -> None:
        """Append ``prediction`` durably and count it; stop the run past ``max_errors``."""
        self.log.append(prediction)
        s = self.summary
        reason = None
        if prediction.error is None:
            s.done += 1
            s.truncated += prediction.finish_reason == "length"
            s.input_tokens += prediction.input_tokens or 0
            s.output_tokens += prediction.output_tokens or 0
        else:
            reason, _, message = prediction.error.partition(": ")
            s.errors[reason] = s.errors.get(reason, 0) + 1
            s.error_examples.setdefault(reason, message)
        progress.advance(reason is not None)
        self.streak = self.streak + 1 if reason is not None else 0
        self.refused = self.refused + 1 if reason == REFUSED else 0
        if s.stopped is not None:
            return
        if self.max_errors is not None and s.n_errors > self.max_errors:
            self._stop(f"{s.n_errors} items failed, more than --max-errors {self.max_errors} "
                       f"(most often {max(s.errors, key=s.errors.__getitem__)})")
        elif reason is not None and (self.streak >= self.broken_after or self.refused >= REFUSED_STREAK):
            self._stop(f"the last {self.streak} items all failed ({reason}: {s.error_examples[reason]}), "
                       "so the model or endpoint looks broken")

    def _stop(self, why: str) -> None:
        """Stop the run: record why and cancel the other workers."""
        self.summary.stopped = f"{why}; fix the cause and run the same command to resume."
        current = asyncio.current_task()
        for task in self.tasks:
            if task is not current:
                task.cancel()

    async def run(self, units: list[tuple[Item, int]], progress: Progress) -> None:
        """Answer each (item, repeat) of ``units``; the first unexpected error stops all.

        Twice as many workers as request slots: while ``concurrency`` requests
        are in flight, the next items are prepared (prompt, cache lookup,
        image encoding) and wait for a slot, so the endpoint never idles.
        """
        queue = iter(units)

        async def worker() -> None:
            for item, repeat in queue:
                if self.summary.stopped:
                    return
                self.record(await self.answer(item, repeat), progress)

        self.tasks = [asyncio.create_task(worker()) for _ in range(min(2 * self.concurrency, len(units)) or 1)]
        try:
            for task in asyncio.as_completed(self.tasks):
                try:
                    await task
                except asyncio.CancelledError:
                    if not self.summary.stopped:
                        raise
        finally:
            for task in self.tasks:
                task.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)


def _once(calls: Sequence[dict[str, Any]], output: str) -> tuple[dict[str, Any], ...]:
    """The protocol's calls as a prediction keeps them: the output of the final call, which is ``raw_output``, is
    not stored a second time (``"output": null, "output_is_raw_output": true``)."""
    if not calls or calls[-1].get("output") != output:
        return tuple(calls)
    return (*calls[:-1], {**calls[-1], "output": None, "output_is_raw_output": True})


def _prompt(request: Request | None, image_root: Path) -> tuple[dict[str, Any], ...]:
    """The messages of ``request`` as recorded in a prediction: text as rendered, images by relative path."""
    if request is None:
        return ()
    messages: list[dict[str, Any]] = []
    if request.system_prompt:
        messages.append({"role": "system", "parts": [{"text": request.system_prompt}]})
    for message in request.messages:
        parts = []
        for part in message.parts:
            if isinstance(part, TextPart):
                parts.append({"text": part.text})
            elif isinstance(part, ImagePart):
                parts.append(record_image(part.path, image_root))
        messages.append({"role": message.role, "parts": parts})
    return tuple(messages)


def _check_images(items: list[Item], root: Path) -> None:
    """Refuse to start when an image of ``items`` is not under ``root`` (one stat per distinct image)."""
    paths = {ref.path for item in items for ref in item.images}
    if paths and not root.is_dir():
        raise InvalidInputError(
            f"The image root {root} does not exist; pass --image-root pointing at your copy of the images."
        )
    base = os.fspath(root)  # joined as strings: no Path object per image
    missing = sorted(p for p in paths if not os.path.isfile(os.path.join(base, p)))
    if missing:
        raise InvalidInputError(
            f"{len(missing)} of {len(paths)} images are missing under {root} (first: {missing[0]}); "
            "pass --image-root pointing at the folder that holds them."
        )


def _solver(name: str, prompts: PromptSet, options: dict[str, Any]) -> Solver:
    """The protocol ``name`` built with ``options``, refusing an option it does not take."""
    cls = lookup("protocol", name).obj
    params = inspect.signature(cls).parameters.values()
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    accepted = sorted(p.name for p in params if p.kind in named and p.name != "prompts")
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    unknown = sorted(set(options) - set(accepted))
    if unknown and not takes_any:
        raise InvalidInputError(
            f"Protocol {name!r} has no option {', '.join(unknown)}; "
            f"its options are: {', '.join(accepted) or 'none'}."
        )
    return cls(prompts=prompts, **options)


def _templates(solver: Solver, items: list[Item], prompts: PromptSet) -> dict[str, str]:
    """Name → hash of every template the run may render: the protocol's and the items' benchmarks'."""
    names = set(solver.templates)
    tasks: dict[str, set[str]] = {}
    for item in items:
        tasks.setdefault(item.benchmark, set()).add(item.task)
    for name, used in tasks.items():
        names.update(spec(name).prompts.values())
        names.update(solver.templates_for(spec(name), used))
    return {name: prompts.hash(name) for name in sorted(names)}


def _limit_rule(folder: RunFolder) -> str:
    """How ``--limit`` chooses items: `SPREAD`, except when resuming a folder limited the older way (`FIRST`)."""
    old = folder.read_config() if folder.has_predictions() else None
    if old is not None and old.limit is not None and old.limit_rule is None:
        return FIRST
    return SPREAD


def _select(bench: Benchmark, opts: RunOptions, rule: str) -> list[Item]:
    """The items the options select (`Benchmark.select`)."""
    return bench.select(opts.tasks, opts.limit, per_task=opts.limit_per_task, rule=rule)


def _prepare(benchmark: str | Path, folder: RunFolder, options: RunOptions, resolved: Resolved
             ) -> tuple[Benchmark, RunOptions, str, list[Item], Solver, dict[str, str]]:
    """What a run settles before its model loads: the benchmark, the options resolved (a registered model's
    beneath the user's), the limit rule, the items selected, the protocol built with its options, and the hashes
    of the templates (so each is checked)."""
    bench = load_benchmark(benchmark)
    opts = options.resolve(spec(bench.manifest.benchmark), resolved.entry)
    if resolved.entry is not None:  # a registered name: its options beneath the user's
        opts = dataclasses.replace(opts, backend_options={**resolved.options, **opts.backend_options})
    rule = _limit_rule(folder)
    items = _select(bench, opts, rule)
    solver = _solver(opts.protocol, opts.prompts, dict(opts.protocol_options))  # type: ignore[arg-type]
    templates = _templates(solver, items, opts.prompts)  # type: ignore[arg-type]
    return bench, opts, rule, items, solver, templates


def check_run(benchmark: str | Path, out: str | Path, options: RunOptions | None = None, model: str | None = None,
              **overrides: Any) -> None:
    """Check a run of ``model`` on ``benchmark`` into ``out`` as `arun` does before its model loads (the benchmark,
    the model's registered name, the options,
    the protocol and its options, the tasks and limits, the prompt templates), asking no model: a set checks every
    benchmark so before its first request.

    Raises:
        InvalidInputError: in one sentence, as `arun` would.
    """
    _prepare(benchmark, RunFolder(out), RunOptions.of(options, overrides),
             resolve_model(model) if model else Resolved(""))


async def arun(
    benchmark: str | Path,
    model: str | Backend,
    out: str | Path,
    options: RunOptions | None = None,
    **overrides: Any,
) -> RunSummary:
    """Run ``model`` on every item of ``benchmark`` into run folder ``out``; resume if it holds this run.

    Args:
        benchmark: benchmark folder (``items.jsonl`` + ``manifest.json``).
        model: model URI (``openai:gpt-4o``, ``openai+http://host:port/v1:NAME``, ``hf:PATH``, ``baseline:random`` ...),
            a registered model name (``medgemma-4b``, ``lingshu-7b@vllm``: `medtemporal.models.resolve`),
            or a loaded `Backend`, which the run uses as it is and leaves open for the caller.
        out: run folder; ``config.json``, ``predictions.jsonl`` and ``scores.json`` go there.
        options: how to run (`RunOptions`); the paper's protocol and generation settings fill what it leaves
            unset (`RunOptions.resolve`).
        **overrides: fields of `RunOptions` given as keywords (``limit=50``, ``config={"temperature": 0.7}``).

    Returns:
        A `RunSummary`: counts answered / already done / failed by reason, wall time.

    Raises:
        InvalidInputError: a bad benchmark, URI, option, image root or run folder, or credentialed
            data bound for a remote endpoint without ``allow_remote_data``; nothing written is lost.
    """
    start = time.perf_counter()
    start_up()  # the items, the plugins and the model client live as long as the run
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InvalidInputError(f"--out {out} is a file; pass a folder for the run (it is created if missing).")
    resolved = resolve_model(model) if isinstance(model, str) else Resolved("")
    if isinstance(model, str):  # the backend's imports (the openai SDK: ~0.5 s) go on while the benchmark loads
        preload_backend(resolved.uri)
    if resolved.entry is not None:  # a registered name: its URI (its options join the user's in _prepare)
        model = resolved.uri
    folder = RunFolder(out)
    bench, opts, rule, items, solver, templates = _prepare(benchmark, folder, RunOptions.of(options, overrides),
                                                           resolved)
    # the data-use guard judges the images actually sent (medtemporal.provenance.run_licence), not the label, and
    # only where the verdict can change where they go (a remote endpoint or a proxy): it reads the whole phantom
    # folder, seconds at MIMIC scale, which a run against a local server does not wait for
    licence = functools.cache(functools.partial(run_licence, bench.manifest, opts.image_root,
                                                [r.path for i in items for r in i.images], folder=bench.path))
    use = DataUse(bench.manifest.benchmark, licence, opts.allow_remote_data)
    policy = {"retry": opts.retry, "cache_path": opts.cache_path, "no_cache": opts.no_cache}
    backend_options = dict(opts.backend_options)
    if not isinstance(model, Backend):
        backend_options = dict(max_pixels=opts.max_pixels, api_key_env=opts.api_key_env,
                               timeout_s=opts.retry.timeout_s,
                               images_needed=max((solver.max_images(item) for item in items), default=0),
                               **backend_options)
    session = ModelSession.open(model, use=use, options=backend_options, ray=opts.ray, replicas=opts.replicas,
                                concurrency=opts.concurrency, **policy)
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(session.aclose)
        backend = session.backend
        opts, skipped = opts.for_backend(bench, backend) if solver.asks_model else (opts, None)
        if skipped:  # the backend answers fewer tasks: the limits choose among those
            items = _select(bench, opts, rule)
            templates = _templates(solver, items, opts.prompts)  # type: ignore[arg-type]
        solver.check_backend(backend)
        for side in solver.side_models():
            if side.uri is not None:
                side.bind(ModelSession.open(side.uri, use=use, **policy))
                stack.push_async_callback(side.aclose)
        root = Path(opts.image_root) if opts.image_root is not None else bench.image_root
        if solver.needs_images(backend):
            _check_images(items, root)
        backend.fit(prior_pairs(bench.items))
        backend.fit_answers({i.id: i.answer for i in items})
        backend.fit_items(items)
        stack.enter_context(folder.writer())
        cfg = build_config(bench, backend, solver.name, getattr(solver, "settings", None) or opts.protocol_options,
                           templates, opts, rule, resolved.entry)
        old = folder.check_resumable(cfg, named=bool((opts.name or "").strip()))
        if old is not None:
            cfg.started_at = old.started_at or cfg.started_at
            cfg.name = cfg.name if opts.name else old.name or cfg.name  # resumed without --name: the name it had
            cfg.model.served = list(old.model.served)
        log = folder.predictions()
        stack.callback(log.close)
        answered = log.resume(key=lambda p: (p.item_id, p.repeat), keep=lambda p: p.error is None)
        todo = [(item, r) for r in range(opts.repeats) for item in items if (item.id, r) not in answered]
        folder.write_config(cfg)
        total = len(items) * opts.repeats
        summary = RunSummary(out, total, skipped_existing=total - len(todo), repeats=opts.repeats, skipped=skipped)
        runner = _Runner(session, solver, opts.generation, root, log, summary, session.concurrency, opts.max_errors)
        bar = Progress(total, summary.skipped_existing, backend.uri, enabled=opts.progress)
        started()
        try:
            await runner.run(todo, bar)
            if summary.stopped is None:
                cfg.finished_at = now()
        finally:
            bar.close()
            summary.requests, summary.cache_hits = session.calls, session.cache_hits
            cfg.model.served = sorted(set(cfg.model.served) | session.served)
            folder.write_config(cfg)
    if opts.score and summary.stopped is None:  # the folder's writer lock is released: scoring takes it
        score_run(out)
        summary.scored = True
    summary.wall_s = time.perf_counter() - start
    return summary


def run(benchmark: str | Path, model: str | Backend, out: str | Path, options: RunOptions | None = None,
        **overrides: Any) -> RunSummary:
    """Run ``model`` on ``benchmark`` into run folder ``out``, resuming if it holds this run.

    Takes the same options as `arun`, which is the coroutine form.
    """
    return asyncio.run(arun(benchmark, model, out, options, **overrides))
