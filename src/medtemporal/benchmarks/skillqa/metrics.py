"""ClinicalSkillQA's rationale BERTScore and overall score (002 §4.3–4.4).

* ``skillqa_rationale_bertscore``: BERTScore F1 between the rationale (the
  output without its order, `medtemporal.scoring.ordering.rationale`) and the
  reference rationale, averaged over instances (§4.3). The paper names no
  encoder, layer, idf or rescaling (FACTS §2.2): the encoder is
  ``$MEDTEMPORAL_BERTSCORE_MODEL`` (default bert-score's English
  ``roberta-large``, its tuned layer, no idf, no rescaling; fetched into the
  Hugging Face cache on first use), recorded in ``scores.json`` under the
  metric's ``settings``.
* ``skillqa_overall``: S_final = 100·[β·(α·TaskAcc + (1−α)·PairAcc) + (1−β)·BERTScore]
  with α = 0.7, β = 0.8 (§4.4), computed from the unrounded components of
  the group (footnote 4), so its clustered interval resamples all three at once.

Task Accuracy is the shared ``accuracy`` and Pairwise Accuracy the shared
``pairwise_accuracy`` (micro over adjacent ground-truth pairs, §4.2).

>>> round(overall_score(0.63, 0.86, 0.79), 2)  # ZZUNLP's rounded components (published: 71.43)
71.72
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from medtemporal.family import Answer, InvalidInputError, Item, is_correct, register
from medtemporal.scoring.ordering import adjacent_pairs_correct, rationale
from medtemporal.scoring.text_metrics import BERTSCORE_MODEL_ENV, bertscore_f1, bertscore_model, bertscore_settings

ALPHA = 0.7
"""Weight of Task Accuracy within the ordering score (§4.4)."""
BETA = 0.8
"""Weight of the ordering score against BERTScore (§4.4)."""


def overall_score(task_accuracy: float, pairwise_accuracy: float, bertscore: float,
                  alpha: float = ALPHA, beta: float = BETA) -> float:
    """The leaderboard score, 0–100: ``100·[β·(α·T + (1−α)·P) + (1−β)·B]`` from components in 0–1."""
    return 100.0 * (beta * (alpha * task_accuracy + (1 - alpha) * pairwise_accuracy) + (1 - beta) * bertscore)


def settings() -> dict[str, Any]:
    """α, β and the BERTScore encoder and layer as they are now (recorded in ``scores.json``)."""
    return {"alpha": ALPHA, "beta": BETA, **bertscore_settings()}


_CACHE: dict[tuple[str, str, str], float] = {}


def rationale_f1(items: Sequence[Item], outputs: Sequence[str | None]) -> np.ndarray:
    """Per-item BERTScore F1 of each output's rationale against ``item.reference`` (0 for no rationale)."""
    model = bertscore_model()
    refs, cands = [], []
    for item, output in zip(items, outputs, strict=True):
        if item.reference is None:
            raise InvalidInputError(f"Item {item.id} has no reference rationale; rebuild the benchmark from a gold file "
                                    "with rationales.")
        refs.append(item.reference)
        cands.append(rationale(item, output))
    todo = sorted({(r, c) for r, c in zip(refs, cands) if (model, r, c) not in _CACHE})
    if todo:
        for (r, c), f1 in zip(todo, bertscore_f1([r for r, _ in todo], [c for _, c in todo], model), strict=True):
            _CACHE[(model, r, c)] = f1
    return np.asarray([_CACHE[(model, r, c)] for r, c in zip(refs, cands)], dtype=float)


@register("metric", "skillqa_rationale_bertscore", higher_is_better=True, aggregation="mean", reads_output=True, percent=True,
          settings=settings, description="BERTScore F1 of the rationale (the output without its order) against the "
          f"reference, as the ClinicalSkillQA paper scores it; encoder from ${BERTSCORE_MODEL_ENV}")
def rationale_bertscore(items: Sequence[Item], answers: Sequence[Answer], outputs: Sequence[str | None]) -> np.ndarray:
    """Per-item rationale BERTScore F1; see `rationale_f1`."""
    return rationale_f1(items, outputs)


def reduce_overall(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """β·(α·exact/n + (1−α)·pairs right/pairs) + (1−β)·BERTScore/n from summed (exact, right, pairs, F1)."""
    task = sums[..., 0] / counts
    pairs = sums[..., 1] / np.where(sums[..., 2] > 0, sums[..., 2], np.nan)
    return BETA * (ALPHA * task + (1 - ALPHA) * pairs) + (1 - BETA) * sums[..., 3] / counts


@register("metric", "skillqa_overall", higher_is_better=True, aggregation=reduce_overall, percent=True,
          reads_output=True, settings=settings,
          description=f"ClinicalSkillQA overall score 100·[β(α·TaskAcc + (1−α)·PairAcc) + (1−β)·BERTScore], "
          f"α = {ALPHA}, β = {BETA}, from unrounded components")
def overall(items: Sequence[Item], answers: Sequence[Answer], outputs: Sequence[str | None]) -> np.ndarray:
    """Per-item (exact order, adjacent pairs right, adjacent pairs, rationale F1), reduced by `reduce_overall`."""
    stats = np.zeros((len(items), 4))
    f1 = rationale_f1(items, outputs)
    for row, (item, answer) in enumerate(zip(items, answers, strict=True)):
        truth = list(item.answer)
        order = answer if isinstance(answer, list) else None
        stats[row] = (is_correct(item, order), adjacent_pairs_correct(truth, order), len(truth) - 1, f1[row])
    return stats
