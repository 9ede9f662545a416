"""The R2Gen lineage's lexical metrics equal pycocoevalcap's own corpus values; R2Gen's cleaning."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider
from pycocoevalcap.meteor.meteor import Meteor
from pycocoevalcap.rouge.rouge import Rouge

from medtemporal.errors import UnavailableError
from medtemporal.schema import Item
from medtemporal.scoring import metric
from medtemporal.scoring.clinical import LEXICAL_R2GEN, LEXICAL_RAW, lexical
from medtemporal.scoring.clinical.texts import r2gen_clean

REFS = [
    "FINDINGS: PA and lateral views of the chest. Heart size is normal. No pleural effusion or pneumothorax.",
    "Unchanged small left pleural effusion.  New right lower lobe opacity, concerning for pneumonia.",
    "1. Endotracheal tube terminates 4 cm above the carina. 2. Mild pulmonary edema has improved.",
    "Lungs are clear.",
    "Moderate cardiomegaly is stable. No focal consolidation.",
]
OUTS = [
    "PA and lateral views of the chest. The heart is normal in size. No effusion.",
    "Small left pleural effusion is unchanged. No new opacity.",
    "Endotracheal tube 4 cm above the carina. Pulmonary edema improved.",
    "",
    "Stable moderate cardiomegaly. No consolidation. No pneumothorax.",
]


def _item(k: int, reference: str) -> Item:
    return Item.create(benchmark="x", task="report", subtype="report", images=[], question=f"Write report {k}.",
                       answer_type="open", answer=reference, reference=reference, meta={"patient_id": f"p{k % 2}"})


def _corpus(name: str, answers: list[str | None]) -> float:
    m = metric(name)
    items = [_item(k, r) for k, r in enumerate(REFS)]
    stats = m.per_sample(items, answers, [None] * len(items)).reshape(len(items), -1)
    return float(m.reduce(stats.sum(axis=0), np.float64(len(items))))


@pytest.mark.parametrize("variant", ["coco", "r2gen"])
def test_bleu_rouge_cider_equal_pycocoevalcap_on_the_prepared_texts(variant: str) -> None:
    prepare = lexical.VARIANTS[variant][0]
    gts = {k: [prepare(r)] for k, r in enumerate(REFS)}
    res = {k: [prepare(o)] for k, o in enumerate(OUTS)}
    bleus, _ = Bleu(4).compute_score(gts, res, verbose=0)
    for n in range(1, 5):
        assert _corpus(f"{variant}_bleu_{n}", OUTS) == pytest.approx(bleus[n - 1], rel=1e-12)
    assert _corpus(f"{variant}_rouge_l", OUTS) == pytest.approx(Rouge().compute_score(gts, res)[0], rel=1e-12)
    assert _corpus(f"{variant}_cider", OUTS) == pytest.approx(Cider().compute_score(gts, res)[0], rel=1e-12)


def test_cider_takes_each_task_s_document_frequencies_from_that_task_alone() -> None:
    """A benchmark with a findings and an impression task: each task's CIDEr is pycocoevalcap's over its own items."""
    items = [_item(k, r).model_copy(update={"task": "findings" if k < 3 else "impression"}) for k, r in enumerate(REFS)]
    per_item = metric("coco_cider").per_sample(items, OUTS, [None] * len(items))
    for task, index in (("findings", range(3)), ("impression", range(3, 5))):
        gts = {k: [REFS[k]] for k in index}
        res = {k: [OUTS[k]] for k in index}
        assert per_item[list(index)].mean() == pytest.approx(Cider().compute_score(gts, res)[0], rel=1e-12), task
    together = metric("coco_cider").per_sample([_item(k, r) for k, r in enumerate(REFS)], OUTS, [None] * 5)
    assert not np.allclose(per_item, together)  # mixing the tasks' references would change them


@pytest.fixture(scope="module")
def reference_meteor() -> Meteor:
    """pycocoevalcap's own METEOR (a jar of its own, not the one scoring uses)."""
    return Meteor()


