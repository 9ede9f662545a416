"""Libra's BERTScore and 1/RadCliQ-v1 with tiny stand-in encoders, RadGraph and CheXbert (nothing downloaded)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bert_score import BERTScorer

from helpers.tiny_report_models import tiny_bert_folder, tiny_chexbert
from medtemporal.schema import Item
from medtemporal.scoring import metric
from medtemporal.scoring.clinical import bertscores, chexbert, radcliq
from medtemporal.scoring.clinical.temporal import libra_clean as clean_text

REFS = ["the heart is normal size . no pleural effusion .", "moderate cardiomegaly . small left pleural effusion .",
        "lungs are clear .", "new right lower lobe opacity ."]
OUTS = ["the heart is normal .", "moderate cardiomegaly . small left pleural effusion .", None, "lungs are clear ."]


def _items() -> list[Item]:
    return [Item.create(benchmark="x", task="report", subtype="report", images=[], question=f"Report {k}.",
                        answer_type="open", answer=r, reference=r, meta={"patient_id": f"p{k}"})
            for k, r in enumerate(REFS)]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_bert_folder(tmp_path_factory.mktemp("encoder"), with_weights=True, layers=6)


def test_libras_bertscore_is_bert_scores_layer_5_f1(encoder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDTEMPORAL_BERTSCORE_DISTILBERT", str(encoder))
    bertscores._distilbert.cache_clear()
    outs = ["The heart is NORMAL -- size.", *OUTS[1:]]
    got = metric("bertscore_f1_distilbert").per_sample(_items(), outs, [None] * len(REFS))
    libra = [clean_text((o or "").lower()) for o in outs]  # Libra's radiology_report.py: lowercased, clean_text
    keep = [0, 1, 3]  # bert-score 0.3.13 cannot encode an empty text under transformers 5; it documents 0 for one
    _, _, f1 = BERTScorer(model_type=str(encoder), num_layers=5).score([libra[k] for k in keep],
                                                                        [clean_text(REFS[k].lower()) for k in keep])
    assert got[keep] == pytest.approx(f1.numpy(), abs=1e-6)
    assert got[2] == 0.0 and got[1] == pytest.approx(1.0, abs=1e-5)  # bert-score's 0 for an empty text
    bertscores._distilbert.cache_clear()


@pytest.mark.slow  # three stand-in models (RadGraph, CheXbert, an encoder)
def test_radcliq_v1_is_the_published_linear_model_of_its_four_inputs(encoder: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("radeval", reason="RadCliQ-v1 needs `pip install --no-deps radeval==2.2.1`")
    from helpers.tiny_report_models import tiny_radgraph
    from radeval.metrics.bleu.bleu import Bleu

    from medtemporal.scoring.clinical import radgraph

    checkpoint, backbone = tiny_chexbert(tmp_path / "chexbert")
    monkeypatch.setenv("MEDTEMPORAL_CHEXBERT", str(checkpoint))
    monkeypatch.setenv("MEDTEMPORAL_CHEXBERT_BACKBONE", str(backbone))
    monkeypatch.setenv("MEDTEMPORAL_RADGRAPH", str(tiny_radgraph(tmp_path / "radgraph", model_type="radgraph")))
    monkeypatch.setenv("MEDTEMPORAL_BERTSCORE_DISTILROBERTA", str(encoder))
    chexbert._labeller.cache_clear()
    chexbert.chexbert_outputs.cache_clear()
    radgraph._scorer.cache_clear()
    outs = [o or "" for o in OUTS]

    # RadCliQ-v1's SembScore input is the cosine of CheXbert's embeddings of every text, "" included (CXR-Report-Metric)
    semb = metric("semb_score").per_sample(_items(), [o or "" for o in OUTS], [None] * len(REFS))
    _, _, ref_emb, out_emb = chexbert.chexbert_outputs(tuple(REFS), tuple(o or "" for o in OUTS))
    semb[2] = ref_emb[2] @ out_emb[2] / np.linalg.norm(ref_emb[2]) / np.linalg.norm(out_emb[2])
    combined = radcliq.radgraph_combined(REFS, outs)
    baseline = str(Path(bertscores.require("bert_score", "x").__file__).parent
                   / "rescale_baseline/en/distilroberta-base.tsv")
    _, bleu2 = Bleu(n=2).compute_score(REFS, outs)
    for name, idf in (("inv_radcliq_v1_idf", True), ("inv_radcliq_v1", False)):
        # ReXrank / CXR-Report-Metric: no IDF; RadEval: IDF over all the references (empty pairs included)
        scorer = BERTScorer(model_type=str(encoder), num_layers=5, idf=idf, idf_sents=list(REFS) if idf else None,
                            rescale_with_baseline=True, lang="en", baseline_path=baseline)
        keep = [0, 1, 3]  # bert-score's value of an empty text: raw 0, rescaled by its baseline (see above)
        bert = np.full(len(REFS), -float(scorer.baseline_vals[2]) / (1 - float(scorer.baseline_vals[2])))
        bert[keep] = scorer.score([outs[k] for k in keep], [REFS[k] for k in keep])[2].numpy()
        features = np.column_stack([combined, bert, semb, bleu2])
        expected = ((features - radcliq.SCALER_MEAN) / radcliq.SCALER_SCALE) @ radcliq.COEFFICIENTS + radcliq.INTERCEPT
        m = metric(name)
        raw = m.per_sample(_items(), OUTS, [None] * len(REFS))
        assert raw == pytest.approx(expected, abs=1e-5), name
    assert bert[2] < -1  # bert-score's rescaled value of an empty output (−5.55 with distilroberta's baseline)
    assert raw[2] > raw[[0, 1, 3]].max()  # so the empty output is worse than every written one
    assert combined[1] == pytest.approx(1.0)  # the same report
    assert float(m.reduce(raw.reshape(-1, 1).sum(axis=0), np.float64(len(REFS)))) == pytest.approx(1 / raw.mean())
    assert m.higher_is_better
    # the encoder is loaded once; each call weighs by its own references' IDF, as a scorer made for them does
    first = [0, 1]
    again = bertscores.radcliq_bertscore([REFS[k] for k in first], [outs[k] for k in first], idf=True)
    alone = BERTScorer(model_type=str(encoder), num_layers=5, idf=True, idf_sents=[REFS[k] for k in first],
                       rescale_with_baseline=True, lang="en", baseline_path=scorer.baseline_path)
    assert again == pytest.approx(alone.score([outs[k] for k in first], [REFS[k] for k in first])[2].numpy(), abs=1e-5)
    assert bertscores._radcliq_scorer.cache_info().currsize == 2  # one per IDF setting
    chexbert._labeller.cache_clear()
    chexbert.chexbert_outputs.cache_clear()
    radgraph._scorer.cache_clear()
