"""Several benchmarks in one ``medtemporal run``: one run folder per benchmark, and an eval-set file.

``medtemporal run BENCH1 BENCH2 ... --model URI --out DIR`` writes each benchmark's run into
``DIR/<benchmark folder name>``; ``medtemporal run set.yaml`` reads the same from a file (YAML or JSON),
where each benchmark may carry options of its own::

    # set.yaml: one model on several benchmarks (paths are relative to this file)
    model: openai+http://localhost:8000/v1:Qwen/Qwen2.5-VL-7B-Instruct   # --model overrides it; a list of
                                                                         # models runs each (`model_folder`)
    name: qwen2.5-vl-7b                                                    # display name; --name overrides it
    out: runs/qwen2.5-vl-7b                                                # --out overrides it
    benchmarks:
      - benchmarks/mi-cxr                  # a folder, run with the command's options
      - path: benchmarks/eltlm             # or a folder with options of its own
        protocol: shuffled-timestamps
        protocol_options: {seed: 1}
        tasks: [perception]
        limit: 100
        out: eltlm-shuffled                # its run folder under out (default: the folder's name)

Every benchmark's options (protocol and its options, tasks, limits, prompts) are checked before the first
request (`check_entries`). A benchmark whose run folder already holds a finished, scored run of the same model
(its options too: ``--max-pixels``, every ``--option``), name, image root and selection with no item missing is
skipped (`is_done`), so running a set again does only what is left; any difference runs it, where the runner
resumes it or refuses the changed folder in one sentence.

>>> plan = EvalSet(benchmarks=["b/mi-cxr", {"path": "b/eltlm", "limit": 5}, "c/mi-cxr"]).entries(Path("."), Path("runs"))
>>> [(str(e.benchmark), str(e.out), dict(e.options)) for e in plan]
[('b/mi-cxr', 'runs/mi-cxr', {}), ('b/eltlm', 'runs/eltlm', {'limit': 5}), ('c/mi-cxr', 'runs/mi-cxr-2', {})]
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from medtemporal.backends.uri import short_name, shown_uri
from medtemporal.benchmark import image_root_of, is_benchmark, read_manifest
from medtemporal.errors import InvalidInputError, MedTemporalError
from medtemporal.models import resolve
from medtemporal.prompts import PromptSet
from medtemporal.runner._run import check_run
from medtemporal.runner.config import recorded_image_root, requested_model
from medtemporal.runner.options import RunOptions
from medtemporal.runs import RunFolder
from medtemporal.schema import describe_validation_error

SET_SUFFIXES = (".yaml", ".yml", ".json")
"""File suffixes read as an eval set (anything else given to ``run`` is a benchmark folder)."""


class SetBenchmark(BaseModel):
    """One benchmark of a set with its own options (each a field of `medtemporal.runner.RunOptions`)."""

    model_config = ConfigDict(extra="forbid")

    path: str
    out: str | None = None
    protocol: str | None = None
    protocol_options: dict[str, Any] = Field(default_factory=dict)
    tasks: list[str] | None = None
    limit: int | None = None
    limit_per_task: int | None = None

    def options(self) -> dict[str, Any]:
        """The run options it sets (those left unset are the command's)."""
        return {k: v for k, v in self.model_dump(exclude={"path", "out"}).items() if v not in (None, {})}


class EvalSet(BaseModel):
    """An eval-set file: the model, display name and parent folder of the runs, and the benchmarks."""

    model_config = ConfigDict(extra="forbid")

    model: str | list[str] | None = None
    """One model, or several: one run per model and benchmark, each model's runs under ``out/<model>``."""
    name: str | None = None
    out: str | None = None
    benchmarks: list[SetBenchmark] = Field(min_length=1)

    @property
    def models(self) -> list[str]:
        """The models the set names (none, one or several)."""
        return [self.model] if isinstance(self.model, str) else list(self.model or [])

    @field_validator("benchmarks", mode="before")
    @classmethod
    def _folders(cls, value: Any) -> Any:
        """A bare folder is ``{path: FOLDER}``."""
        return [{"path": v} if isinstance(v, str) else v for v in value] if isinstance(value, list) else value

    def entries(self, base: Path, out: Path) -> list[SetEntry]:
        """One entry per benchmark: paths taken from ``base``, run folders under ``out``, names made unique."""
        plan: list[SetEntry] = []
        used: set[str] = set()
        for spec in self.benchmarks:
            bench = Path(spec.path).expanduser()
            bench = bench if bench.is_absolute() else base / bench
            name = spec.out or bench.name
            unique, k = name, 1
            while unique in used:
                k += 1
                unique = f"{name}-{k}"
            used.add(unique)
            plan.append(SetEntry(bench, out / unique, spec.options()))
        return plan


@dataclass(frozen=True)
class SetEntry:
    """One run of a set: the benchmark folder, its run folder and the options it sets itself."""

    benchmark: Path
    out: Path
    options: Mapping[str, Any] = field(default_factory=dict)


def read_eval_set(path: Path) -> EvalSet:
    """An eval-set file (YAML or JSON; see the module doc), with one sentence for what is wrong in it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"The eval set {path} cannot be read ({exc}); pass a YAML or JSON file.") from None
    try:
        if path.suffix == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except ValueError as exc:  # json.JSONDecodeError and yaml.YAMLError's parse errors
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidInputError(f"The eval set {path} is not valid {path.suffix[1:].upper()} ({first}).") from None
    except Exception as exc:  # noqa: BLE001 (yaml.YAMLError is not a ValueError)
        raise InvalidInputError(f"The eval set {path} is not valid YAML ({str(exc).splitlines()[0]}).") from None
    try:
        return EvalSet.model_validate(data)
    except ValidationError as exc:
        raise InvalidInputError(f"The eval set {path}: {describe_validation_error(exc)}; it needs `benchmarks:` "
                                "(a list of folders, or of {path: FOLDER, ...options}), and may set model, name "
                                "and out.") from None


def plan_runs(paths: Sequence[Path], out: Path | None) -> tuple[list[SetEntry], EvalSet | None]:
    """The runs that ``medtemporal run PATH ... --out OUT`` makes, and the eval set read (None: folders only).

    One benchmark folder and no set keeps the single-run meaning: ``out`` is its run folder. Otherwise ``out``
    (or the set's ``out``) is the parent of one run folder per benchmark.
    """
    sets = [p for p in paths if p.is_file() and p.suffix in SET_SUFFIXES]
    if len(sets) > 1 or (sets and len(paths) > 1):
        raise InvalidInputError("Pass one eval-set file, or benchmark folders, not both; list every benchmark in "
                                "the set's `benchmarks:`.")
    if sets:
        evalset = read_eval_set(sets[0])
        parent = out or (Path(evalset.out) if evalset.out else None)
        if parent is None:
            raise InvalidInputError(f"The eval set {sets[0]} names no `out:` folder; pass --out DIR for its runs.")
        if not parent.is_absolute() and out is None:
            parent = sets[0].parent / parent
        entries = evalset.entries(sets[0].parent, parent)
        _check([e.benchmark for e in entries], f" (named in {sets[0]})")
        return entries, evalset
    if out is None:
        raise InvalidInputError("--out is required: the run folder (or, with several benchmarks, their parent).")
    _check(paths, f" (nor an eval-set file: {', '.join(SET_SUFFIXES)})")
    if len(paths) == 1:
        return [SetEntry(paths[0], out)], None
    return EvalSet(benchmarks=[str(p) for p in paths]).entries(Path("."), out), None


def model_folder(model: str) -> str:
    """The folder of ``model``'s runs when a set runs several models: a registered name as it is, else the
    model's short name (`short_name`), made safe for a folder name.

    >>> model_folder("lingshu-7b@vllm"), model_folder("openai+http://localhost:8000/v1:Qwen/Qwen2.5-VL-7B-Instruct")
    ('lingshu-7b@vllm', 'Qwen2.5-VL-7B-Instruct')
    """
    name = model if resolve(model).entry is not None else short_name(model)
    return re.sub(r"[^A-Za-z0-9._@+-]+", "_", name.replace("://", "_")).strip("._") or "model"


def _check(benchmarks: Sequence[Path], where: str) -> None:
    """Every benchmark folder checked before the first run starts (a typo in the last must not wait hours)."""
    for path in benchmarks:
        if not is_benchmark(path):
            raise InvalidInputError(f"{path} is not a benchmark folder{where}; build one with `medtemporal build`.")


def check_entries(entries: Sequence[SetEntry], options: RunOptions, model: str | None = None) -> None:
    """Check every run of a set as the runner will before the first starts (`medtemporal.runner.check_run`): an
    unknown protocol, task or option of the last benchmark is said before any model is asked, naming the folder.

    Raises:
        MedTemporalError: the first problem, as the runner says it, naming the benchmark folder.
    """
    for entry in entries:
        try:
            check_run(entry.benchmark, entry.out, replace(options, **dict(entry.options)), model)
        except MedTemporalError as exc:
            text = str(exc)
            if str(entry.benchmark) in text:
                raise
            raise type(exc)(f"{text.rstrip('.')} (for {entry.benchmark}; nothing was run).") from None


def is_done(entry: SetEntry, model: str, options: RunOptions, judge: str | None = None) -> bool:
    """Whether ``entry``'s run folder holds a finished, scored run of ``model`` with these options (the model's
    options, name, image root, selection, repeats, protocol and its options, generation settings and prompt
    texts) on the benchmark as built now, no item missing and, when ``judge`` is named, judged by it: a set run
    again skips it; any difference runs it (a resume, or the runner's refusal of a changed folder in one
    sentence)."""
    folder = RunFolder(entry.out)
    config = folder.read_config()
    if config is None or config.finished_at is None or not folder.has_scores() or folder.needs_scoring():
        return False
    if (config.model.uri, config.limit, config.limit_per_task) != (shown_uri(resolve(model).uri), options.limit,
                                                                    options.limit_per_task):
        return False
    asked = replace(options, backend_options={**resolve(model).options, **dict(options.backend_options or {})})
    if config.model.requested != requested_model(asked) or (options.name or "").strip() not in ("", config.name):
        return False
    manifest = read_manifest(entry.benchmark)
    if config.image_root != recorded_image_root(image_root_of(entry.benchmark, manifest), options.image_root):
        return False
    if sorted(config.tasks or []) != sorted(options.tasks or []) or config.repeats != options.repeats:
        return False
    if options.protocol and config.protocol.name != options.protocol:
        return False
    if any(config.protocol.options.get(k) != v for k, v in options.protocol_options.items()):
        return False
    if any(config.generation.get(k) != v for k, v in _given(options.config).items()):
        return False
    prompts = options.prompts or PromptSet()
    if any(prompts.hash(name) != sha for name, sha in config.protocol.templates.items()):
        return False
    if config.benchmark.items_sha256 != manifest.items_sha256:  # rebuilt since
        return False
    scores = folder.scores()
    if int(scores.counts.get("missing") or 0) or int(scores.counts.get("items") or 0) == 0:
        return False
    return judge is None or (scores.judge or {}).get("uri") == shown_uri(judge)


def _given(config: Any) -> dict[str, Any]:
    """The generation settings a run's options set (a mapping, or a `GenerateConfig`'s fields that are set)."""
    if config is None:
        return {}
    items = config.items() if isinstance(config, Mapping) else asdict(config).items()
    return {k: v for k, v in items if v is not None}
