"""How to run: one typed options object, and the paper's defaults applied to it in one place.

`RunOptions` holds everything about a run besides the benchmark, the model and the folder. Its
``protocol`` and ``config`` default to None, meaning "the paper's": `RunOptions.resolve` fills them
from the benchmark family's `BenchmarkSpec` (``default_protocol``, ``generation``). The CLI, the notebook
API (``mt.evaluate``) and Ray runs all call `medtemporal.runner.arun`, which resolves the options
once, so the same benchmark runs with the same settings whichever way it is started.

>>> from medtemporal.contract import spec
>>> opts = RunOptions(config={"temperature": 0.7}).resolve(spec("3d-rad"))
>>> opts.protocol, opts.config.temperature
('ct', 0.7)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medtemporal.backends.base import Backend, GenerateConfig
from medtemporal.backends.images import DEFAULT_MAX_PIXELS
from medtemporal.backends.session import RetryPolicy
from medtemporal.benchmark import Benchmark
from medtemporal.bounds import CONCURRENCY_MAX, check_range
from medtemporal.contract import BenchmarkSpec
from medtemporal.errors import InvalidInputError
from medtemporal.models import ModelEntry
from medtemporal.prompts import PromptSet
from medtemporal.runner.repeats import check_repeats


@dataclass(frozen=True)
class RunOptions:
    """Settings of one run (`medtemporal.runner.arun`); None fields take the paper's or the backend's default.

    Attributes:
        protocol: registered protocol name (None: the family's, `RunDefaults.protocol`).
        protocol_options: keyword options of the protocol (``k``, ``retriever`` ...).
        config: generation settings: a `GenerateConfig` used as it is, a mapping of settings that override
            the paper's (``{"temperature": 0.7}``), or None for the paper's (`RunDefaults.generation`).
        tasks: run only the items of these tasks (None: all the backend can answer, `for_backend`).
        limit: run at most this many items (after ``tasks``): a seeded sample spread over tasks and subtypes.
        limit_per_task: run at most this many items of each task, spread over its subtypes likewise.
        repeats: answers per item, each its own sample; a folder's run may be resumed with more.
        concurrency: requests in flight at once (None: the backend's).
        max_errors: stop once more items than this have failed.
        image_root: where the images are (None: the manifest's image root).
        prompts: prompt templates (None: the built-in ones).
        max_pixels: bound on width × height of images sent to the model (0 or None: no bound).
        cache_path: response cache file (None: `medtemporal.backends.cache.default_cache_path`).
        no_cache: neither read nor write the response cache.
        progress: show a progress bar.
        api_key_env: environment variable holding the API key (None: ``OPENAI_API_KEY``).
        retry: attempts, backoff and per-request timeout.
        backend_options: options of the backend factory (``dtype``, ``device``, ``max_images`` ...).
        score: write ``scores.json`` when the run completes.
        allow_remote_data: allow credentialed data to go to a non-local endpoint.
        ray: run model replicas on a Ray cluster: True or ``"local"`` for a local one, else its address.
        replicas: how many replicas with ``ray``.
        name: the run's display name in tables and reports (None: the model's short name,
            `medtemporal.backends.uri.short_name`); not part of what a resumed run must match.
    """

    protocol: str | None = None
    protocol_options: Mapping[str, Any] = field(default_factory=dict)
    config: GenerateConfig | Mapping[str, Any] | None = None
    tasks: Sequence[str] | None = None
    limit: int | None = None
    limit_per_task: int | None = None
    repeats: int = 1
    concurrency: int | None = None
    max_errors: int | None = None
    image_root: str | Path | None = None
    prompts: PromptSet | None = None
    max_pixels: int | None = DEFAULT_MAX_PIXELS
    cache_path: str | Path | None = None
    no_cache: bool = False
    progress: bool = True
    api_key_env: str | None = None
    retry: RetryPolicy = RetryPolicy()
    backend_options: Mapping[str, Any] = field(default_factory=dict)
    score: bool = True
    allow_remote_data: bool = False
    ray: str | bool | None = None
    replicas: int | None = None
    name: str | None = None

    @classmethod
    def of(cls, options: RunOptions | None, overrides: Mapping[str, Any]) -> RunOptions:
        """``options`` (or the defaults) with keyword ``overrides``, naming an unknown keyword in one sentence."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise InvalidInputError(f"Unknown run option {', '.join(unknown)}; the options are: {', '.join(sorted(known))}.")
        return dataclasses.replace(options or cls(), **overrides)

    def resolve(self, spec: BenchmarkSpec, entry: ModelEntry | None = None) -> RunOptions:
        """These options with the paper's defaults filled in: the protocol and the generation settings.

        A registered model's ``entry`` adds its card's generation settings beneath the paper's; a reasoning model (answer format ``think-answer``) keeps at least its
        card's token limit, so its reasoning is not cut off before the answer.
        """
        self.check()
        own = dict(entry.generation) if entry is not None else {}
        if isinstance(self.config, GenerateConfig):
            config = self.config
        else:
            paper = {k: v for k, v in spec.defaults.generation.items() if k in GENERATION_FIELDS}
            user = dict(self.config or {})
            merged = {**own, **paper, **user}
            if entry is not None and entry.answer_format == "think-answer" and "max_tokens" not in user \
                    and merged.get("max_tokens") is not None and own.get("max_tokens") is not None:
                merged["max_tokens"] = max(merged["max_tokens"], own["max_tokens"])
            config = GenerateConfig(**merged)
        return dataclasses.replace(
            self,
            protocol=self.protocol or spec.defaults.protocol,
            config=config,
            prompts=self.prompts or PromptSet(),
            protocol_options=dict(self.protocol_options or {}),
            backend_options=dict(self.backend_options or {}),
        )

    def for_backend(self, bench: Benchmark, backend: Backend) -> tuple[RunOptions, str | None]:
        """These options fitted to what ``backend`` can answer, with a one-line note of what was left out.

        A backend that cannot answer open questions (`Backend.answers_open` False: ``baseline:random``,
        ``baseline:majority``) runs the benchmark's closed tasks when the user named no ``tasks``; the note
        names the open tasks it skipped (None when nothing was skipped).

        Raises:
            InvalidInputError: the user named an open task for such a backend, or every task is open.
        """
        if backend.answers_open:
            return self, None
        tasks = list(dict.fromkeys(item.task for item in bench.items))
        has_open = {item.task for item in bench.items if item.answer_type == "open"}
        open_tasks = [t for t in tasks if t in has_open]
        if not open_tasks:
            return self, None
        works = "baseline:constant-<text> (one fixed answer), baseline:oracle (the true answers) or a model"
        named = [t for t in self.tasks or () if t in open_tasks]
        if named:
            raise InvalidInputError(
                f"{backend.uri} answers only closed questions (options, yes/no or an order) and task "
                f"{', '.join(named)} is open; leave it out of --tasks, or run it with {works}."
            )
        if self.tasks:
            return self, None
        closed = [t for t in tasks if t not in open_tasks]
        if not closed:
            raise InvalidInputError(
                f"{backend.uri} answers only closed questions (options, yes/no or an order), and every task of "
                f"{bench.manifest.benchmark} is open ({', '.join(open_tasks)}); run it with {works}."
            )
        plural = len(open_tasks) > 1
        note = (f"Skipped the open task{'s' if plural else ''} {', '.join(open_tasks)}: {backend.uri} answers only "
                f"closed questions; {works} can answer {'them' if plural else 'it'}.")
        return dataclasses.replace(self, tasks=closed), note

    def check(self) -> None:
        """Refuse impossible settings in one sentence each."""
        check_range(self.concurrency, "--concurrency", 1, CONCURRENCY_MAX)
        if self.name is not None and (not isinstance(self.name, str) or not self.name.strip()):
            raise InvalidInputError(f"--name must be a non-empty text, not {self.name!r}.")
        for flag, value in (("--limit", self.limit), ("--limit-per-task", self.limit_per_task)):
            if value == 0:
                raise InvalidInputError(f"{flag} 0 selects no items, so there would be nothing to run or score; pass "
                                        f"a positive {flag}, or leave it out to run every item.")
        if self.max_errors is not None and self.max_errors < 0:
            raise InvalidInputError(f"--max-errors must be zero or more, not {self.max_errors}.")
        if self.max_pixels is not None and self.max_pixels < 0:
            raise InvalidInputError(f"--max-pixels must be zero (no bound) or more, not {self.max_pixels}.")
        check_repeats(self.repeats)
        if isinstance(self.config, Mapping):
            unknown = sorted(set(self.config) - GENERATION_FIELDS)
            if unknown:
                raise InvalidInputError(f"Unknown generation setting {', '.join(unknown)}; "
                                        f"use {', '.join(sorted(GENERATION_FIELDS))}.")

    @property
    def generation(self) -> GenerateConfig:
        """The resolved generation settings (after `resolve`)."""
        if not isinstance(self.config, GenerateConfig):
            raise InvalidInputError("The run options are not resolved; call resolve(spec) first.")
        return self.config


GENERATION_FIELDS = frozenset(f.name for f in dataclasses.fields(GenerateConfig))
