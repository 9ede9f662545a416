"""The notebook API: ``mt.evaluate(benchmark, model)`` runs, scores and hands back tables.

It is the runner (`medtemporal.runner.arun`) with a result object around it:
a run folder is still written (and resumed by the same call), and
``result.scores`` is a pandas DataFrame with one row per metric and group.
Every evaluation runs on one event loop of medtemporal's own, in a daemon
thread, so `evaluate` works in a plain script and inside an already running
loop (Jupyter, IPython) alike, and a backend object (whose HTTP connections
or batching belong to a loop) can be reused from call to call;
``await mt.aevaluate(...)`` is the coroutine form.

>>> import medtemporal as mt                                                        # doctest: +SKIP
>>> result = mt.evaluate("benchmarks/mi-cxr", "openai+http://localhost:8000/v1:Qwen/Qwen2.5-VL-7B-Instruct",
...                      out="runs/qwen", limit=100)                                # doctest: +SKIP
>>> result.scores.query("group == 'overall'")[["metric", "value", "ci_low", "ci_high"]]  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import re
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medtemporal.backends.base import Backend
from medtemporal.benchmark import Benchmark
from medtemporal.errors import InvalidInputError, RunFailedError
from medtemporal.progress import quiet
from medtemporal.runs import RunConfig, RunFolder

if TYPE_CHECKING:
    import pandas as pd

    from medtemporal.runner import RunSummary

SCORE_COLUMNS = ("metric", "group", "value", "ci_low", "ci_high", "n", "invalid", "missing", "chance",
                 "higher_is_better")


@dataclass
class EvalResult:
    """What `evaluate` did and found.

    Attributes:
        run_dir: the run folder (``config.json``, ``predictions.jsonl``, ``scores.json``).
        summary: the runner's `RunSummary` (answered, resumed, failed by reason, wall time).
        scores: one row per (metric, group): ``value``, clustered ``ci_low``/``ci_high``, ``n``,
            ``invalid``, ``missing``, ``chance`` and ``higher_is_better``; empty when the run did not finish.
    """

    run_dir: Path
    summary: RunSummary
    scores: pd.DataFrame
    _predictions: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def predictions(self) -> pd.DataFrame:
        """``predictions.jsonl`` as a DataFrame (one row per line, as written)."""
        if self._predictions is None:
            import pandas as pd

            records = RunFolder(self.run_dir).predictions().records()
            self._predictions = pd.DataFrame([p.model_dump(mode="json") for p in records])
        return self._predictions

    @property
    def config(self) -> RunConfig:
        """The run's ``config.json``."""
        return RunFolder(self.run_dir).config()

    def __repr__(self) -> str:
        overall = self.scores[self.scores["group"] == "overall"] if len(self.scores) else self.scores
        head = ", ".join(f"{r.metric} {r.value:.3f}" for r in overall.itertuples())
        return f"EvalResult({self.run_dir}: {head or 'not scored'})"


def _scores_frame(run_dir: Path) -> pd.DataFrame:
    import pandas as pd

    folder = RunFolder(run_dir)
    if not folder.has_scores():
        return pd.DataFrame(columns=list(SCORE_COLUMNS))
    scores = folder.scores()
    return pd.DataFrame([s.model_dump() for s in scores.scores], columns=list(SCORE_COLUMNS))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[-60:] or "model"


def default_out(benchmark: Path, model: str | Backend, protocol: str) -> Path:
    """``runs/<benchmark folder>--<model>--<protocol>`` under the working directory."""
    uri = model.uri if isinstance(model, Backend) else model
    return Path("runs") / f"{_slug(benchmark.name)}--{_slug(uri)}--{_slug(protocol)}"


_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _evaluation_loop() -> asyncio.AbstractEventLoop:
    """medtemporal's own event loop, running in a daemon thread (started on first use)."""
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="medtemporal-evaluate", daemon=True).start()
        return _loop


