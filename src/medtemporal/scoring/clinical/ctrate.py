"""CT-RATE label F1 for CT reports: the 18 CT-RATE abnormalities, classified from the text by RadBERT-CT.

The classifier is ``IAMJB/RadBERT-CT`` (RadEval's ``f1radbert_ct``; MIT): a RoBERTa sequence classifier with 18
outputs, a label present when its sigmoid exceeds 0.5, reports cut to 512 tokens (RadEval
``f1Radbert_ct/f1Radbert_ct.py``). CT-CLIP's own text classifier (``text_classifier/``, RadBERT-RoBERTa-4m with a
linear head) has the same labels and rule; its weights ship with the credentialed CT-RATE dataset, not on the hub,
and whether RadEval's are the same was not verified (FACTS §6.3). F1 is over the 18 labels, micro and macro, as
CT-CLIP scores them; RadEval adds a derived "No finding" column, which we leave out. Per sample each metric stores
the (TP, FP, FN) of every label, as CheXbert's do. ``$MEDTEMPORAL_CTRATE_CLASSIFIER`` names a local model folder.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from medtemporal.errors import UnavailableError, require
from medtemporal.registry import register
from medtemporal.schema import Item
from medtemporal.scoring.clinical.chexbert import label_counts, reduce_f1
from medtemporal.scoring.clinical.models import batches, one_line, torch_device
from medtemporal.scoring.clinical.texts import report_pairs
from medtemporal.scoring.clinical.weights import WEIGHTS
from medtemporal.scoring.metrics import Answer

LABELS = ("Medical material", "Arterial wall calcification", "Cardiomegaly", "Pericardial effusion",
          "Coronary artery wall calcification", "Hiatal hernia", "Lymphadenopathy", "Emphysema", "Atelectasis",
          "Lung nodule", "Lung opacity", "Pulmonary fibrotic sequela", "Pleural effusion",
          "Mosaic attenuation pattern", "Peribronchial thickening", "Consolidation", "Bronchiectasis",
          "Interlobular septal thickening")
"""CT-RATE's 18 abnormality labels, in the classifier's output order."""
THRESHOLD = 0.5
MAX_TOKENS = 512


class CTLabeller:
    """The CT-RATE report classifier: 0/1 labels of reports."""

    def __init__(self, folder: str) -> None:
        transformers = require("transformers", "clinical")
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
        self.model = transformers.AutoModelForSequenceClassification.from_pretrained(folder)
        if self.model.config.num_labels != len(LABELS):
            raise UnavailableError(f"The CT-RATE classifier at {folder} has {self.model.config.num_labels} outputs, "
                                   f"not {len(LABELS)}; point {WEIGHTS['ctrate_classifier'].env} at RadBERT-CT.")
        self.device = torch_device()
        self.model.to(self.device).eval()

    def labels(self, reports: Sequence[str]) -> np.ndarray:
        """``(n, 18)`` 0/1 labels."""
        torch = require("torch", "clinical")
        rows = [np.zeros((0, len(LABELS)), np.int8)]
        with torch.no_grad():
            for batch in batches([one_line(r) for r in reports]):
                enc = self.tokenizer(batch, padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt")
                logits = self.model(**{k: v.to(self.device) for k, v in enc.items()}).logits
                rows.append((torch.sigmoid(logits) > THRESHOLD).cpu().numpy().astype(np.int8))
        return np.concatenate(rows)


@lru_cache(maxsize=1)
def _labeller(folder: str) -> CTLabeller:
    return CTLabeller(folder)


@lru_cache(maxsize=4)
def ct_label_counts(refs: tuple[str, ...], outs: tuple[str, ...]) -> np.ndarray:
    """Per-sample (TP, FP, FN) of each CT-RATE label (`chexbert.label_counts` layout)."""
    model = _labeller(str(WEIGHTS["ctrate_classifier"].local()))
    return label_counts(model.labels(refs), model.labels(outs))


def _counts(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    refs, outs = report_pairs(items, answers)
    return ct_label_counts(tuple(refs), tuple(outs))


def _settings() -> dict[str, Any]:
    return {"classifier": WEIGHTS["ctrate_classifier"].repo, "labels": len(LABELS), "threshold": THRESHOLD,
            "max_tokens": MAX_TOKENS}


_ALL = tuple(range(len(LABELS)))
for _average in ("micro", "macro"):
    register("metric", f"ctrate_f1_{_average}", higher_is_better=True, aggregation=reduce_f1(_ALL, _average),
             percent=True, on_request=True, settings=_settings, weights=("ctrate_classifier",),
             needs=f"RadBERT-CT ({WEIGHTS['ctrate_classifier'].size}); CPU ok",
             source="CT-RATE labels (CT-CLIP text classifier), RadEval f1radbert_ct weights",
             description=f"{_average} F1 over CT-RATE's 18 abnormality labels (RadBERT-CT classifier), CT reports")(
        _counts)
