"""RaTEScore (Zhao et al., EMNLP 2024): entity-aware report similarity, through the ``ratescore`` package.

``RaTEScore.RaTEScore`` (ratescore 0.6.0, MIT) finds medical entities with ``Angelakeke/RaTE-NER-Deberta``,
embeds them with ``FremyCompany/BioLORD-2023-C`` and scores their type-weighted best matches (the "long"
affinity matrix, its default); a pair where either side has no entity scores 0.5 (``scorer.py``). We pass it the
two model folders (from the Hugging Face cache, or ``$MEDTEMPORAL_RATESCORE_NER`` and
``$MEDTEMPORAL_RATESCORE_ENCODER``) and score each pair on its own: ``compute_score`` splits all reports into
sentences first and pairs the results back by position, and medspacy's splitter (the package's ``sentence_split``)
drops sentences under 3 characters, so a text with no sentence left (``"No"``, ``"."``) would shift every later pair
or raise ``IndexError``. Such a text has no entity the package can find: it gets the package's no-entity score,
0.5, without a call. An empty or invalid answer scores 0 (the rule of every report metric: the package cannot score
an empty text, and its no-entity 0.5 would pay an answer for writing nothing).

RaTEScore splits sentences with medspacy, which needs spaCy ≥ 3.8 beside numpy 2 (medspacy pins spaCy < 3.8 on
Python < 3.12, whose build expects numpy 1): see ``docs/report-metrics.md`` for the install line.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from medtemporal.errors import MissingDependencyError, require
from medtemporal.registry import register
from medtemporal.schema import Item
from medtemporal.scoring.clinical.texts import report_pairs
from medtemporal.scoring.clinical.weights import WEIGHTS
from medtemporal.scoring.metrics import Answer

NO_ENTITY = 0.5
"""RaTEScore's score of a pair where either report has no entity."""
EMPTY = 0.0
"""The score of an empty or invalid answer (module doc)."""
MEDSPACY_FIX = ("pip install 'spacy>=3.8,<3.9' loguru PyFastNER pysimstring Unidecode && "
                "pip install --no-deps medspacy==1.3.1 PyRuSH==1.0.13 pysbd==0.3.4 medspacy_quickumls==3.2")


def _package() -> Any:
    """The ``RaTEScore`` module (its import loads medspacy's sentence splitter)."""
    require("torch", "clinical")
    try:  # medspacy turns every warning off at import (warnings.filterwarnings("ignore")): keep ours on
        with contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():
            import RaTEScore
    except ModuleNotFoundError as exc:
        if exc.name == "RaTEScore":
            raise MissingDependencyError("RaTEScore needs the ratescore package; install it with "
                                         "`pip install 'medtemporal[clinical]'`.") from exc
        raise MissingDependencyError(f"RaTEScore needs medspacy ({exc}); install it with `{MEDSPACY_FIX}`.") from exc
    except ValueError as exc:  # "numpy.dtype size changed": spaCy < 3.8 built for numpy 1
        raise MissingDependencyError(f"RaTEScore's medspacy runs a spaCy built for another numpy ({exc}); install "
                                     f"`{MEDSPACY_FIX}`.") from exc
    return RaTEScore


@lru_cache(maxsize=1)
def _scorer(ner: str, encoder: str) -> Any:
    package = _package()
    torch = require("torch", "clinical")
    return package.RaTEScore(bert_model=ner, eval_model=encoder, use_gpu=torch.cuda.is_available(), batch_size=1,
                             affinity_matrix="long")


def scorer() -> Any:
    """``RaTEScore.RaTEScore`` on the weights in use, loaded once per process."""
    _package()
    return _scorer(str(WEIGHTS["ratescore_ner"].local()), str(WEIGHTS["ratescore_encoder"].local()))


@lru_cache(maxsize=4)
def ratescores(refs: tuple[str, ...], outs: tuple[str, ...]) -> np.ndarray:
    """Per-pair RaTEScore, each pair scored on its own (see the module doc)."""
    if not refs:
        return np.zeros(0)
    model = scorer()
    from RaTEScore.utils import sentence_split

    def one(ref: str, out: str) -> float:
        if not out.strip():
            return EMPTY
        if not (sentence_split([ref])[0] and sentence_split([out])[0]):
            return NO_ENTITY
        return float(model.compute_score([out], [ref])[0])

    return np.asarray([one(ref, out) for ref, out in zip(refs, outs, strict=True)], dtype=float)


def _settings() -> dict[str, Any]:
    return {"ner": WEIGHTS["ratescore_ner"].repo, "encoder": WEIGHTS["ratescore_encoder"].repo,
            "affinity_matrix": "long", "package": "ratescore 0.6.0", "no_entity": NO_ENTITY,
            "empty_answer": EMPTY}


@register("metric", "ratescore", higher_is_better=True, aggregation="mean", percent=True, on_request=True,
          settings=_settings, weights=("ratescore_ner", "ratescore_encoder"),
          needs=f"RaTE-NER + BioLORD ({WEIGHTS['ratescore_ner'].size} + {WEIGHTS['ratescore_encoder'].size}); "
                "medspacy; CPU ok",
          source="RaTEScore (Zhao et al. 2024), ratescore package",
          description="RaTEScore: entity-aware similarity of output and reference (ratescore package)")
def ratescore(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample RaTEScore of the output against ``item.reference``."""
    refs, outs = report_pairs(items, answers)
    return ratescores(tuple(refs), tuple(outs))
