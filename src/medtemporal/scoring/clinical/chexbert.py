"""CheXbert label F1 (5 and 14 observations, micro and macro) and SembScore, from the published CheXbert weights.

CheXbert (Smit et al., 2020) is ``bert-base-uncased`` with 13 four-way heads (blank, positive, negative,
uncertain) and one two-way head for No Finding on the [CLS] state. The weights are
``StanfordAIMI/RRG_scorers/chexbert.pth`` (1.31 GB), loaded here with ``transformers`` (``BertModel``) and
``torch``: the ``f1chexbert`` package cannot be used beside our stack (FACTS §6.2: its
``hf_hub_download(force_filename=…)`` and its ``_check_targets`` unpack fail on current huggingface_hub and
scikit-learn) and RadEval's copy cannot be imported (see ``docs/report-metrics.md``).

As RadEval and f1chexbert score report generation: an observation is present when its head says positive or
uncertain (class 1 or 3, ``_chexbert_base.py:134``), reports are tokenised to at most 512 tokens, and the F1s are
scikit-learn's ``classification_report`` over the corpus: micro and macro over the 14 labels (13 observations and
No Finding) or over the 5 (Cardiomegaly, Edema, Consolidation, Atelectasis, Pleural Effusion); a label with no
true and no predicted positive counts 0 in the macro mean, as scikit-learn's ``zero_division`` default does.
Per sample each metric stores the (TP, FP, FN) of every label, so groups and bootstrap replicates reduce to the
corpus F1. SembScore (ReXrank, CXR-Report-Metric) is the cosine similarity of the two reports' CheXbert [CLS]
embeddings, averaged.

An empty or invalid answer states no observation: its label row is all absent (CheXbert run on ``""`` may say
"No Finding", which would pay an answer for writing nothing on a normal study) and its SembScore is 0 (the rule of
every report metric: docs/report-metrics.md).

Weights: ``$MEDTEMPORAL_CHEXBERT`` (a ``chexbert.pth``) and ``$MEDTEMPORAL_CHEXBERT_BACKBONE`` (a folder with the
backbone's ``config.json`` and ``vocab.txt``) name local copies; otherwise both come from the Hugging Face cache.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from medtemporal.errors import UnavailableError, require
from medtemporal.hf_models import MODEL_CONFIG
from medtemporal.registry import register
from medtemporal.schema import Item
from medtemporal.scoring.clinical.models import batches, one_line, torch_device
from medtemporal.scoring.clinical.texts import report_pairs
from medtemporal.scoring.clinical.weights import WEIGHTS
from medtemporal.scoring.metrics import Answer

CONDITIONS = ("Enlarged Cardiomediastinum", "Cardiomegaly", "Lung Opacity", "Lung Lesion", "Edema", "Consolidation",
              "Pneumonia", "Atelectasis", "Pneumothorax", "Pleural Effusion", "Pleural Other", "Fracture",
              "Support Devices", "No Finding")
"""CheXbert's heads in order: 13 observations, then No Finding."""
TOP5 = ("Cardiomegaly", "Edema", "Consolidation", "Atelectasis", "Pleural Effusion")
"""The five observations of the "CheXbert-5" F1 (MLRG, RadEval, CXRMate)."""
PRESENT = (1, 3)
"""Head classes counted as present: positive and uncertain."""
MAX_TOKENS = 512


