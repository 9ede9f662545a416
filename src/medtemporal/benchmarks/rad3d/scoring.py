"""3D-RAD's scoring: the released closed-task rule beside our strict one, and the released open-task metrics.

Closed tasks (4–6) are extracted with the shared strict ``letter`` rule (one
valid letter, else invalid). The release (``M3D/Bench/eval/eval_3DRAD.py``
line 123) counts an output right when the case-sensitive substring
``"<gold letter>."`` occurs anywhere in it; rule ``rad3d_released`` reproduces
that, and ``medtemporal score`` scores every run with it too, as the variant "as released"
(`RELEASED`), so reports show both.

Open tasks (1–3) are scored as ``evaluate_result.py`` lines 25–63 and 89–112
do, through the libraries: corpus BLEU-1 (``rad3d_bleu_1``; HF ``bleu`` with
``max_order=1``, no smoothing: sacrebleu's ``Tokenizer13a`` tokens, which HF
``bleu`` copies, and tensorflow-nmt's ``compute_bleu`` formula, which with one
reference is sacrebleu's corpus BLEU with ``max_ngram_order=1, smooth_method="none"``
and, when no output is empty, nltk's ``corpus_bleu`` with ``weights=(1,)``; tests
check ours against both libraries), ROUGE-1 F
(``rad3d_rouge_1``; ``rouge_score`` without stemming, the mean over samples
where HF ``rouge`` reports an unseeded bootstrap mid-point), METEOR per sample
(``rad3d_meteor``; nltk ``meteor_score`` with its defaults, as HF ``meteor``)
and BERTScore F1 (the shared ``bertscore_f1``: roberta-large, layer 17, no
idf, no rescaling, fetched into the Hugging Face cache on first use, unless
``$MEDTEMPORAL_BERTSCORE_MODEL`` names another encoder). An empty or missing answer scores 0 (in BLEU-1: no match, while its
reference's length still counts): the release drops it (``eval_3DRAD.py`` lines 159–162).
"""

from __future__ import annotations

import warnings
from collections import Counter
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

from medtemporal.family import Answer, Item, Score, Variant, register
from medtemporal.benchmarks.rad3d.labels import CLOSED_TASKS
from medtemporal.scoring.nltk_data import ensure_nltk_data

@register("extractor", "rad3d_released", version="1", answer_types=("choice",),
          description="3D-RAD as released: right when the case-sensitive substring '<gold>.' occurs anywhere")
def released(item: Item, text: str) -> str | None:
    """The gold letter if ``"<gold>."`` occurs in ``text``; else the first other ``"X."`` (a wrong answer); else None.

    >>> item = Item.create(benchmark="3d-rad", task="task4", subtype="s", images=[], question="?",
    ...     options={"A": "Yes", "B": "No"}, answer_type="choice", answer="B")
    >>> released(item, "A. Yes or B. No"), released(item, "A. Yes"), released(item, "b")
    ('B', 'A', None)
    """
    if f"{item.answer}." in text:
        return str(item.answer)
    return next((letter for letter in item.options if f"{letter}." in text), None)


@lru_cache(maxsize=1)
def _tokenize_13a() -> Callable[[str], str]:
    """sacrebleu's 13a tokenizer (what HF ``bleu`` tokenizes with: ``metrics/bleu/tokenizer_13a.py``)."""
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    return Tokenizer13a()


@lru_cache(maxsize=1)
def _meteor_tools() -> tuple:
    """nltk's ``word_tokenize`` and ``meteor_score``, once its data is there (fetched on first use)."""
    ensure_nltk_data()
    from nltk.tokenize import word_tokenize
    from nltk.translate.meteor_score import meteor_score

    return word_tokenize, meteor_score


@lru_cache(maxsize=1)
def _rouge_1() -> object:
    """``rouge_score``'s ROUGE-1 scorer without stemming (HF ``rouge``); it needs no nltk data."""
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)


def _reference(item: Item) -> str:
    """The reference text: an open item's answer; for a closed item the release's gold string ``"B. No"``
    (letter, period, option text: ``M3D/Bench/dataset/multi_dataset.py`` lines 83–100), which its text
    metrics compare Task 4 outputs with (`TASK4_AS_TEXT`)."""
    if item.answer_type == "choice" and isinstance(item.answer, str):
        return f"{item.answer}. {item.options.get(item.answer, '')}"
    return item.reference or str(item.answer)


