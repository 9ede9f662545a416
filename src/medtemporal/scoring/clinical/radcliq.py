"""1/RadCliQ-v1 (Yu et al., Patterns 2023): a linear combination of four report metrics, lower raw is better.

Per sample, RadCliQ-v1 standardises [RadGraph combined, BERTScore, SembScore, BLEU-2] with the published scaler
and takes their dot product with the published coefficients plus intercept (rajpurkarlab/CXR-Report-Metric
``CXRMetric/run_eval.py``; the same numbers in RadEval ``RadCliQv1/radcliq.py:42-55``):

- RadGraph combined: (entity F1 + relation F1) / 2 of the original RadGraph model's annotations
  (``StanfordAIMI/RRG_scorers/radgraph.tar.gz``), through RadEval's vendored RadGraph and its RadCliQ helpers, each
  text read up to its first 300 words as for RadGraph F1 (`radgraph.radgraph_text`);
- BERTScore: `bertscores.radcliq_bertscore` (distilroberta-base, layer 5, baseline-rescaled, no IDF: the
  default of CXR-Report-Metric's ``run_eval.py`` and ReXrank's rows); ``inv_radcliq_v1_idf`` is the labelled
  variant with IDF over the references scored together, as RadEval computes it;
- SembScore: cosine of CheXbert embeddings (`chexbert`);
- BLEU-2: pycocoevalcap's sentence BLEU-2 on whitespace tokens (RadEval's ``Bleu(n=2)``).

``inv_radcliq_v1`` stores the raw per-sample RadCliQ-v1 and reduces a group to 1 / mean (ReXrank's headline;
RadEval ``radcliq_v1``), so higher is better; the raw value of an exact match is negative (RadEval#5), and so
can the group value be. An empty output gets what the four inputs give it (BERTScore −5.55, the others 0): a raw
RadCliQ-v1 of about 11.6, worse than any written report.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Sequence

import numpy as np

from medtemporal.registry import register
from medtemporal.schema import Item
from medtemporal.scoring.clinical.bertscores import radcliq_bertscore, radcliq_bertscore_settings
from medtemporal.scoring.clinical.chexbert import chexbert_outputs
from medtemporal.scoring.clinical.lexical import bleu_counts, reduce_bleu
from medtemporal.scoring.clinical.radgraph import radgraph_text, scorer, vendored_radgraph
from medtemporal.scoring.clinical.texts import report_pairs
from medtemporal.scoring.clinical.weights import WEIGHTS
from medtemporal.scoring.metrics import Answer

FEATURES = ("radgraph", "bertscore", "semb_score", "bleu_score")
"""RadCliQ-v1's inputs in its column order."""
SCALER_MEAN = np.array([0.53792312, 0.61757256, 0.76479421, 0.44738335])
SCALER_SCALE = np.array([0.30282584, 0.22430938, 0.25394391, 0.29892717])
COEFFICIENTS = np.array([-3.77083683e-01, -3.70300100e-01, -2.52616218e-01, 4.31504841e-12])
INTERCEPT = 2.46655256e-10
"""The published RadCliQ-v1 normaliser and linear model (CXR-Report-Metric run_eval.py; RadEval radcliq.py:42-55)."""


def radgraph_combined(refs: Sequence[str], outs: Sequence[str]) -> np.ndarray:
    """Per-report (entity F1 + relation F1) / 2 of the original RadGraph's annotations (RadEval's helpers)."""
    vendored_radgraph()
    import importlib

    helpers = importlib.import_module("radeval.metrics.RadCliQv1.radcliq")
    annotate = scorer("radgraph", "radgraph").radgraph
    refs_ann, outs_ann = annotate(list(map(radgraph_text, refs))), annotate(list(map(radgraph_text, outs)))
    values = []
    for k in range(len(refs)):
        ref, out = refs_ann.get(str(k), {}), outs_ann.get(str(k), {})
        entities = helpers.compute_f1(helpers.extract_entities(ref), helpers.extract_entities(out))
        relations = helpers.compute_f1(helpers.extract_relations(ref), helpers.extract_relations(out))
        values.append((entities + relations) / 2)
    return np.asarray(values, dtype=float)


@lru_cache(maxsize=2)
def _other_features(refs: tuple[str, ...], outs: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """RadGraph combined, SembScore and BLEU-2 of each pair (shared by both BERTScore settings)."""
    _, _, ref_emb, out_emb = chexbert_outputs(refs, outs)
    norms = np.linalg.norm(ref_emb, axis=1) * np.linalg.norm(out_emb, axis=1)
    semb = np.where(norms > 0, np.einsum("nd,nd->n", ref_emb, out_emb) / np.where(norms > 0, norms, 1), 0.0)
    bleu2 = reduce_bleu(2)(bleu_counts(refs, outs), np.ones(len(refs)))
    return radgraph_combined(refs, outs), semb, bleu2


def radcliq_v1(refs: Sequence[str], outs: Sequence[str], idf: bool = False) -> np.ndarray:
    """Per-sample raw RadCliQ-v1 (lower is better); ``idf``: its BERTScore with RadEval's IDF weights."""
    if not refs:
        return np.zeros(0)
    radgraph, semb, bleu2 = _other_features(tuple(refs), tuple(outs))
    features = np.column_stack([radgraph, radcliq_bertscore(refs, outs, idf=idf), semb, bleu2])
    return ((features - SCALER_MEAN) / SCALER_SCALE) @ COEFFICIENTS + INTERCEPT


def reduce_inverse_mean(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """1 / mean of the per-sample raw RadCliQ-v1 (NaN where the mean is 0)."""
    mean = sums[..., 0] / counts
    return np.where(mean != 0, 1 / np.where(mean != 0, mean, 1), np.nan)


def _settings(idf: bool) -> Callable[[], dict[str, Any]]:
    return lambda: {"features": list(FEATURES), "radgraph": WEIGHTS["radgraph"].hub_id,
                    "chexbert": WEIGHTS["chexbert"].hub_id, "bertscore": radcliq_bertscore_settings(idf),
                    "aggregate": "1 / mean of per-sample RadCliQ-v1"}


def _register(name: str, idf: bool, source: str, description: str) -> None:
    def inv_radcliq(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
        refs, outs = report_pairs(items, answers)
        return radcliq_v1(refs, outs, idf=idf)

    inv_radcliq.__doc__ = "Per-sample raw RadCliQ-v1; the group value is 1 / mean."
    register("metric", name, higher_is_better=True, aggregation=reduce_inverse_mean, on_request=True,
             settings=_settings(idf), weights=("radgraph", "chexbert", "chexbert_backbone", "bertscore_distilroberta"),
             needs=(f"RadGraph ({WEIGHTS['radgraph'].size}) + CheXbert ({WEIGHTS['chexbert'].size}) + "
                    "distilroberta-base; RadEval 2.2.1 (--no-deps); GPU advised"),
             source=source, description=description)(inv_radcliq)


_register("inv_radcliq_v1", False, "RadCliQ-v1 (Yu et al. 2023), CXR-Report-Metric / ReXrank",
          "1/RadCliQ-v1: inverse of the mean RadCliQ-v1 (RadGraph, BERTScore without IDF, SembScore, BLEU-2), "
          "as ReXrank computes it")
_register("inv_radcliq_v1_idf", True, "RadCliQ-v1 as RadEval RadCliQv1/radcliq.py computes it",
          "1/RadCliQ-v1 with RadEval's IDF-weighted BERTScore (variant; ReXrank's rows use no IDF)")
