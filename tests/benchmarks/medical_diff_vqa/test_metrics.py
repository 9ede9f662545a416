"""The text metrics equal pycocoevalcap called directly on the same pairs, as EKAID's evaluation.py calls it."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from medtemporal.benchmarks.medical_diff_vqa import TEXT_METRICS
from medtemporal.benchmarks.medical_diff_vqa import metrics as diffvqa_metrics
from medtemporal.schema import Item
from medtemporal.scoring.aggregate import Outcome, score_outcomes
from medtemporal.scoring.metrics import metric

needs_java = pytest.mark.skipif(not diffvqa_metrics.java_status()[0],
                                reason=f"pycocoevalcap cannot run here: {diffvqa_metrics.java_status()[1]}")
PAIRS = [  # (question type, released answer, the model's extracted answer; None: invalid)
    ("presence", "yes", "Yes"), ("presence", "no", "Yes"), ("presence", "yes", None),
    ("abnormality", "pleural effusion, atelectasis", "Pleural effusion and atelectasis."),
    ("abnormality", "cardiomegaly, edema, vascular congestion", "cardiomegaly, edema"),
    ("location", "left lung area", "the left lower lung"), ("location", "right apical area", "right apical area"),
    ("level", "small", "Small."), ("level", "moderate", "mild"), ("type", "patchy", "patchy opacities"),
    ("view", "PA view", "This is a PA view."),
    ("difference", "the main image has an additional finding of pneumothorax than the reference image. ",
     "The main image has an additional finding of pneumothorax than the reference image."),
    ("difference", "the level of pleural effusion has changed from small to moderate. ",
     "the main image is missing the finding of pleural effusion than the reference image."),
    ("difference", "nothing has changed.", "nothing has changed."),
    ("difference", "the main image has additional findings of edema, and atelectasis than the reference image. ",
     "edema and atelectasis are new"),
]


def _outcomes(pairs=PAIRS) -> list[Outcome]:
    out = []
    for k, (qtype, ref, hyp) in enumerate(pairs):
        item = Item.create(benchmark="medical-diff-vqa", task="difference" if qtype == "difference" else "open",
                           subtype=qtype, images=[], question=f"question {k}", answer_type="open", answer=ref,
                           reference=ref, meta={"patient_id": f"p{k % 5}"})
        out.append(Outcome(item, hyp, "answered" if hyp is not None else "invalid"))
    return out


def _library(pairs) -> dict[str, float]:
    """EKAID's my_COCOEvalCap.evaluate on the pairs: PTB tokens, then Bleu(4), Meteor(), Rouge(), Cider()."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    tokenizer = PTBTokenizer()
    gts = tokenizer.tokenize({i: [{"caption": ref}] for i, (_, ref, _) in enumerate(pairs)})
    res = tokenizer.tokenize({i: [{"caption": hyp or ""}] for i, (_, _, hyp) in enumerate(pairs)})
    bleu, _ = Bleu(4).compute_score(gts, res, verbose=0)
    meteor, _ = diffvqa_metrics.meteor_scorer().compute_score(gts, res)  # pycocoevalcap's Meteor.compute_score
    values = {f"diffvqa_bleu_{n}": bleu[n - 1] for n in (1, 2, 3, 4)}
    values.update(diffvqa_meteor=meteor, diffvqa_rouge_l=Rouge().compute_score(gts, res)[0],
                  diffvqa_cider=Cider().compute_score(gts, res)[0])
    return values


@needs_java
def test_every_metric_equals_the_library_over_all_questions_and_bleu_meteor_rouge_over_each_type():
    outcomes = _outcomes()
    scores = {(s.group, s.metric): s for s in score_outcomes(outcomes, lambda t: TEXT_METRICS, resamples=200)}
    for name, value in _library(PAIRS).items():
        assert scores[("overall", name)].value == pytest.approx(value, abs=1e-12), name
        assert scores[("overall", name)].ci_low <= value <= scores[("overall", name)].ci_high
    for group in ("difference", "abnormality", "location"):
        subset = [p for p in PAIRS if p[0] == group]
        for name, value in _library(subset).items():
            if name != "diffvqa_cider":  # CIDEr's document frequencies come from all questions (see metrics)
                assert scores[(f"subtype:{group}", name)].value == pytest.approx(value, abs=1e-12), (group, name)
    per_item = diffvqa_metrics.score_texts(*diffvqa_metrics.texts([o.item for o in outcomes],
                                                                     [o.answer for o in outcomes])).cider
    rows = [k for k, p in enumerate(PAIRS) if p[0] == "difference"]
    assert scores[("subtype:difference", "diffvqa_cider")].value == pytest.approx(float(np.mean(per_item[rows])))


@needs_java
def test_an_identical_answer_scores_the_maximum_and_bleu_of_summed_counts_is_the_corpus_bleu():
    same = [(t, ref, ref) for t, ref, _ in PAIRS]
    scores = {(s.group, s.metric): s.value for s in score_outcomes(_outcomes(same), lambda t: TEXT_METRICS,
                                                                     resamples=20)}
    assert scores[("overall", "diffvqa_bleu_1")] == pytest.approx(1.0) and scores[("overall", "diffvqa_rouge_l")] == 1.0
    stats = metric("diffvqa_bleu_4").per_sample([o.item for o in _outcomes()], [o.answer for o in _outcomes()], [])
    assert stats.shape == (len(PAIRS), diffvqa_metrics.BLEU_WIDTH)
    assert stats[:, 0].sum() == sum(len(re.findall(r"\w+", h)) for _, _, h in PAIRS if h)  # PTB words, no punctuation


def test_without_java_the_metrics_are_unavailable_with_their_reason_and_nothing_stops(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no java on it
    diffvqa_metrics.java_status.cache_clear()
    try:
        scores = score_outcomes(_outcomes(), lambda t: ("accuracy", *TEXT_METRICS), resamples=20)
        java = metric("diffvqa_meteor").summary()["settings"]["java"]
    finally:
        diffvqa_metrics.java_status.cache_clear()
    assert all(math.isnan(s.value) for s in scores if s.metric in TEXT_METRICS)
    assert not math.isnan(next(s for s in scores if s.metric == "accuracy" and s.group == "overall").value)
    assert java.startswith("unavailable: no `java` on PATH")


def test_a_failing_library_leaves_the_metrics_unavailable_with_the_reason(monkeypatch):
    def read_only(texts):
        raise PermissionError(13, "Permission denied", "pycocoevalcap/tokenizer/tmpabc")

    monkeypatch.setattr(diffvqa_metrics, "java_status", lambda: (True, 'openjdk version "17"'))
    monkeypatch.setattr(diffvqa_metrics, "tokenize", read_only)
    diffvqa_metrics.score_texts.cache_clear()
    diffvqa_metrics.tokenized.cache_clear()
    try:
        scores = score_outcomes(_outcomes(), lambda t: TEXT_METRICS, resamples=20)
        java = metric("diffvqa_bleu_1").summary()["settings"]["java"]
    finally:
        diffvqa_metrics._FAILURE.clear()
        diffvqa_metrics.score_texts.cache_clear()
        diffvqa_metrics.tokenized.cache_clear()
    assert all(math.isnan(s.value) for s in scores)
    assert java.startswith("unavailable: pycocoevalcap failed (PermissionError") and "Permission denied" in java
