"""The field's report metrics, per sample: lexical (R2Gen lineage), clinical and temporal.

Importing this package registers them (kind ``metric``); `medtemporal.scoring` imports it. Every one reads the
item's reference report (``Item.reference``; an open item without one: its answer) and the output as extracted
(``raw_text`` for reports). The model-based ones are registered ``on_request``: a family lists them, and
``medtemporal score --metrics NAME`` (or ``--green URI``) scores them; their weights are fetched into the Hugging
Face cache on first use (`weights`). ``docs/report-metrics.md`` has the table.

* `texts` — each item's reference and output report; R2Gen's cleaning.
* `lexical` — BLEU-1–4, METEOR, ROUGE-L, CIDEr through pycocoevalcap (``coco_*`` raw, ``r2gen_*`` cleaned).
* `temporal` — Libra's Temporal Entity F1 (``temporal_entity_f1``).
* `chexbert` — CheXbert F1 (5/14 labels, micro/macro) and SembScore.
* `radgraph` — RadGraph F1 (simple, partial = RG_ER, complete) through RadEval's vendored RadGraph.
* `ratescore` — RaTEScore (ratescore package).
* `bertscores` — BERTScore as Libra sets it; RadCliQ-v1's BERTScore.
* `radcliq` — 1/RadCliQ-v1.
* `ctrate` — CT-RATE 18-label F1 for CT reports.
* `green` — GREEN, its model served by any backend.
* `weights`, `models` — the published weights and what the model-based metrics share.
"""

from medtemporal.scoring.clinical import (  # noqa: F401  (registers the metrics)
    bertscores, chexbert, ctrate, green, lexical, radcliq, radgraph, ratescore, temporal,
)
from medtemporal.scoring.clinical.lexical import LEXICAL_R2GEN, LEXICAL_RAW

TEMPORAL = ("temporal_entity_f1", "temporal_entity_f1_libra")
"""The temporal metric (cheap, offline): the headline (an empty answer 0) and Libra's formula as released beside it."""
CXR_LABELS = ("chexbert_f1_14_micro", "chexbert_f1_14_macro", "chexbert_f1_5_micro", "chexbert_f1_5_macro",
              "semb_score", "radgraph_f1_partial", "radgraph_f1_simple", "radgraph_f1_complete", "ratescore",
              "bertscore_f1_distilbert")
"""Model-based metrics that read any chest X-ray text: findings, short answers (on request)."""
CXR_CLINICAL = (*CXR_LABELS, "inv_radcliq_v1", "inv_radcliq_v1_idf", "green_score")
"""Every model-based chest X-ray report metric (on request), RadCliQ-v1 and GREEN included: whole reports."""
CT_CLINICAL = ("ctrate_f1_micro", "ctrate_f1_macro", "ratescore", "bertscore_f1_distilbert")
"""Model-based metrics for CT text (on request)."""

__all__ = ["CT_CLINICAL", "CXR_CLINICAL", "CXR_LABELS", "LEXICAL_R2GEN", "LEXICAL_RAW", "TEMPORAL"]
