"""The field's report metrics, per sample: lexical (R2Gen lineage), clinical and temporal.

Importing this package registers them (kind ``metric``); `medtemporal.scoring` imports it.

* `texts` — each item's reference and output report; R2Gen's cleaning.
* `lexical` — BLEU-1–4, METEOR, ROUGE-L, CIDEr through pycocoevalcap (``coco_*`` raw, ``r2gen_*`` cleaned).
* `temporal` — Libra's Temporal Entity F1 (``temporal_entity_f1``).
"""

from medtemporal.scoring.clinical import (  # noqa: F401  (registers the metrics)
    bertscores, chexbert, ctrate, lexical, radcliq, radgraph, ratescore, temporal,
)
from medtemporal.scoring.clinical.lexical import LEXICAL_R2GEN, LEXICAL_RAW

__all__ = ["LEXICAL_R2GEN", "LEXICAL_RAW"]
