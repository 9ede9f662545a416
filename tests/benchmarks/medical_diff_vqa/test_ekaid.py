"""Medical-Diff-VQA as EKAID scores it (issue 30 §1): each value of the ``EKAID`` variant recomputed the way
EKAID's ``evaluate_score.py`` computes it, pycocoevalcap called directly; EKAID's test set (``--split ekaid``)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from medtemporal.benchmark import load
from medtemporal.benchmarks.medical_diff_vqa import SPEC
from medtemporal.benchmarks.medical_diff_vqa import metrics as diffvqa_metrics
from medtemporal.benchmarks.medical_diff_vqa.ekaid import NAME, VARIANT
from medtemporal.benchmarks.medical_diff_vqa.release import QUESTIONS_FILE, split_label
from medtemporal.cli import main
from medtemporal.schema import Item
from medtemporal.scoring.aggregate import Outcome, score_outcomes

needs_java = pytest.mark.skipif(not diffvqa_metrics.java_status()[0],
                                reason=f"pycocoevalcap cannot run here: {diffvqa_metrics.java_status()[1]}")
ROWS = [  # (question type, question, released answer, raw model output) as VLMs write them
    ("presence", "is there edema?", "yes", "yes"), ("presence", "is there pneumothorax?", "no", "Yes."),
    ("presence", "is there atelectasis?", "yes", "yes\n"), ("view", "is this PA view?", "yes", "Yes, it is."),
    ("view", "which view is this image taken?", "PA view", "PA view"),
    ("view", "which view is this image taken?", "PA view", "pa view"),
    ("abnormality", "what abnormalities are seen in this image?", "pleural effusion, atelectasis",
     "Pleural effusion and atelectasis."),
    ("abnormality", "what abnormalities are seen in this image?", "cardiomegaly", "cardiomegaly"),
    ("location", "where in the image is the pleural effusion located?", "left lung", "the left lower lung"),
    ("location", "where in the image is the atelectasis located?", "right lung, left lung", "bilateral"),
    ("level", "what level is the pleural effusion?", "small", "small"),
    ("level", "what level is the edema?", "moderate", "mild"),
    ("type", "what type is the opacity?", "patchy", "patchy opacities"),
    ("difference", "what has changed compared to the reference image?",
     "the main image has an additional finding of pneumothorax than the reference image. ",
     "The main image has an additional finding of pneumothorax than the reference image."),
    ("difference", "what has changed compared to the reference image?", "nothing has changed.", "nothing has changed."),
    ("difference", "what has changed in the left lung area?",
     "the level of pleural effusion has changed from small to moderate. ", "the effusion is larger"),
]


def _task(qtype: str, answer: str) -> str:
    return "difference" if qtype == "difference" else "closed" if answer in ("yes", "no") else "open"


def _outcomes() -> list[Outcome]:
    out = []
    for k, (qtype, question, ref, raw) in enumerate(ROWS):
        task = _task(qtype, ref)
        item = Item.create(benchmark="medical-diff-vqa", task=task, subtype=qtype, images=[], question=question,
                           answer_type="yesno" if task == "closed" else "open",
                           answer=ref.capitalize() if task == "closed" else ref, reference=ref,
                           meta={"patient_id": f"p{k % 4}", "question_type": qtype})
        out.append(Outcome(item, raw, "answered", raw))
    return out


def _ekaid_acc(rows) -> tuple[float, float, float]:
    """EKAID ``evaluate_score.acc`` (L216-252), on (question, released answer, output) lists by position."""
    total_correct = open_correct = closed_correct = total = opend = closed = 0
    for _, question, gt_ans, pr_ans in rows:
        if "what has changed" in question:
            continue
        pr_ans = pr_ans.strip()  # the decoder's captions carry no surrounding space
        total += 1
        if gt_ans == "yes" or gt_ans == "no":
            closed += 1
        else:
            opend += 1
        if gt_ans == pr_ans:
            total_correct += 1
            if gt_ans == "yes" or gt_ans == "no":
                closed_correct += 1
            else:
                open_correct += 1
    return total_correct / total, open_correct / opend, closed_correct / closed


def _coco(rows) -> dict[str, float]:
    """EKAID's ``my_COCOEvalCap.evaluate`` on the rows given: PTB tokens, Bleu(4), Meteor(), Rouge(), Cider()."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    tokenizer = PTBTokenizer()
    gts = tokenizer.tokenize({i: [{"caption": r[2]}] for i, r in enumerate(rows)})
    res = tokenizer.tokenize({i: [{"caption": r[3]}] for i, r in enumerate(rows)})
    bleu, _ = Bleu(4).compute_score(gts, res, verbose=0)
    values = {f"diffvqa_bleu_{n}": bleu[n - 1] for n in (1, 2, 3, 4)}
    values.update(diffvqa_meteor=diffvqa_metrics.meteor_scorer().compute_score(gts, res)[0],
                  diffvqa_rouge_l=Rouge().compute_score(gts, res)[0], diffvqa_cider=Cider().compute_score(gts, res)[0])
    return values


