"""BERTScore as the report-generation papers set it: Libra's (distilbert) and RadCliQ-v1's (distilroberta).

``bertscore_f1_distilbert`` is Libra's ``radiology_report.py``: both texts lowercased and cleaned by Libra's
``clean_text`` (`temporal.libra_clean`), then HF ``evaluate``'s bertscore with ``model_type="distilbert-base-uncased"``
(bert-score's layer 5, no IDF, no baseline rescaling), the per-sample F1 averaged. RadCliQ-v1 uses
`radcliq_bertscore`: ``distilroberta-base`` layer 5, rescaled with bert-score's baseline for that model, without
IDF as CXR-Report-Metric's default and ReXrank compute it, or (RadEval ``RadCliQv1/radcliq.py``, the labelled
variant) with IDF weights from all the references scored together. An empty output scores what bert-score gives
it: raw F1 0, which rescaling turns into −b/(1−b) (−5.55 for distilroberta-base), as in CXR-Report-Metric and
RadEval; without rescaling (Libra's), 0.
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from medtemporal.errors import require
from medtemporal.registry import register
from medtemporal.schema import Item
from medtemporal.scoring.clinical.temporal import libra_clean
from medtemporal.scoring.clinical.texts import report_pairs
from medtemporal.scoring.clinical.weights import WEIGHTS
from medtemporal.scoring.metrics import Answer
from medtemporal.scoring.text_metrics import bertscore_f1

LAYER = 5
"""bert-score's tuned layer for both distilbert-base-uncased and distilroberta-base (``model2layers``)."""


@lru_cache(maxsize=4)
def _distilbert(refs: tuple[str, ...], outs: tuple[str, ...]) -> np.ndarray:
    folder = WEIGHTS["bertscore_distilbert"].local()
    return np.asarray(bertscore_f1(refs, outs, folder, num_layers=LAYER), dtype=float)


@register("metric", "bertscore_f1_distilbert", higher_is_better=True, aggregation="mean", percent=True,
          on_request=True, weights=("bertscore_distilbert",),
          settings=lambda: {"model": WEIGHTS["bertscore_distilbert"].repo, "layer": LAYER, "idf": False,
                            "rescale_with_baseline": False, "text": "lowercased, Libra's clean_text"},
          needs=f"distilbert-base-uncased ({WEIGHTS['bertscore_distilbert'].size}); CPU ok",
          source="Libra libra/eval/radiology_report.py (HF evaluate bertscore)",
          description="BERTScore F1 with distilbert-base-uncased, layer 5, no IDF or rescaling (Libra's setting)")
def bertscore_f1_distilbert(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample BERTScore F1 as Libra computes it, on Libra's cleaned, lowercased texts."""
    refs, outs = report_pairs(items, answers)
    return _distilbert(tuple(libra_clean(r.lower()) for r in refs), tuple(libra_clean(o.lower()) for o in outs))


def radcliq_bertscore(refs: Sequence[str], outs: Sequence[str], idf: bool = False) -> np.ndarray:
    """Per-sample BERTScore F1 as RadCliQ-v1 computes it (distilroberta-base, layer 5, baseline-rescaled; with
    ``idf``, IDF weights from all of ``refs`` as RadEval sets them); an empty text gets bert-score's value, raw 0
    rescaled with the baseline (bert-score 0.3.13's own path for it calls a tokenizer method transformers 5
    removed, so it is applied here)."""
    if not refs:
        return np.zeros(0)
    scorer = _radcliq_scorer(str(WEIGHTS["bertscore_distilroberta"].local()), idf)
    if idf:
        with warnings.catch_warnings():  # the IDF of these references replaces the last call's, as it should
            warnings.filterwarnings("ignore", message="Overwriting the previous importance weights")
            scorer.compute_idf([r for r in refs if r.strip()])
    baseline = float(scorer.baseline_vals[2])
    out = np.full(len(refs), (0.0 - baseline) / (1.0 - baseline))
    keep = [k for k in range(len(refs)) if refs[k].strip() and outs[k].strip()]
    if keep:
        _, _, f1 = scorer.score([outs[k] for k in keep], [refs[k] for k in keep])
        out[keep] = f1.numpy()
    return out


@lru_cache(maxsize=2)
def _radcliq_scorer(folder: str, idf: bool):  # noqa: ANN202  (a bert_score.BERTScorer)
    """RadCliQ-v1's BERTScore scorer, its encoder loaded once per process (an IDF is set per call)."""
    bert_score = require("bert_score", "clinical")
    baseline = Path(bert_score.__file__).parent / "rescale_baseline" / "en" / "distilroberta-base.tsv"
    return bert_score.BERTScorer(model_type=folder, num_layers=LAYER, idf=idf, rescale_with_baseline=True,
                                 lang="en", baseline_path=str(baseline))


def radcliq_bertscore_settings(idf: bool = False) -> dict[str, Any]:
    """How `radcliq_bertscore` runs (recorded with RadCliQ-v1)."""
    return {"model": WEIGHTS["bertscore_distilroberta"].repo, "layer": LAYER,
            "idf": "all references scored together (RadEval)" if idf else False, "rescale_with_baseline": True}
