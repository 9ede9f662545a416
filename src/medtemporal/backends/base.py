"""The one interface every model backend implements.

A protocol turns an item into `Request` objects; a backend answers each with
a `Response`. Backends know nothing about benchmarks: a request is messages
of text and image parts, generation settings, and (for baselines) the answer
space.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from medtemporal.errors import BackendError, InvalidInputError


class _Keywords:
    """Pickles an exception with its keyword-only arguments: an error raised in a Ray replica crosses to the driver
    with its type, reason and retry hints (`BaseException` pickles only ``args``, and ``cls(*args)`` would miss
    them), so retries, records and exit codes are those of a one-process run."""

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild, (type(self), self.args, dict(self.__dict__))


def _rebuild(cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]) -> BaseException:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class RequestError(_Keywords, BackendError):
    """A request that failed for a reason retrying will not fix (bad image, HTTP 400, too many images).

    >>> import pickle
    >>> error = pickle.loads(pickle.dumps(RequestError("HTTP 400 from the server.", reason="http_400")))
    >>> type(error).__name__, str(error), error.reason
    ('RequestError', 'HTTP 400 from the server.', 'http_400')
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
        """Short machine-readable cause (``too_many_images``, ``http_400`` ...) counted in run summaries."""


REFUSED = "connection_refused"
"""The reason of a connection the endpoint refused: nothing listens there (a server not started, a wrong port)."""


class RetryableError(_Keywords, BackendError):
    """A transient failure worth retrying: rate limit, 5xx, timeout, dropped connection, garbled reply."""

    def __init__(self, message: str, *, reason: str, retry_after: float | None = None,
                 attempts: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.retry_after = retry_after
        """Seconds the server asked us to wait (``Retry-After``), when it said."""
        self.attempts = attempts
        """At most this many attempts for a failure of this kind (a refused connection: few), when fewer than the
        retry policy's are worth making; None: the policy's."""


@dataclass(frozen=True)
class TextPart:
    """A piece of text in a message."""

    text: str


@dataclass(frozen=True)
class ImagePart:
    """An image in a message, by absolute path; backends load and encode it."""

    path: Path


Part = TextPart | ImagePart


@dataclass(frozen=True)
class Message:
    """One chat message made of parts, in order."""

    role: Literal["system", "user", "assistant"]
    parts: tuple[Part, ...]

    @property
    def n_images(self) -> int:
        """How many image parts the message has."""
        return sum(isinstance(p, ImagePart) for p in self.parts)


LOCAL_MAX_TOKENS = 4096
"""Output cap of local transformers models when a run sets none (they have no provider default)."""


@dataclass(frozen=True)
class GenerateConfig:
    """Generation settings, recorded in every run (temperature 0 as the papers)."""

    temperature: float | None = 0.0
    """None: the provider's default (what a paper that sets none used)."""
    max_tokens: int | None = 1024
    """None: no cap from us (HTTP APIs and vLLM use the model's limit; local transformers fall back to
    `LOCAL_MAX_TOKENS`)."""
    seed: int | None = None
    top_p: float | None = None
    system_prompt: str | None = None

    def __post_init__(self) -> None:
        """Refuse settings no model takes (NaN, infinities, negative values) in one sentence."""
        if self.temperature is not None and not (
            isinstance(self.temperature, (int, float)) and math.isfinite(self.temperature) and self.temperature >= 0
        ):
            raise InvalidInputError(
                f"The temperature (--temperature) must be a finite number of 0 or more, not {self.temperature}."
            )
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1
        ):
            raise InvalidInputError(
                f"The most output tokens per call (--max-tokens) must be a whole number of 1 or more, "
                f"not {self.max_tokens}."
            )
        if self.top_p is not None and not (math.isfinite(self.top_p) and 0 < self.top_p <= 1):
            raise InvalidInputError(f"The nucleus sampling bound (--top-p) must be above 0 and at most 1, not {self.top_p}.")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise InvalidInputError(f"The sampling seed (--seed) must be a whole number, not {self.seed!r}.")


