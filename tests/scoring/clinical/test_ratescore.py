"""RaTEScore through the ratescore package, with tiny stand-in NER and encoder folders (nothing downloaded)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("RaTEScore", reason="RaTEScore needs ratescore and medspacy (make install has them)")

from helpers.tiny_report_models import tiny_ratescore  # noqa: E402
from medtemporal.errors import UnavailableError  # noqa: E402
from medtemporal.schema import Item  # noqa: E402
from medtemporal.scoring import metric  # noqa: E402
from medtemporal.scoring.clinical import ratescore  # noqa: E402

REFS = ["the heart is normal size . no pleural effusion .", "moderate cardiomegaly . small left pleural effusion .",
        "lungs are clear .", "new right lower lobe opacity ."]
OUTS = ["the heart is normal .", "moderate cardiomegaly . small left pleural effusion .", None,
        "stable left lung opacity ."]


def _clear() -> None:
    ratescore._scorer.cache_clear()
    ratescore.ratescores.cache_clear()


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    ner, encoder = tiny_ratescore(tmp_path)
    monkeypatch.setenv("MEDTEMPORAL_RATESCORE_NER", str(ner))
    monkeypatch.setenv("MEDTEMPORAL_RATESCORE_ENCODER", str(encoder))
    _clear()
    yield ner, encoder
    _clear()


def _items() -> list[Item]:
    return [Item.create(benchmark="x", task="report", subtype="report", images=[], question=f"Report {k}.",
                        answer_type="open", answer=r, reference=r, meta={"patient_id": f"p{k}"})
            for k, r in enumerate(REFS)]


def test_ratescore_is_the_packages_score_of_each_pair(stand_in: tuple[Path, Path]) -> None:
    import RaTEScore

    ner, encoder = stand_in
    direct = RaTEScore.RaTEScore(bert_model=str(ner), eval_model=str(encoder), use_gpu=False)
    got = metric("ratescore").per_sample(_items(), OUTS, [None] * len(REFS))
    for k, (ref, out) in enumerate(zip(REFS, OUTS)):
        if out is None:
            assert got[k] == ratescore.EMPTY  # an empty output scores 0, never the package's no-entity 0.5
        else:
            assert got[k] == pytest.approx(direct.compute_score([out], [ref])[0])
    assert got[1] == pytest.approx(1.0, abs=1e-5)  # the same report (the stand-in finds entities in it)
    assert 0.0 < got[0] < 1.0


def test_without_weights_offline_ratescore_is_unavailable_in_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEDTEMPORAL_RATESCORE_NER", raising=False)
    _clear()
    with pytest.raises(UnavailableError, match="RaTE-NER-Deberta' is not in the Hugging Face cache and "
                                               "HF_HUB_OFFLINE=1 forbids downloading it"):
        metric("ratescore").per_sample(_items(), OUTS, [None] * len(REFS))


@pytest.mark.parametrize("out", ["No", ".", "ok", "é", "", "the heart is normal size . no pleural effusion . " * 400])
def test_short_and_long_outputs_score_a_number_where_the_package_crashes(stand_in: tuple[Path, Path],
                                                                          out: str) -> None:
    """medspacy drops sentences under 3 characters, and the package then raises IndexError: such a text has no
    entity (0.5); an empty one scores 0; a 20,000-character one is the package's own score."""
    import RaTEScore

    ner, encoder = stand_in
    direct = RaTEScore.RaTEScore(bert_model=str(ner), eval_model=str(encoder), use_gpu=False)
    got = metric("ratescore").per_sample(_items()[:1], [out], [None])
    if not out.strip():
        assert got.tolist() == [ratescore.EMPTY]
    elif len(out) < 3:
        with pytest.raises(IndexError):
            direct.compute_score([out], [REFS[0]])
        assert got.tolist() == [ratescore.NO_ENTITY]
    else:
        assert got[0] == pytest.approx(direct.compute_score([out], [REFS[0]])[0])
