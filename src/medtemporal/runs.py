"""The one owner of a run folder: file names, the typed ``config.json``, append-only logs, the writer lock,
and the check that the benchmark is still the one the run answered.

A run folder holds::

    config.json           RunConfig: benchmark (path, hashes, licence), model, protocol, generation, selection
    predictions.jsonl     one Prediction per answer, appended as it arrives (AppendLog)
    judgements.jsonl      judge verdicts, appended likewise (the family's judge may add its own log)
    scores.json           RunScores (with a typed RunInfo), written by `medtemporal score` only
    .lock                 the writer lock: one writing command at a time

Every command that writes into a run folder (``run``, ``score``, ``score --judge``, ``report`` when it
scores) holds `RunFolder.writer` while it writes; a second one is refused in one sentence. Readers (the
report, ``runs list``, ``compare``, the API) read through `RunFolder` too: the config, the predictions (or
their `RunFolder.tally` while a run writes them), the scores, the benchmark the run answered (checked) or just
its manifest. File names, the files' shapes and the benchmark check live here alone; a test
(``tests/test_owners.py``) fails if another module spells a run folder's file names.

>>> folder = RunFolder("runs/r1")                                  # doctest: +SKIP
>>> with folder.writer():                                          # doctest: +SKIP
...     folder.write_scores({"scores": []})                        # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Iterable, MutableMapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_serializer

from medtemporal.append_log import AppendLog
from medtemporal.backends.uri import hide_credentials
from medtemporal.benchmark import FIRST, Benchmark, Manifest, load, read_manifest
from medtemporal.errors import ConflictingPredictionsWarning, InvalidInputError
from medtemporal.schema import (
    Item, Prediction, Record, Score, TaskLayout, describe_validation_error, write_jsonl,
)
from medtemporal.writes import write_atomic

CONFIG = "config.json"
PREDICTIONS = "predictions.jsonl"
JUDGEMENTS = "judgements.jsonl"
SCORES = "scores.json"
LOCK = ".lock"

R = TypeVar("R", bound=Record)

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; one writer per folder is then up to the user
    fcntl = None  # type: ignore[assignment]


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow")


class BenchmarkRef(_Part):
    """The benchmark a run answered."""

    path: str
    name: str | None = None
    version: str | None = None
    manifest_sha256: str | None = None
    items_sha256: str | None = None
    """The items' checksum at run start: `RunFolder.benchmark` refuses a benchmark rebuilt since."""
    licence: str | None = None