def _variant_scores() -> dict[tuple[str, str], float]:
    scores = score_outcomes(_outcomes(), lambda task: VARIANT.metrics[task], resamples=50)
    return {(s.group, s.metric): s.value for s in scores}


@pytest.mark.slow  # scores through the Java tools: about 18 s
def test_accuracy_is_ekaids_acc_on_the_raw_outputs():
    total, open_, closed = _ekaid_acc(ROWS)
    scores = _variant_scores()
    assert scores[("overall", "diffvqa_ekaid_accuracy")] == pytest.approx(total)
    assert scores[("task:open", "diffvqa_ekaid_accuracy")] == pytest.approx(open_)
    assert scores[("task:closed", "diffvqa_ekaid_accuracy")] == pytest.approx(closed)
    assert (total, closed) == (5 / 13, 2 / 4)  # "Yes." and "Yes, it is." are wrong as EKAID compares; "yes\n" right
    assert ("task:difference", "diffvqa_ekaid_accuracy") not in scores


@needs_java
def test_text_metrics_are_ekaids_over_all_questions_and_on_each_types_questions_alone():
    scores = _variant_scores()
    for name, value in _coco(ROWS).items():
        assert scores[("overall", name)] == pytest.approx(value, abs=1e-12), name
    differs = 0
    for qtype in ("presence", "view", "abnormality", "location", "level", "type", "difference"):
        library = _coco([r for r in ROWS if r[0] == qtype])
        for name, value in library.items():
            ours = "diffvqa_cider_by_type" if name == "diffvqa_cider" else name
            assert scores[(f"subtype:{qtype}", ours)] == pytest.approx(value, abs=1e-12), (qtype, name)
        differs += not math.isclose(scores[(f"subtype:{qtype}", "diffvqa_cider")], library["diffvqa_cider"])
    assert differs >= 5  # the frequencies of all questions give another CIDEr than the type's own


def test_the_family_scores_the_variant_beside_ours():
    assert SPEC.variants[NAME] is VARIANT
    assert set(VARIANT.extractors.values()) == {"raw_text"}


def test_split_ekaid_builds_the_last_tenth_of_rows_in_file_order(diffvqa, cxr_phantoms, tmp_path):
    rows = pd.read_csv(diffvqa / QUESTIONS_FILE, dtype=str, keep_default_na=False)
    start = math.ceil(0.9 * len(rows))  # dataset_preparation.py L204-208: indexes[int(np.ceil(0.9 * total)):]
    out = tmp_path / "ekaid"
    assert main(["build", "medical-diff-vqa", "--diff-vqa", str(diffvqa), "--mimic-cxr-jpg",
                 str(cxr_phantoms.mimic_cxr_jpg), "--split", "ekaid", "--out", str(out), "--no-audit"]) == 0
    bench = load(out)
    assert [it.meta["row"] for it in bench.items] == list(range(start, len(rows)))
    assert {it.meta["split"] for it in bench.items} == set(rows["split"].iloc[start:])
    assert bench.manifest.config["split"] == "ekaid"
    assert split_label(bench.manifest.config).startswith("EKAID's test set (the last 10%")
    release = tmp_path / "release"
    assert main(["build", "medical-diff-vqa", "--diff-vqa", str(diffvqa), "--mimic-cxr-jpg",
                 str(cxr_phantoms.mimic_cxr_jpg), "--out", str(release), "--no-audit"]) == 0
    assert [it.meta["row"] for it in load(release).items] == [k for k, s in enumerate(rows["split"]) if s == "test"]
    assert split_label(load(release).manifest.config).startswith("the release's test split")
