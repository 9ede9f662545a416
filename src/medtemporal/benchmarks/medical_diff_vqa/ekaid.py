"""Medical-Diff-VQA scored as EKAID scores it: the labelled variant ``EKAID`` beside ours.

EKAID (``Holipori/EKAID`` 1e5dd0d, the paper's code) scores a results file of generated answers with
``model/evaluate_score.py``:

* ``acc`` (L216–252): for every question whose text does not contain ``"what has changed"`` (L232), the
  generated string equals the released answer exactly (``gt_ans == pr_ans``, L241: no case folding, no
  parsing); closed questions are those whose released answer is ``'yes'`` or ``'no'`` (L237), the others
  open. Its captions are decoded tokens joined by single spaces (``utils.decode_sequence``), never with
  space around them, so a model's output is compared here with surrounding whitespace stripped and
  nothing else changed: "Yes." or "yes, there is" is wrong, as it is for EKAID.
* ``caption_metric`` (L44–70) and ``caption_metric_by_question_type`` (L102–143): ``my_COCOEvalCap``
  (``model/evaluation.py``) on the raw outputs of all questions, and on the subset of one
  ``question_type``: PTB tokens, ``Bleu(4)``, ``Meteor()``, ``Rouge()``, ``Cider()`` over that subset, so
  CIDEr's document frequencies come from the subset's own references.

Where it differs from ours (the family's main scores): the answer scored is the raw output, not the
extracted one (closed questions: "Yes." is not "yes"; ours extracts ``Yes``); accuracy is exact, not
case- and space-folded; per-type CIDEr recomputes its document frequencies (``diffvqa_cider_by_type``;
over all questions ``diffvqa_cider`` is the same in both). BLEU, METEOR and ROUGE-L of a group are already
the library's value on that group (`metrics`). The test set is the benchmark's (``--split``): EKAID's own is
``--split ekaid``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from medtemporal.family import Answer, Item, Variant, register
from medtemporal.benchmarks.medical_diff_vqa.metrics import TEXT_INFO, cider_values, settings, stats, tokenized

NAME = "EKAID"
"""The variant's name in ``scores.json`` and the report."""
SKIPPED = "what has changed"
"""EKAID's ``acc`` leaves out every question whose text contains this (``evaluate_score.py`` L232)."""


def counted(item: Item) -> bool:
    """Whether EKAID's ``acc`` counts the question (its text lacks `SKIPPED`)."""
    return SKIPPED not in item.question


def reduce_share(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Right answers over counted questions, from summed (right, counted); NaN where none is counted."""
    right, seen = sums[..., 0], sums[..., 1]
    return np.divide(right, seen, out=np.full_like(right, np.nan), where=seen > 0)


@register("metric", "diffvqa_ekaid_accuracy", higher_is_better=True, aggregation=reduce_share, percent=True,
          description="EKAID's acc: the output (surrounding space stripped) equals the released answer exactly; "
          "questions containing 'what has changed' are not counted")
def ekaid_accuracy(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per question (right, counted): the answer is the raw output under the EKAID variant."""
    out = np.zeros((len(items), 2))
    for row, (item, answer) in enumerate(zip(items, answers, strict=True)):
        out[row, 1] = counted(item)
        reference = item.reference if item.reference is not None else str(item.answer)
        out[row, 0] = out[row, 1] and isinstance(answer, str) and answer.strip() == reference
    return out


def question_type(item: Item) -> str:
    """The release's ``question_type`` of an item (its subtype)."""
    return str(item.meta.get("question_type", item.subtype))


def cider_by_type(refs: tuple[str, ...], hyps: tuple[str, ...], types: Sequence[str]) -> np.ndarray:
    """Per-item CIDEr-D with the document frequencies of the item's own question type (EKAID's per-type call)."""
    t_refs, t_hyps = tokenized(refs, hyps)
    out = np.zeros(len(refs))
    for kind in dict.fromkeys(types):
        rows = [k for k, t in enumerate(types) if t == kind]
        out[rows] = cider_values([t_refs[k] for k in rows], [t_hyps[k] for k in rows])
    return out


def _cider_settings() -> dict[str, object]:
    return {**settings(), "document_frequencies": "the references of each question type's items (EKAID's "
            "caption_metric_by_question_type)"}


@register("metric", "diffvqa_cider_by_type", aggregation="mean", corpus=True,
          **{**TEXT_INFO, "settings": _cider_settings},
          description="CIDEr-D (pycocoevalcap Cider, PTB tokens), averaged; document frequencies over each "
          "question type's own questions, as EKAID's per-type evaluation")
def cider_type(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-item CIDEr-D, each question type scored on its own (a type's group mean is EKAID's per-type CIDEr)."""
    types = [question_type(it) for it in items]
    return stats(items, answers, lambda r, h: cider_by_type(r, h, types)[:, None], 1)[:, 0]


TEXT = ("diffvqa_bleu_1", "diffvqa_bleu_2", "diffvqa_bleu_3", "diffvqa_bleu_4", "diffvqa_meteor",
        "diffvqa_rouge_l", "diffvqa_cider", "diffvqa_cider_by_type")
VARIANT = Variant(
    extractors={"closed": "raw_text", "open": "raw_text", "difference": "raw_text"},
    metrics={"closed": ("diffvqa_ekaid_accuracy", *TEXT), "open": ("diffvqa_ekaid_accuracy", *TEXT),
             "difference": TEXT},
    description="as EKAID scores it (Holipori/EKAID model/evaluate_score.py): the raw output against the released "
                "answer; accuracy is exact string equality (surrounding space stripped), closed = released answer "
                "yes/no, questions containing 'what has changed' left out (acc, L216-252); text metrics per "
                "question type on that type's questions alone, CIDEr's document frequencies included "
                "(caption_metric_by_question_type)",
)
"""EKAID's scoring, written into ``scores.json`` beside ours (`BenchmarkSpec.variants`)."""
