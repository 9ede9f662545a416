"""The text metrics equal pycocoevalcap called directly on the same pairs, as EKAID's evaluation.py calls it."""

from __future__ import annotations

import contextlib
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


CLOSED = ["yes", "Yes", " no ", "NO", "", "no", "YES"]


@needs_java
def test_closed_answers_are_their_own_ptb_tokens_and_need_no_paraphrase_table():
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    library = PTBTokenizer().tokenize({i: [{"caption": t}] for i, t in enumerate(CLOSED)})
    assert diffvqa_metrics.tokenize(CLOSED) == [library[i][0] for i in range(len(CLOSED))]
    mixed = ["The answer is A.", *CLOSED, "Left side."]  # with other texts, all of them go to the tokenizer in order
    library = PTBTokenizer().tokenize({i: [{"caption": t}] for i, t in enumerate(mixed)})
    assert diffvqa_metrics.tokenize(mixed) == [library[i][0] for i in range(len(mixed))]
    words = sorted(diffvqa_metrics.CLOSED_TOKENS)
    full, light = diffvqa_metrics.meteor_scorer(), diffvqa_metrics.light_meteor()
    for ref in words:
        for hyp in words:
            with full.lock, light.lock:
                assert light._stat(hyp, [ref]) == full._stat(hyp, [ref]), (ref, hyp)
    rows = np.array([[float(v) for v in full._stat(h, [r]).split()] for r in words for h in words])
    sums = rows[np.random.default_rng(0).integers(0, len(rows), size=(300, 40))].sum(axis=1)
    sums[7] = rows[4]  # one answer's statistics alone
    with monkeypatched_evaluator(full):
        by_full = diffvqa_metrics.reduce_meteor(sums, np.ones(len(sums)))
    with monkeypatched_evaluator(light):
        by_light = diffvqa_metrics.reduce_meteor(sums, np.ones(len(sums)))
    assert np.array_equal(by_full, by_light)  # summing statistics reads no paraphrase table


@needs_java
def test_scoring_closed_questions_starts_neither_the_tokenizer_nor_the_full_meteor(monkeypatch):
    from pycocoevalcap.tokenizer import ptbtokenizer

    def refused(*args, **kwargs):
        raise AssertionError("started for closed answers")

    monkeypatch.setattr(ptbtokenizer.PTBTokenizer, "tokenize", refused)
    monkeypatch.setattr(diffvqa_metrics, "_METEOR", None)
    monkeypatch.setattr(diffvqa_metrics, "meteor_scorer", refused)
    diffvqa_metrics.score_texts.cache_clear()
    closed = [(q, ref, hyp) for q, ref, hyp in PAIRS if ref in ("yes", "no")] + [("presence", "no", "No")]
    try:
        scores = score_outcomes(_outcomes(closed), lambda t: ("accuracy", *TEXT_METRICS), resamples=50)
    finally:
        diffvqa_metrics.score_texts.cache_clear()
    meteor = next(s for s in scores if s.group == "overall" and s.metric == "diffvqa_meteor")
    assert not math.isnan(meteor.value) and meteor.ci_low <= meteor.value <= meteor.ci_high


def test_bleu_of_every_bootstrap_replicate_in_one_call_equals_the_library_one_replicate_at_a_time():
    from pycocoevalcap.bleu.bleu_scorer import BleuScorer

    rng = np.random.default_rng(1)
    sums = rng.integers(0, 30, size=(5, 80, diffvqa_metrics.BLEU_WIDTH)).astype(float)
    sums[..., 2:6] = np.maximum(sums[..., 2:6], sums[..., 6:10])  # no more matches than guesses
    sums[1] /= 3.0
    sums[2, 5] = np.nan  # a replicate where Java failed stays NaN
    for n in (1, 2, 3, 4):
        batched = diffvqa_metrics.reduce_bleu(n)(sums, np.ones(sums.shape[:-1]))
        for index in np.ndindex(sums.shape[:-1]):
            row = sums[index]
            if np.isnan(row).any():
                assert np.isnan(batched[index])
                continue
            scorer = BleuScorer(n=4)
            scorer.crefs = [([row[1]], {})]
            scorer.ctest = [{"testlen": row[0], "reflen": [row[1]], "guess": list(row[2:6]),
                             "correct": list(row[6:10])}]
            assert batched[index] == scorer.compute_score(option="closest", verbose=0)[0][n - 1]


@contextlib.contextmanager
def monkeypatched_evaluator(process):
    """`reduce_meteor` with ``process`` as its Meteor."""
    saved = diffvqa_metrics.meteor_evaluator
    diffvqa_metrics.meteor_evaluator = lambda: process
    try:
        yield
    finally:
        diffvqa_metrics.meteor_evaluator = saved