@dataclass(frozen=True)
class Request:
    """What a protocol asks of a model."""

    messages: tuple[Message, ...]
    config: GenerateConfig = GenerateConfig()
    choices: tuple[str, ...] | None = None
    """The valid answers (letters, Yes/No) when the question is closed; baselines use it."""
    key: str | None = None
    """A grouping key (the item subtype) that prior baselines may condition on."""
    answer_format: str = "{}"
    """How a compliant answer is written, ``{}`` standing for the answer (``My answer is {}.``); baselines
    answer in it, models read the format from the prompt."""
    ordering: bool = False
    """The answer is an order of all of ``choices`` (written into ``answer_format`` as a JSON list)."""
    item: str | None = None
    """The id of the item asked about (not part of the cache key); only instruments fitted with the items use it
    (the oracle baseline's answers, the MI-CXR demo describer's stage-1 truth)."""
    embed: bool = False
    """The request asks for the embedding of its text, not an answer: only a text encoder (``encoder:``) answers it,
    and it answers nothing else."""
    labels: tuple[str, ...] | None = None
    """The text of each of ``choices`` where the options are texts (``improving``, ``stable`` …): the majority
    baseline counts answers by it when the family's options are one label set. Not part of the cache key (the
    prompt carries the options)."""

    @property
    def n_images(self) -> int:
        """How many images the request carries."""
        return sum(m.n_images for m in self.messages)

    @property
    def image_paths(self) -> list[Path]:
        """The paths of the request's images, in order."""
        return [p.path for m in self.messages for p in m.parts if isinstance(p, ImagePart)]

    @property
    def system_prompt(self) -> str | None:
        """The system message backends put first: the config's, unless a message already has the system role."""
        if any(m.role == "system" for m in self.messages):
            return None
        return self.config.system_prompt or None


@dataclass(frozen=True)
class Response:
    """A model's answer to one request."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    model: str | None = None
    """The model name the server reported, when it reports one."""
    finish_reason: str | None = None
    """Why generation stopped, as the server said (``stop``, ``length`` ...); None when it did not say."""


@dataclass
class Backend(ABC):
    """A model named by URI. Subclasses implement `generate`."""

    uri: str
    max_images: int | None = None
    """How many images one request may carry (None: no limit); more fail loudly."""
    concurrency: int = 1
    """How many requests the runner may have in flight at once."""

    cacheable: ClassVar[bool] = True
    """Whether responses are worth keeping in the response cache (False for instant baselines)."""

    @property
    def takes_volumes(self) -> bool:
        """Whether an `ImagePart` may be a 3-D volume the model reads whole: a ``.npy`` array
        1 × depth × height × width in [0, 1] (M3D-style input). Protocols that send volumes refuse
        a backend without it. Default False."""
        return False

    @property
    def reads_images(self) -> bool:
        """Whether the backend reads the bytes of the images it is sent (False for baselines, which answer
        from the text and answer space alone). Protocols that only turn images into pixels for the model
        skip that work, and need no image files, for a backend without it. Default True."""
        return True

    @property
    def answers_open(self) -> bool:
        """Whether the backend answers a request with no answer space (`Request.choices` None: an open question,
        a report to write). Baselines that pick from the answer space do not; a run skips the open tasks for
        them (`medtemporal.runner.options.RunOptions.for_backend`). Default True."""
        return True

    @property
    def endpoint(self) -> str | None:
        """The URL requests (and their images) are sent to; None when the model runs in this process."""
        return None

    @abstractmethod
    async def generate(self, request: Request) -> Response:
        """Answer one request."""

    def pin(self, addresses: Sequence[str]) -> None:
        """Connect only to ``addresses``, the checked IPs of `endpoint`'s host (the data-use guard calls this).

        Backends with an endpoint must implement it; the guard refuses to send credentialed data otherwise.
        """
        raise BackendError(f"{self.uri} cannot pin its connections to checked addresses.")

    def identity(self) -> dict[str, Any]:
        """What exactly answers: name, revision, server-reported model; goes into config.json."""
        return {"uri": self.uri}

    def settings(self) -> dict[str, Any]:
        """How the model was loaded (device map, parallelism, engine limits ...); goes into config.json.

        Settings that change outputs belong in `identity` as well, which keys the response cache.
        """
        return {}

    def fit(self, pairs: list[tuple[str, str]]) -> None:
        """Prior baselines learn from (key, answer) pairs of the benchmark; others ignore this."""

    def fit_answers(self, answers: dict[str, str | list[str]]) -> None:
        """The oracle baseline learns the item id → true answer map; others ignore this."""

    def fit_items(self, items: Sequence[Any]) -> None:
        """Demo instruments that read an item's recorded truth (never models) learn the run's items; others ignore this."""

    async def prepare(self, request: Request) -> None:
        """Get ready for ``request`` (e.g. encode its images) before a concurrency slot is taken; optional."""

    async def aclose(self) -> None:
        """Release connections, processes or GPU memory."""