class CheXbert:
    """The CheXbert labeller: labels and [CLS] embeddings of reports."""

    def __init__(self, checkpoint: str, backbone: str) -> None:
        torch = require("torch", "clinical")
        transformers = require("transformers", "clinical")
        config = transformers.BertConfig.from_json_file(f"{backbone}/{MODEL_CONFIG}")
        self.tokenizer = transformers.BertTokenizer(f"{backbone}/vocab.txt", do_lower_case=True)
        self.device = torch_device()
        self.bert = transformers.BertModel(config, add_pooling_layer=True)
        hidden = config.hidden_size
        self.heads = torch.nn.ModuleList([torch.nn.Linear(hidden, 4) for _ in CONDITIONS[:-1]]
                                         + [torch.nn.Linear(hidden, 2)])
        state = torch.load(checkpoint, map_location="cpu", weights_only=True)
        state = {k.removeprefix("module."): v for k, v in state.get("model_state_dict", state).items()}
        module = torch.nn.Module()
        module.bert, module.linear_heads = self.bert, self.heads
        missing, unexpected = module.load_state_dict(state, strict=False)
        missing = [k for k in missing if not k.endswith("position_ids")]
        if missing or [k for k in unexpected if not k.endswith("position_ids")]:
            raise UnavailableError(f"{checkpoint} is not a CheXbert checkpoint (missing {missing[:3]}, unexpected "
                                   f"{list(unexpected)[:3]}); point {WEIGHTS['chexbert'].env} at chexbert.pth.")
        module.to(self.device).eval()

    def run(self, reports: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(labels, embeddings)``: 0/1 presence of each of `CONDITIONS` per report, and its [CLS] state."""
        torch = require("torch", "clinical")
        labels, embeddings = [], []
        with torch.no_grad():
            for batch in batches([one_line(r) for r in reports]):
                enc = self.tokenizer(batch, padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt")
                out = self.bert(input_ids=enc["input_ids"].to(self.device),
                                attention_mask=enc["attention_mask"].to(self.device))
                cls = out.last_hidden_state[:, 0]
                classes = torch.stack([head(cls).argmax(dim=1) for head in self.heads], dim=1).cpu().numpy()
                labels.append(np.isin(classes, PRESENT).astype(np.int8))
                embeddings.append(cls.float().cpu().numpy())
        if not labels:
            return np.zeros((0, len(CONDITIONS)), np.int8), np.zeros((0, 0))
        return np.concatenate(labels), np.concatenate(embeddings)


@lru_cache(maxsize=1)
def _labeller(checkpoint: str, backbone: str) -> CheXbert:
    return CheXbert(checkpoint, backbone)


def labeller() -> CheXbert:
    """The CheXbert labeller of the weights in use, loaded once per process.

    Raises:
        UnavailableError: the weights cannot be had (one sentence).
    """
    require("torch", "clinical")
    return _labeller(str(WEIGHTS["chexbert"].local()), str(WEIGHTS["chexbert_backbone"].local()))


@lru_cache(maxsize=4)
def chexbert_outputs(refs: tuple[str, ...], outs: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                             np.ndarray]:
    """Labels and embeddings of references and outputs: ``(ref_labels, out_labels, ref_emb, out_emb)``."""
    model = labeller()
    ref_labels, ref_emb = model.run(refs)
    out_labels, out_emb = model.run(outs)
    return ref_labels, out_labels, ref_emb, out_emb


def label_counts(truth: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """``(n, 3·L)`` per-sample (TP, FP, FN) of each label, label-major: ``[tp_0, fp_0, fn_0, tp_1, …]``."""
    t, p = truth.astype(bool), pred.astype(bool)
    return np.stack([t & p, ~t & p, t & ~p], axis=-1).reshape(len(t), -1).astype(float)


def reduce_f1(labels: Sequence[int], average: str):  # noqa: ANN201  (a Reduce)
    """Micro or macro F1 over ``labels`` from summed `label_counts` (scikit-learn's, zero_division 0)."""
    columns = np.array(labels)

    def f1(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
        per = sums.reshape(*sums.shape[:-1], -1, 3)[..., columns, :]
        tp, fp, fn = per[..., 0], per[..., 1], per[..., 2]
        if average == "micro":
            tp, fp, fn = tp.sum(-1), fp.sum(-1), fn.sum(-1)
        denom = 2 * tp + fp + fn
        value = np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), 0.0)
        return value if average == "micro" else value.mean(-1)

    f1.__name__ = f"{average}_f1_over_{len(labels)}_labels"
    return f1


def _settings() -> dict[str, Any]:
    return {"weights": WEIGHTS["chexbert"].hub_id, "backbone": WEIGHTS["chexbert_backbone"].repo,
            "present": "positive or uncertain", "max_tokens": MAX_TOKENS}


def _empty(outs: Sequence[str]) -> np.ndarray:
    """Which outputs are empty (module doc: they state nothing)."""
    return np.array([not o.strip() for o in outs], dtype=bool)


def _labels_counts(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    refs, outs = report_pairs(items, answers)
    ref_labels, out_labels, _, _ = chexbert_outputs(tuple(refs), tuple(outs))
    return label_counts(ref_labels, np.where(_empty(outs)[:, None], 0, out_labels))


_NEEDS = f"CheXbert weights ({WEIGHTS['chexbert'].size}); CPU ok, GPU faster"
_INFO = dict(higher_is_better=True, percent=True, on_request=True, needs=_NEEDS, settings=_settings,
             weights=("chexbert", "chexbert_backbone"), source="CheXbert (Smit et al. 2020), as RadEval/f1chexbert")
ALL14 = tuple(range(len(CONDITIONS)))
FIVE = tuple(CONDITIONS.index(c) for c in TOP5)
for _name, _labels, _average, _text in (
    ("chexbert_f1_14_micro", ALL14, "micro", "micro F1 over the 14 CheXbert labels"),
    ("chexbert_f1_14_macro", ALL14, "macro", "macro F1 over the 14 CheXbert labels"),
    ("chexbert_f1_5_micro", FIVE, "micro", "micro F1 over the 5 CheXbert labels (CheXbert-5)"),
    ("chexbert_f1_5_macro", FIVE, "macro", "macro F1 over the 5 CheXbert labels"),
):
    register("metric", _name, aggregation=reduce_f1(_labels, _average), description=f"CheXbert {_text}",
             **_INFO)(_labels_counts)


@register("metric", "semb_score", aggregation="mean", description="SembScore: cosine of CheXbert [CLS] embeddings",
          **{**_INFO, "source": "CXR-Report-Metric / ReXrank (CheXbert embeddings)"})
def semb_score(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample cosine similarity of the reference's and the output's CheXbert embeddings (0 for a zero vector
    and for an empty output)."""
    refs, outs = report_pairs(items, answers)
    _, _, ref_emb, out_emb = chexbert_outputs(tuple(refs), tuple(outs))
    if len(refs) == 0:
        return np.zeros(0)
    norms = np.linalg.norm(ref_emb, axis=1) * np.linalg.norm(out_emb, axis=1)
    dots = np.einsum("nd,nd->n", ref_emb, out_emb)
    return np.where((norms > 0) & ~_empty(outs), dots / np.where(norms > 0, norms, 1), 0.0)