async def _run(
    benchmark: str | Path | Benchmark, model: str | Backend, out: str | Path | None, options: dict[str, Any]
) -> EvalResult:
    """The evaluation itself, on medtemporal's loop."""
    from medtemporal.contract import spec
    from medtemporal.runner import RunOptions, arun

    path = benchmark.path if isinstance(benchmark, Benchmark) else Path(benchmark)
    if not isinstance(model, (str, Backend)):
        raise InvalidInputError(
            f"model must be a model URI or a loaded backend, not {type(model).__name__}; "
            "pass e.g. 'hf:/models/MedGemma-4b-it' or medtemporal.load_backend(...)."
        )
    run_options = RunOptions.of(None, options)
    if out is None:
        family = benchmark.manifest.benchmark if isinstance(benchmark, Benchmark) else _family(path)
        protocol = run_options.resolve(spec(family)).protocol if family else run_options.protocol or "direct"
        out = default_out(path, model, protocol)
    with quiet(not run_options.progress):  # no bar at all, the libraries' included
        summary = await arun(path, model, out, run_options)
    failure = summary.failure
    if failure is None and summary.scored:
        from medtemporal.scoring.failures import scores_failure

        failure = scores_failure(RunFolder(out).scores(), out)
    if failure is not None:
        raise RunFailedError(failure, Path(out))
    if summary.n_errors:
        warnings.warn(f"{summary.n_errors} of {summary.total} items failed and count as missing (see "
                      f"result.summary); the same call tries them again.", RuntimeWarning, stacklevel=3)
    return EvalResult(Path(out), summary, _scores_frame(Path(out)))


def _family(path: Path) -> str | None:
    """The family named by a benchmark folder's manifest (None when unreadable: the run says why)."""
    from medtemporal.benchmark import read_manifest

    try:
        return read_manifest(path).benchmark
    except InvalidInputError:
        return None


async def aevaluate(
    benchmark: str | Path | Benchmark,
    model: str | Backend,
    *,
    out: str | Path | None = None,
    **options: Any,
) -> EvalResult:
    """Coroutine form of `evaluate` (``await mt.aevaluate(...)`` in a notebook cell)."""
    work = asyncio.run_coroutine_threadsafe(_run(benchmark, model, out, options), _evaluation_loop())
    return await asyncio.wrap_future(work)


def evaluate(
    benchmark: str | Path | Benchmark,
    model: str | Backend,
    *,
    out: str | Path | None = None,
    **options: Any,
) -> EvalResult:
    """Run ``model`` on ``benchmark``, score it, and return an `EvalResult` (``.scores`` is a DataFrame).

    The run goes through the same path as ``medtemporal run``: the family's protocol and generation
    settings (the paper's) apply unless an option overrides them.

    Args:
        benchmark: a benchmark folder, or a `Benchmark` from `medtemporal.load_benchmark`.
        model: a model URI (``openai+http://…:NAME``, ``hf:PATH``, ``baseline:random`` …) or a loaded
            backend (``medtemporal.load_backend(uri, **options)``), which is reused and left open.
        out: run folder (default ``runs/<benchmark>--<model>--<protocol>``); the same call resumes it.
        **options: any field of `medtemporal.runner.RunOptions` (``protocol``, ``limit``, ``config``,
            ``concurrency``, ``backend_options``, ``protocol_options``, ``tasks``, ``no_cache`` …).

    Works inside a running event loop (Jupyter): the run goes on medtemporal's own loop (a daemon
    thread) and this call blocks until it is done. A notebook cell shows a progress bar (``progress=False``
    hides it); a script shows one on a terminal only, never in CI or into a pipe. Items that failed while others
    were answered are counted in ``result.summary`` and said in a ``RuntimeWarning``.

    Raises:
        RunFailedError: the run failed as a whole, in one sentence: every item failed, the run stopped early
            (a broken endpoint, ``max_errors``), or no item has an answer to score; what it wrote is kept
            (``exc.run_dir``) and the same call resumes it.
        InvalidInputError: a bad benchmark, model, option or folder.

    Examples:
        >>> import medtemporal as mt                                          # doctest: +SKIP
        >>> result = mt.evaluate("bench/", "baseline:random", limit=50)       # doctest: +SKIP
        >>> result.scores.loc[result.scores.group == "overall", ["metric", "value"]]  # doctest: +SKIP
    """
    work = asyncio.run_coroutine_threadsafe(_run(benchmark, model, out, options), _evaluation_loop())
    return work.result()