class ModelRef(_Part):
    """The model that answered."""

    uri: str | None = None
    identity: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    served: list[str] = Field(default_factory=list)
    """Model names the server reported."""
    requested: dict[str, Any] | None = None
    """The model options the run was asked for (``--max-pixels``, every ``--option``), before the backend loads:
    what a set run again compares to skip a finished run (None in folders written before it was recorded)."""

    @field_validator("identity", "settings", "requested", mode="after")
    @classmethod
    def _no_credentials(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        """Options named like credentials, at any depth (``extra_body={"api_key": ...}``), are never kept."""
        return hide_credentials(value)


class ProtocolRef(_Part):
    """How items became model calls."""

    name: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    templates: dict[str, str] = Field(default_factory=dict)
    """Prompt template name → sha256 of the text used."""

    @field_validator("options", mode="after")
    @classmethod
    def _no_credentials(cls, value: dict[str, Any]) -> dict[str, Any]:
        return hide_credentials(value)


class RunConfig(_Part):
    """``config.json``: everything needed to know, and redo, what ran. Never an API key.

    Unknown keys are kept (a newer medtemporal may add some), so a folder round-trips.
    """

    benchmark: BenchmarkRef
    name: str | None = None
    """The run's display name (``run --name``, default the model's short name); None in older folders."""
    model: ModelRef = Field(default_factory=ModelRef)
    model_entry: str | None = None
    """The registered model (`medtemporal.models`) ``--model`` named, whose URI and options the run used; None
    for a URI or path the user wrote, and in older folders."""
    protocol: ProtocolRef = Field(default_factory=ProtocolRef)
    generation: dict[str, Any] = Field(default_factory=dict)
    tasks: list[str] | None = None
    limit: int | None = None
    limit_per_task: int | None = None
    limit_rule: str | None = None
    """How the limits chose items (`medtemporal.benchmark.SPREAD` or ``FIRST``); None, as in folders written
    before the rule was recorded: the first ``limit`` items."""
    repeats: int = Field(default=1, ge=1)
    """Answers per item; not part of the resume identity, so a run may grow more repeats."""
    image_root: str | None = None
    """The folder the run read its images from (``--image-root``, resolved) where it is not the benchmark's own;
    None: the benchmark's images. Part of the resume identity, and what the data-use guard of ``score --judge``
    and ``--green`` judges."""
    allow_remote_data: bool = False
    medtemporal_version: str | None = None
    git_revision: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    packages: dict[str, str] = Field(default_factory=dict)

    @field_validator("benchmark", "model", "protocol", mode="before")
    @classmethod
    def _named(cls, value: Any, info: Any) -> Any:
        """A bare string, as folders and hand-written configs may hold, is the path, URI or name."""
        key = {"benchmark": "path", "model": "uri", "protocol": "name"}[info.field_name]
        return {key: value} if isinstance(value, str) else value

    @field_validator("generation", mode="before")
    @classmethod
    def _generation(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("repeats", mode="before")
    @classmethod
    def _repeats(cls, value: Any) -> Any:
        return 1 if value is None else value

    def selected(self, bench: Benchmark) -> list[Item]:
        """The items of ``bench`` the run answered: its tasks and limits, chosen by its rule (`Benchmark.select`)."""
        return bench.select(self.tasks, self.limit, per_task=self.limit_per_task, rule=self.limit_rule or FIRST)

    def resume_identity(self) -> dict[str, Any]:
        """What must match for a folder to be resumed rather than refused (named in the refusal).

        Templates are compared by their texts' hashes, not their names: a template renamed with the same
        text sends the same requests, so a run started before the rename resumes.
        """
        return {
            "benchmark items": self.benchmark.items_sha256 or self.benchmark.manifest_sha256,
            "model.uri": self.model.uri,
            "model.identity": self.model.identity,
            "protocol.name": self.protocol.name,
            "protocol.options": self.protocol.options,
            "protocol.templates": sorted(self.protocol.templates.values()),
            "generation": self.generation,
            "image root (--image-root)": self.image_root,
        }


class RunInfo(_Part):
    """``scores.json``'s ``run``: what was scored, as the scorer found it.

    Unknown keys are kept (a newer medtemporal may add some). ``allow_rebuilt_benchmark`` is written only
    when set.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str | None = None
    """The run's display name (``run --name``; default the model's short name); None in older scores."""
    model: str | None = None
    """The model's URI (``config.json``'s, else the first prediction's)."""
    protocol: str | None = None
    protocol_options: dict[str, Any] = Field(default_factory=dict)
    """As recorded in ``config.json``, e.g. ``{"k": 3}``."""
    benchmark: str | None = None
    """The family's name (`medtemporal.contract.BenchmarkSpec.name`)."""
    benchmark_version: str | None = None
    benchmark_path: str | None = None
    items_sha256: str | None = None
    allow_rebuilt_benchmark: bool = False
    """Scored against a benchmark rebuilt since the run (``score --allow-rebuilt-benchmark``)."""

    @model_serializer(mode="wrap")
    def _dump(self, handler: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
        data = handler(self)
        if not self.allow_rebuilt_benchmark:
            data.pop("allow_rebuilt_benchmark", None)
        return data


class RunScores(Record):
    """The content of ``scores.json``, written by `medtemporal.scoring.score_run` and read by `RunFolder.scores`."""

    run: RunInfo
    scores: list[Score]
    counts: dict[str, Any]
    """items, prediction_lines, superseded, unknown_items, answered, invalid, missing, errors,
    truncated (outputs cut off at the token limit, scored as they are), re_extracted, re_extracted_from (stored
    rule id → items extracted again) and rules (current rule id → items decided by it)."""
    layout: list[TaskLayout]
    metrics: dict[str, dict[str, Any]]
    """Metric name → declared metadata (higher_is_better, aggregation, percent, description; ``ours``: scored by
    medtemporal beside the paper's own metrics, `BenchmarkSpec.extra_metrics`)."""
    bootstrap: dict[str, Any]
    scored_with: str
    judge: dict[str, Any] | None = None
    """The LLM judge's identity, settings, prompt hash, counts and calibration row (`medtemporal.scoring.judge`);
    None when no judge scored the run."""
    requested_metrics: list[str] = Field(default_factory=list)
    """Metrics registered ``on_request`` that ``score --metrics`` asked for; scoring the run again without
    ``--metrics`` scores them again (they are never dropped silently)."""
    green: dict[str, Any] | None = None
    """The GREEN pass (``score --green URI``): the GREEN model's identity, settings, prompt hash and counts (judged,
    unparseable, errors; `medtemporal.scoring.judge.JudgePass.summary`); None when GREEN did not score the run."""
    repeats: dict[str, Any] | None = None
    """For runs with ``--repeats`` above 1: `medtemporal.scoring.repeats.repeat_summary` (each repeat's
    value with mean and sd, and per-item consistency); None for a single repeat."""
    variants: dict[str, dict[str, Any]] | None = None
    """Other scorings of the run beside the main one (`BenchmarkSpec.variants`, e.g. ``"as released"``):
    name → description, extraction rule per task and scores."""

    def score(self, group: str, metric: str) -> Score | None:
        """The score of ``metric`` over ``group``, if computed."""
        return next((s for s in self.scores if s.group == group and s.metric == metric), None)

    def variant(self, name: str) -> RunScores | None:
        """These scores with the variant ``name``'s in place of the main ones; None when it did not score the run."""
        block = (self.variants or {}).get(name)
        if not block:
            return None
        return self.model_copy(update={"scores": [Score.model_validate(s) for s in block["scores"]]})


class WriterLock:
    """An exclusive lock on a run folder, released on close or when the process dies (POSIX ``flock``)."""

    def __init__(self, folder: Path) -> None:
        self._fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is None:
            return
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise InvalidInputError(
                f"Another medtemporal process is writing {folder}; wait for it to finish or use another folder."
            ) from None

    def close(self) -> None:
        """Release the lock."""
        os.close(self._fd)  # closing the descriptor releases the lock

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RunFolder:
    """A run folder and everything in it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @classmethod
    def of(cls, folder: str | Path | RunFolder) -> RunFolder:
        """``folder`` as a `RunFolder`."""
        return folder if isinstance(folder, RunFolder) else cls(folder)

    def file(self, name: str) -> Path:
        """The path of a file of the folder (a family's own log, e.g. ``error_judgements.jsonl``)."""
        return self.path / name

    def modified(self) -> tuple[int, ...]:
        """Modification times (ns; 0 where absent) of the files a view of the run is made from: config,
        predictions, judgements and scores (`medtemporal.serve` rebuilds a page when they change)."""
        return tuple((self.path / name).stat().st_mtime_ns if (self.path / name).is_file() else 0
                     for name in (CONFIG, PREDICTIONS, JUDGEMENTS, SCORES))

    def is_run(self) -> bool:
        """Whether the folder holds a run: a ``config.json`` and a predictions log (a model folder has a
        ``config.json`` too)."""
        return (self.path / CONFIG).is_file() and (self.path / PREDICTIONS).is_file()

    # config.json -----------------------------------------------------------------------------------------
    @property
    def config_file(self) -> Path:
        """Where ``config.json`` is (to name it to the user)."""
        return self.path / CONFIG

    def read_config(self) -> RunConfig | None:
        """The config, or None when the folder has none.

        Raises:
            InvalidInputError: the file is not a run config.
        """
        path = self.path / CONFIG
        if not path.is_file():
            return None
        try:
            return RunConfig.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            raise InvalidInputError(
                f"{path}: {describe_validation_error(exc)}; restore it or re-run into a new folder."
            ) from None

    def config(self) -> RunConfig:
        """The config of a run folder, with one sentence when the folder is not one."""
        config = self.read_config()
        if config is None:
            raise InvalidInputError(
                f"{self.path} is not a run folder (no {CONFIG}); pass the folder `medtemporal run` wrote."
            )
        return config

    def write_config(self, config: RunConfig) -> None:
        """Write ``config.json`` atomically."""
        self._write_atomic(CONFIG, json.dumps(config.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n")

    def check_resumable(self, new: RunConfig, *, named: bool = False) -> RunConfig | None:
        """Refuse to add to a folder that holds a run of something else, naming the first setting that differs
        (``named``: the new name was given, ``--name``, and must be the run's); return the config of the run it
        holds (None when there is none to resume).

        An empty folder (no predictions yet) may take new settings.
        """
        old = self.read_config()
        if old is None or not self.has_predictions():
            return None
        if named and old.name is not None and new.name != old.name:
            raise InvalidInputError(
                f"{self.path} holds a run named {old.name!r}, not {new.name!r}; pass --name {old.name!r} (or no "
                "--name) to resume it, or choose a new --out folder."
            )
        before, after = old.resume_identity(), new.resume_identity()
        for name in before:
            if before[name] != after[name]:
                was, now = json.dumps(before[name])[:120], json.dumps(after[name])[:120]
                if name == "benchmark items":
                    raise InvalidInputError(
                        f"{self.path} holds a run of another build of the benchmark (items sha256 {was} there, "
                        f"{now} now); run into a new --out folder, or rebuild the benchmark as it was."
                    )
                raise InvalidInputError(
                    f"{self.path} holds a run with another {name} ({was} there, {now} now); run the same command "
                    "as before to resume, or choose a new --out folder."
                )
        return old

    # lock ------------------------------------------------------------------------------------------------
    def writer(self) -> WriterLock:
        """Take the folder's writer lock (a context manager), creating the folder.

        Raises:
            InvalidInputError: another process holds it, or the folder cannot be created.
        """
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidInputError(
                f"The run folder {self.path} cannot be created ({exc.strerror}); pass a folder you can write."
            ) from None
        return WriterLock(self.path)

    def being_written(self) -> bool:
        """True when a process holds the writer lock."""
        lock = self.path / LOCK
        if fcntl is None or not lock.is_file():
            return False
        fd = os.open(lock, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # refused while a writer holds it exclusively
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    # predictions and judgements ----------------------------------------------------------------------------
    def predictions(self) -> AppendLog[Prediction]:
        """The predictions log (`AppendLog.resume` it, then `AppendLog.append`)."""
        return AppendLog(self.path / PREDICTIONS, Prediction)

    def has_predictions(self) -> bool:
        path = self.path / PREDICTIONS
        return path.is_file() and path.stat().st_size > 0

    def latest_predictions(self) -> tuple[dict[tuple[str, int], Prediction], int]:
        """The last prediction line of each (item id, repeat), and the number of lines read."""
        if not (self.path / PREDICTIONS).is_file():
            raise InvalidInputError(f"{self.path} has no {PREDICTIONS}; run `medtemporal run` into it first.")
        latest: dict[tuple[str, int], Prediction] = {}
        lines = 0
        differing: list[str] = []
        for prediction in self.predictions().records():
            key = (prediction.item_id, prediction.repeat)
            old = latest.get(key)
            if old is not None and old.error is None and prediction.error is None and \
                    old.raw_output != prediction.raw_output:
                differing.append(prediction.item_id)
            latest[key] = prediction
            lines += 1
        if differing:
            problem = (f"{self.path / PREDICTIONS} answers {len(differing)} item(s) twice with different outputs; the "
                       "last answer of each is scored")
            warnings.warn(ConflictingPredictionsWarning(f"{problem} (first: {differing[0]}).", differing[0], problem),
                          stacklevel=2)
        return latest, lines

    def write_predictions(self, predictions: Iterable[Prediction]) -> int:
        """Write the whole predictions log at once, atomically (an import); return the lines written."""
        return write_jsonl(self.path / PREDICTIONS, predictions)

    def tally(self) -> tuple[int, int]:
        """(answered, failed) items of a log that may be being written: the last line of an item decides;
        lines that are not predictions (a partial last line, a damaged one) are skipped."""
        last: dict[str, bool] = {}
        path = self.path / PREDICTIONS
        if not path.is_file():
            return 0, 0
        with path.open("rb") as fh:
            for line in fh:
                if line.endswith(b"\n") and line.strip():
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(record, dict):
                        last[str(record.get("item_id"))] = record.get("error") is None
        answered = sum(last.values())
        return answered, len(last) - answered

    def judgements(self, record: type[R]) -> AppendLog[R]:
        """The judge's log, ``judgements.jsonl``, of ``record`` lines (`medtemporal.scoring.judge.Judgement`)."""
        return AppendLog(self.path / JUDGEMENTS, record)

    def log(self, name: str, record: type[R]) -> AppendLog[R]:
        """The append-only log ``name`` of ``record`` lines (``judgements.jsonl`` and families' own)."""
        return AppendLog(self.path / name, record)

    # the benchmark -----------------------------------------------------------------------------------------
    def benchmark_path(self, config: RunConfig | None = None) -> Path:
        """The benchmark folder the config names; a relative path is tried from the run folder, then here."""
        raw = (config or self.config()).benchmark.path
        path = Path(raw)
        if path.is_absolute():
            return path
        for candidate in (self.path / path, Path.cwd() / path):
            if candidate.is_dir():
                return candidate
        raise InvalidInputError(
            f"The benchmark folder {raw} named in {self.path / CONFIG} does not exist; restore it or fix benchmark.path."
        )

    def benchmark_manifest(self, config: RunConfig | None = None) -> Manifest | None:
        """The manifest of the benchmark the run answered, without its items (None when the folder is gone or
        unreadable: callers that list runs go on without it)."""
        try:
            return read_manifest(self.benchmark_path(config))
        except InvalidInputError:
            return None

    def benchmark(self, config: RunConfig | None = None, *, allow_rebuilt: bool = False,
                  loaded: MutableMapping[Path, Benchmark] | None = None) -> Benchmark:
        """The benchmark the run answered, refused when it was rebuilt since (unless ``allow_rebuilt``).

        ``loaded``: benchmarks already read, by resolved folder (several runs of one benchmark read it once);
        the one read here is added.

        Raises:
            InvalidInputError: the benchmark is missing, or its items differ from those the run started on.
        """
        config = config or self.config()
        path = self.benchmark_path(config).resolve()
        bench = None if loaded is None else loaded.get(path)
        if bench is None:
            bench = load(path)
            if loaded is not None:
                loaded[path] = bench
        recorded = config.benchmark.items_sha256
        now = bench.manifest.items_sha256
        if recorded is None:  # a folder from before items hashes were recorded: the manifest's hash stands in
            recorded, now = config.benchmark.manifest_sha256, bench.manifest_hash
        if recorded and now and recorded != now and not allow_rebuilt:
            raise InvalidInputError(
                f"The benchmark {bench.path} was rebuilt after the run in {self.path} (items sha256 {recorded[:12]} "
                f"then, {now[:12]} now); score the run against the benchmark it answered, re-run into a new "
                "folder, or pass --allow-rebuilt-benchmark to score the new items anyway (recorded in scores.json)."
            )
        return bench

    # scores.json -----------------------------------------------------------------------------------------
    @property
    def scores_file(self) -> Path:
        """Where ``scores.json`` is (to name it to the user)."""
        return self.path / SCORES

    def has_scores(self) -> bool:
        return (self.path / SCORES).is_file()

    def scores(self) -> RunScores:
        """The typed ``scores.json``, with one clear sentence when it is missing or malformed."""
        path = self.path / SCORES
        if not path.is_file():
            raise InvalidInputError(f"{path} does not exist; score the run with `medtemporal score {self.path}`.")
        try:
            return RunScores.model_validate(json.loads(path.read_bytes()))
        except (ValueError, ValidationError) as exc:
            reason = describe_validation_error(exc) if isinstance(exc, ValidationError) else "not valid JSON"
            raise InvalidInputError(f"{path}: {reason}; score the run again with `medtemporal score`.") from None

    def write_scores(self, scores: RunScores) -> None:
        """Write ``scores.json`` atomically (hold `writer`)."""
        self._write_atomic(SCORES, json.dumps(scores.model_dump(mode="python"), indent=2, ensure_ascii=False) + "\n")

    def needs_scoring(self) -> bool:
        """True when ``scores.json`` is missing or older than ``predictions.jsonl``."""
        scores, predictions = self.path / SCORES, self.path / PREDICTIONS
        if not scores.is_file():
            return True
        return predictions.is_file() and predictions.stat().st_mtime_ns > scores.stat().st_mtime_ns

    def _write_atomic(self, name: str, text: str) -> None:
        """Replace file ``name`` by ``text`` atomically; a refused write names the folder and leaves no ``.tmp``."""
        write_atomic(self.path / name, text, sync=True)


def find_runs(roots: Iterable[str | Path], max_depth: int | None = None) -> list[Path]:
    """Every run folder (`RunFolder.is_run`) that is one of ``roots`` or lies under one (at most ``max_depth``
    levels down; None: any depth), resolved, in path order, each once; a run folder's own subfolders and hidden
    folders are not searched."""
    found: dict[Path, None] = {}
    for root in roots:
        base = len(Path(root).parts)
        for folder, dirs, _ in os.walk(root):
            if RunFolder(folder).is_run():
                found[Path(folder).resolve()] = None
                dirs[:] = []
            elif max_depth is not None and len(Path(folder).parts) - base >= max_depth:
                dirs[:] = []
            else:
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    return list(found)



def run_folders(paths: Iterable[str | Path]) -> list[Path]:
    """Each of ``paths`` that is a run folder, and the run folders under each that is not (an eval set's folder,
    `medtemporal.runner.evalset`), in order, each once.

    Raises:
        InvalidInputError: a path does not exist, or holds no run folder.
    """
    out: dict[Path, None] = {}
    for path in map(Path, paths):
        if RunFolder(path).is_run():
            out[path] = None
            continue
        if not path.is_dir():
            raise InvalidInputError(f"{path} does not exist; pass a run folder or a folder of runs (an eval set's out).")
        found = find_runs([path])
        if not found:
            raise InvalidInputError(f"{path} is not a run folder and holds none (no {CONFIG} with {PREDICTIONS}); pass "
                                    "the folder `medtemporal run` wrote.")
        out.update(dict.fromkeys(found))
    return list(out)
