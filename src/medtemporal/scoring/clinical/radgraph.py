"""RadGraph F1 (simple, partial = RG_ER, complete) with RadGraph-XL, through RadEval's vendored RadGraph.

The upstream ``radgraph`` package (0.1.18) calls two tokenizer methods that transformers 5 removed, and RadEval
2.2.1 ships a patched copy of it (``radeval.metrics.radgraph._vendor``) whose modules import themselves as
``RadEval.metrics…`` (FACTS §6.2): on a case-sensitive file system no module of that name exists. We import that
copy only, with `_alias_radeval` mapping ``RadEval.*`` onto the installed ``radeval.*`` modules (the same module
objects), and without running ``radeval/__init__.py`` (it calls ``nltk.download`` at import). RadEval is
installed with ``pip install --no-deps radeval==2.2.1``: its own dependency list would replace torch (it requires
torchvision) and pin spaCy 3.7 (see ``docs/report-metrics.md``).

Per report, ``F1RadGraph(reward_level="all")`` gives (simple, partial, complete) rewards (radgraph
``rewards.py``): simple matches (tokens, label) of entities, partial adds whether an entity has a relation,
complete its relation tuples; a report pair with no entity on either side scores 0, and so does an empty one. The
metrics are the means over reports, as RadEval's ``radgraph_*`` and MLRG's "F1-RadGraph-partial" are. Each text is
read up to its first `MAX_WORDS` words (`radgraph_text`): RadGraph scores pairs of spans of a whole report, so its
time grows with the square of the length (measured: 4 times the words, 10 times the seconds), and a 20,000-character
output would take hours; real reports are far shorter (MIMIC-CXR findings average 62 words), so their scores are
RadEval's.

Weights: the RadGraph-XL archive ``StanfordAIMI/RRG_scorers/radgraph-xl.tar.gz`` (416 MB), unpacked once beside
the cached file; the BERT its config names is loaded by ``transformers`` from the Hugging Face cache.
``$MEDTEMPORAL_RADGRAPH_XL`` names a local archive or unpacked folder instead.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.util
import os
import shutil
import sys
import tarfile
import tempfile
import types
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from medtemporal.errors import MissingDependencyError, UnavailableError, require
from medtemporal.hf_models import MODEL_CONFIG
from medtemporal.registry import register
from medtemporal.schema import Item
from medtemporal.scoring.clinical.texts import report_pairs
from medtemporal.scoring.clinical.weights import WEIGHTS, Weights
from medtemporal.scoring.metrics import Answer

LEVELS = ("simple", "partial", "complete")
MAX_WORDS = 300
"""Words of a text RadGraph reads (module doc; GREEN cuts reports at 300 words too)."""
INSTALL = "pip install --no-deps radeval==2.2.1"


class _RadEvalAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``RadEval.x`` to the module ``radeval.x`` (RadEval 2.2.1 imports itself under that name)."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname == "RadEval" or fullname.startswith("RadEval."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        return importlib.import_module("radeval" + spec.name[len("RadEval"):])

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run (the module ran under its ``radeval`` name); give it back the spec of that name,
        which the import system has just replaced with the alias's."""
        module.__spec__ = importlib.util.find_spec(module.__name__)


def _alias_radeval() -> None:
    """Make ``radeval`` importable as a bare package (its ``__init__`` not run) and ``RadEval.*`` its alias."""
    if "radeval" not in sys.modules:
        found = importlib.util.find_spec("radeval")
        if found is None or not found.submodule_search_locations:
            raise MissingDependencyError(f"RadGraph F1 uses RadEval's RadGraph; install it with `{INSTALL}` (and "
                                         "`pip install 'medtemporal[clinical]'` for what it needs).")
        package = types.ModuleType("radeval")
        package.__path__ = list(found.submodule_search_locations)
        package.__spec__ = found
        package.__file__ = found.origin
        package.__package__ = "radeval"
        sys.modules["radeval"] = package
    if not any(isinstance(f, _RadEvalAlias) for f in sys.meta_path):
        sys.meta_path.insert(0, _RadEvalAlias())


def vendored_radgraph() -> types.ModuleType:
    """RadEval's vendored ``radgraph`` core module (``RadGraph``, ``F1RadGraph``)."""
    require("torch", "clinical")
    _alias_radeval()
    try:
        with warnings.catch_warnings():  # its modules change the process's warning filters at import
            return importlib.import_module("radeval.metrics.radgraph._vendor.core")
    except ImportError as exc:
        raise MissingDependencyError(f"RadEval's RadGraph could not be imported ({exc}); install "
                                     f"`pip install 'medtemporal[clinical]'` and `{INSTALL}`.") from exc