def _pairs(items: Sequence[Item], answers: Sequence[Answer]) -> list[tuple[str, str]]:
    """(reference, output) stripped, as the release does (``str(x).strip()``); None → ""."""
    return [(_reference(item).strip(),
             (answer if isinstance(answer, str) else " ".join(answer or [])).strip())
            for item, answer in zip(items, answers, strict=True)]


def reduce_bleu_1(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Corpus BLEU-1 from summed (clipped matches, output tokens, reference tokens).

    tensorflow-nmt ``compute_bleu`` with ``max_order=1, smooth=False`` (HF ``bleu``): precision
    = matches / output tokens, times the brevity penalty ``exp(1 - ref/out)`` when ``out <= ref``;
    0 when there is no output token at all (where nmt divides by zero). Written on summed
    statistics so the clustered bootstrap stays vectorised; tests check it against sacrebleu
    and nltk.
    """
    matches, hyp, ref = sums[..., 0], sums[..., 1], sums[..., 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = matches / np.where(hyp > 0, hyp, 1)
        bp = np.where(hyp > ref, 1.0, np.exp(1 - ref / np.where(hyp > 0, hyp, 1)))
    return np.where(hyp > 0, precision * bp, 0.0)


@register("metric", "rad3d_bleu_1", higher_is_better=True, aggregation=reduce_bleu_1, percent=True,
          description="corpus BLEU-1 as 3D-RAD's release (HF bleu: 13a tokens, nmt compute_bleu, max_order 1)")
def bleu_1(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample (clipped unigram matches, output tokens, reference tokens) on 13a tokens.

    An empty output adds its reference's length and nothing else (the release drops it).
    """
    tokenize = _tokenize_13a()
    rows = []
    for ref, out in _pairs(items, answers):
        r, h = tokenize(ref).split(), tokenize(out).split()
        rows.append((sum((Counter(h) & Counter(r)).values()), len(h), len(r)))
    return np.asarray(rows, dtype=float).reshape(len(rows), 3)


@register("metric", "rad3d_rouge_1", higher_is_better=True, aggregation="mean", percent=True,
          description="ROUGE-1 F (rouge_score, no stemming), mean over samples; empty scores 0")
def rouge_1(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample ROUGE-1 F-measure."""
    scorer = _rouge_1()
    return np.asarray([scorer.score(ref, out)["rouge1"].fmeasure if out else 0.0
                       for ref, out in _pairs(items, answers)], dtype=float)


@register("metric", "rad3d_meteor", higher_is_better=True, aggregation="mean", percent=True,
          description="METEOR per sample (nltk meteor_score defaults on word_tokenize tokens); empty scores 0")
def meteor(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-sample METEOR."""
    word_tokenize, meteor_score = _meteor_tools()
    values = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for ref, out in _pairs(items, answers):
            values.append(meteor_score([word_tokenize(ref)], word_tokenize(out)) if out else 0.0)
    return np.asarray(values, dtype=float)


OPEN_METRICS = ("rad3d_bleu_1", "rad3d_rouge_1", "rad3d_meteor", "bertscore_f1")
CLOSED_METRICS = ("accuracy",)
RELEASED = Variant(
    extractors={t: "rad3d_released" for t in CLOSED_TASKS},
    description="as released: a closed answer is right when the output contains \"<gold>.\" (case-sensitive "
                "substring anywhere, M3D/Bench/eval/eval_3DRAD.py line 123)",
)
"""The release's closed-task rule, scored by ``medtemporal score`` beside the strict one (``scores.json`` variants)."""
TASK4_AS_TEXT = Variant(
    extractors={"task4": "raw_text"},
    metrics={"task4": ("rad3d_bleu_1", "rad3d_rouge_1")},
    description="as the release computes Task 4: BLEU-1 and ROUGE-1 of the raw output against \"<letter>. "
                "<answer>\" (evaluate_result.py lines 131-142 send task1-task4 to the open-task evaluator, which "
                "computes no METEOR); BERTScore left out here (it would fetch roberta-large for every closed run)",
)
"""What the released code computes for Task 4 (a bug: the paper reports accuracy), shown labelled beside it."""


def macro(scores: Sequence[Score], metric: str, subtypes: Sequence[str]) -> float | None:
    """Unweighted mean over ``subtypes`` of ``metric`` (the paper's "macro": over subtasks, not classes)."""
    values = [s.value for s in scores if s.metric == metric and s.group in {f"subtype:{x}" for x in subtypes}]
    return float(np.mean(values)) if values else None