@pytest.mark.slow  # the METEOR jar over 200 pairs twice: about 10 s
@pytest.mark.skipif(shutil.which("java") is None, reason="METEOR's jar needs a Java runtime")
@pytest.mark.parametrize("variant", ["coco", "r2gen"])
def test_meteor_is_the_pooled_corpus_value_pycocoevalcap_prints(variant: str, reference_meteor: Meteor) -> None:
    """pycocoevalcap's printed METEOR (the jar's pooled value), not the mean of its segment scores; empty outputs,
    one-word outputs and whole groups of them as pycocoevalcap scores them; bootstrap-shaped sums too."""
    prepare = lexical.VARIANTS[variant][0]
    # an output equal to its reference: the jar pools it with no chunk (its fragmentation is 0)
    for outs in (OUTS, [REFS[0], REFS[1], *OUTS[2:]], ["No", "", ".", "effusion", "ü"], [""] * len(REFS)):
        gts = {k: [prepare(r)] for k, r in enumerate(REFS)}
        res = {k: [prepare(o)] for k, o in enumerate(outs)}
        pooled, segments = reference_meteor.compute_score(gts, res)
        assert _corpus(f"{variant}_meteor", outs) == pytest.approx(pooled, abs=1e-12)
    assert pooled == 0.0 and _corpus(f"{variant}_meteor", [None] * len(REFS)) == 0.0
    m = metric(f"{variant}_meteor")
    stats = m.per_sample([_item(k, r) for k, r in enumerate(REFS)], OUTS, [None] * len(REFS))
    batch = np.stack([stats[[0, 1]].sum(0), stats[[2, 3, 4]].sum(0), stats.sum(0)])[None]
    gts = {k: [prepare(REFS[k])] for k in (2, 3, 4)}
    res = {k: [prepare(OUTS[k])] for k in (2, 3, 4)}
    assert m.reduce(batch, np.ones((1, 3)))[0, 1] == pytest.approx(reference_meteor.compute_score(gts, res)[0], abs=1e-12)


def test_meteor_without_java_is_unavailable_in_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lexical.shutil, "which", lambda name: None)
    lexical.meteor.cache_clear()
    with pytest.raises(UnavailableError, match="Java runtime"):
        _corpus("coco_meteor", OUTS)
    lexical.meteor.cache_clear()


def test_identical_reports_score_one_and_a_missing_answer_scores_as_empty() -> None:
    assert _corpus("coco_bleu_4", REFS) == pytest.approx(1.0)
    assert _corpus("r2gen_rouge_l", REFS) == pytest.approx(1.0)
    assert _corpus("coco_bleu_1", [None] * len(REFS)) == pytest.approx(0.0, abs=1e-9)


def test_the_groups_list_every_registered_lexical_metric_once() -> None:
    assert len(set(LEXICAL_RAW + LEXICAL_R2GEN)) == 14
    assert all(metric(name).higher_is_better for name in LEXICAL_RAW + LEXICAL_R2GEN)


@pytest.mark.parametrize(("report", "cleaned"), [
    ("FINDINGS:  Heart size is normal.. No effusion.", "findings heart size is normal . no effusion ."),
    ("1. Small effusion. 2. No pneumothorax. 3. Stable lines.", "small effusion . no pneumothorax . stable lines ."),
    ("Left-sided PICC (unchanged); \"tip\" at cavo/atrial junction.",
     "left-sided picc unchanged tip at cavoatrial junction ."),
    ("Lines:\nNG tube ___ removed.", "lines ng tube  removed ."),
    ("Size <2 cm>, @ apex [sic] {x}!", "size 2 cm  apex sic x ."),
])
def test_r2gen_cleaning_on_real_report_shapes(report: str, cleaned: str) -> None:
    assert r2gen_clean(report) == cleaned