def model_dir(weights: Weights, model_type: str) -> Path:
    """A folder holding ``<model_type>/`` (config.json, vocabulary/, weights.th), as RadGraph's ``model_cache_dir``.

    An archive is unpacked once into ``<archive>.unpacked/``; a folder named by the environment is linked.
    """
    local = weights.local()
    named = f"{weights.env} names {local}" if os.environ.get(weights.env) else f"The cached {local}"
    fix = f"point it at {weights.files[0] if weights.files else 'the archive'} or the folder it unpacks to"
    if local.is_dir():
        if not (local / MODEL_CONFIG).is_file():
            raise UnavailableError(f"{named}, a folder without {MODEL_CONFIG}; {fix}.")
        return _linked(local.resolve(), model_type)
    holder = local.resolve().with_name(local.name + ".unpacked")
    if not (holder / model_type / MODEL_CONFIG).is_file():
        work = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=holder.parent))
        try:
            with tarfile.open(local, "r:gz") as tar:
                tar.extractall(work / model_type, filter="data")
            if not (work / model_type / MODEL_CONFIG).is_file():
                raise UnavailableError(f"{named}, an archive without {MODEL_CONFIG} at its top; {fix}.")
            holder.mkdir(exist_ok=True)
            os.replace(work / model_type, holder / model_type)
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise UnavailableError(f"{named}, which is not a readable .tar.gz archive ({type(exc).__name__}); "
                                   f"{fix}.") from None
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return holder


@lru_cache(maxsize=4)
def _linked(folder: Path, model_type: str) -> Path:
    """A temporary folder whose ``<model_type>`` entry links to ``folder`` (once per process and folder)."""
    holder = Path(tempfile.mkdtemp(prefix="medtemporal-radgraph-"))
    (holder / model_type).symlink_to(folder, target_is_directory=True)
    return holder


@lru_cache(maxsize=2)
def _scorer(holder: str, model_type: str) -> Any:
    core = vendored_radgraph()
    try:
        with contextlib.redirect_stdout(sys.stderr):  # it prints "Using device: …" to standard output
            return core.F1RadGraph(reward_level="all", model_type=model_type, model_cache_dir=holder)
    except OSError as exc:  # the BERT its config names is not in the Hugging Face cache (offline)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UnavailableError(f"RadGraph's text encoder could not be loaded ({first.rstrip('.')}); run once online "
                               "so that the Hugging Face cache holds it.") from None


def scorer(key: str = "radgraph_xl", model_type: str = "radgraph-xl") -> Any:
    """RadEval's ``F1RadGraph(reward_level="all")`` on the weights ``key``, loaded once per process; its
    ``radgraph`` attribute is the annotator."""
    vendored_radgraph()
    return _scorer(str(model_dir(WEIGHTS[key], model_type)), model_type)


@lru_cache(maxsize=4)
def radgraph_rewards(refs: tuple[str, ...], outs: tuple[str, ...]) -> np.ndarray:
    """``(n, 3)`` per-report (simple, partial, complete) RadGraph rewards of the outputs against the references."""
    if not refs:
        return np.zeros((0, 3))
    _, rewards, _, _ = scorer()(refs=list(map(radgraph_text, refs)), hyps=list(map(radgraph_text, outs)))
    return np.asarray(rewards, dtype=float).T


def radgraph_text(text: str) -> str:
    """``text`` as RadGraph reads it: its first `MAX_WORDS` words (module doc).

    >>> radgraph_text("a b  c"), len(radgraph_text("word " * 1000).split())
    ('a b  c', 300)
    """
    words = text.split()
    return text if len(words) <= MAX_WORDS else " ".join(words[:MAX_WORDS])


def _settings() -> dict[str, Any]:
    return {"model": "radgraph-xl", "weights": WEIGHTS["radgraph_xl"].hub_id, "code": "RadEval 2.2.1 vendored radgraph",
            "aggregate": "mean of per-report F1", "max_words": MAX_WORDS}


def _level(column: int):  # noqa: ANN202
    def rewards(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
        refs, outs = report_pairs(items, answers)
        return radgraph_rewards(tuple(refs), tuple(outs))[:, column]

    rewards.__doc__ = f"Per-report RadGraph F1, {LEVELS[column]} level."
    return rewards


for _k, _level_name in enumerate(LEVELS):
    register("metric", f"radgraph_f1_{_level_name}", higher_is_better=True, aggregation="mean", percent=True,
             on_request=True, settings=_settings, weights=("radgraph_xl",),
             needs=f"RadGraph-XL ({WEIGHTS['radgraph_xl'].size}) + its BERT; RadEval 2.2.1 (--no-deps); CPU ok, GPU faster",
             source="RadGraph (Jain et al. 2021), radgraph/RadEval rewards",
             description=(f"RadGraph F1, {_level_name} level" + (" (RG_ER)" if _level_name == "partial" else "")))(
        _level(_k))
