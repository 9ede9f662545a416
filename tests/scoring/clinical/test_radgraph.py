"""RadGraph F1 through RadEval's vendored RadGraph, with a tiny stand-in RadGraph-XL folder (nothing downloaded)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("radeval", reason="RadGraph F1 needs `pip install --no-deps radeval==2.2.1` (make install does)")

from helpers.tiny_report_models import tiny_radgraph  # noqa: E402
from medtemporal.errors import UnavailableError  # noqa: E402
from medtemporal.schema import Item  # noqa: E402
from medtemporal.scoring import metric  # noqa: E402
from medtemporal.scoring.clinical import radgraph  # noqa: E402

REFS = ["the heart is normal size . no pleural effusion .", "moderate cardiomegaly . small left pleural effusion .",
        "lungs are clear .", "new right lower lobe opacity ."]
OUTS = ["the heart is normal .", "moderate cardiomegaly . small left pleural effusion .", None, "lungs are clear ."]


def _clear() -> None:
    radgraph._scorer.cache_clear()
    radgraph.radgraph_rewards.cache_clear()


@pytest.fixture(scope="module")
def radgraph_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_radgraph(tmp_path_factory.mktemp("radgraph"))


@pytest.fixture
def stand_in(radgraph_folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEDTEMPORAL_RADGRAPH_XL", str(radgraph_folder))
    _clear()
    yield radgraph_folder
    _clear()


def _items() -> list[Item]:
    return [Item.create(benchmark="x", task="report", subtype="report", images=[], question=f"Report {k}.",
                        answer_type="open", answer=r, reference=r, meta={"patient_id": f"p{k}"})
            for k, r in enumerate(REFS)]


def test_radgraph_levels_are_the_libraries_rewards_per_report(stand_in: Path) -> None:
    core = radgraph.vendored_radgraph()
    annotate = radgraph.scorer().radgraph
    expected = []
    for ref, out in zip(REFS, OUTS):
        if not out:
            expected.append((0.0, 0.0, 0.0))
            continue
        hyp_ann, ref_ann = annotate([out])["0"], annotate([ref])["0"]
        expected.append(core.compute_reward(hyp_ann, ref_ann, "all"))
    for column, level in enumerate(radgraph.LEVELS):
        got = metric(f"radgraph_f1_{level}").per_sample(_items(), OUTS, [None] * len(REFS))
        assert got == pytest.approx(np.array(expected)[:, column])
    partial = metric("radgraph_f1_partial").per_sample(_items(), OUTS, [None] * len(REFS))
    assert partial[1] == pytest.approx(1.0) and partial[2] == 0.0  # the same report; an empty output
    assert 0.0 < partial[0] < 1.0


def test_an_archive_is_unpacked_once_beside_the_cached_file(radgraph_folder: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import tarfile

    archive = tmp_path / "radgraph-xl.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for path in radgraph_folder.iterdir():
            tar.add(path, arcname=path.name)
    monkeypatch.setenv("MEDTEMPORAL_RADGRAPH_XL", str(archive))
    holder = radgraph.model_dir(radgraph.WEIGHTS["radgraph_xl"], "radgraph-xl")
    assert holder == tmp_path / "radgraph-xl.tar.gz.unpacked"
    assert (holder / "radgraph-xl" / "weights.th").is_file()
    assert radgraph.model_dir(radgraph.WEIGHTS["radgraph_xl"], "radgraph-xl") == holder


def test_without_weights_offline_radgraph_is_unavailable_in_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEDTEMPORAL_RADGRAPH_XL", raising=False)
    _clear()
    with pytest.raises(UnavailableError, match=r"radgraph-xl.tar.gz of StanfordAIMI/RRG_scorers\) is not in the "
                                               r"Hugging Face cache and HF_HUB_OFFLINE=1"):
        metric("radgraph_f1_partial").per_sample(_items(), OUTS, [None] * len(REFS))


@pytest.mark.parametrize("kind", ["empty folder", "not an archive", "archive without a model"])
def test_a_copy_that_is_not_radgraph_is_named_in_one_sentence_and_leaves_nothing(kind: str, tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import tarfile

    target = tmp_path / "copy"
    if kind == "empty folder":
        target.mkdir()
    elif kind == "not an archive":
        target.write_text("<html>not found</html>")
    else:
        (tmp_path / "readme.txt").write_text("x")
        with tarfile.open(target, "w:gz") as tar:
            tar.add(tmp_path / "readme.txt", arcname="readme.txt")
    monkeypatch.setenv("MEDTEMPORAL_RADGRAPH_XL", str(target))
    _clear()
    with pytest.raises(UnavailableError, match=r"^MEDTEMPORAL_RADGRAPH_XL names .*; point it at radgraph-xl.tar.gz "
                                               r"or the folder it unpacks to\.$"):
        metric("radgraph_f1_partial").per_sample(_items(), OUTS, [None] * len(REFS))
    assert not list(tmp_path.glob(".unpacking-*")) and not list(tmp_path.glob("*.unpacked"))


SHORT = ["", ".", "No", "é", "the heart is normal size . " * 740]


@pytest.mark.slow  # RadGraph's 300 words of the 20,000-character output
def test_short_and_long_outputs_get_the_libraries_numbers(stand_in: Path) -> None:
    core = radgraph.vendored_radgraph()
    annotate = radgraph.scorer().radgraph
    got = metric("radgraph_f1_partial").per_sample([_items()[0]] * len(SHORT), SHORT, [None] * len(SHORT))
    assert got[0] == 0.0 and np.isfinite(got).all()
    ref_ann = annotate([REFS[0]])["0"]
    for k, out in enumerate(SHORT[1:4], start=1):
        assert got[k] == pytest.approx(core.compute_reward(annotate([out])["0"], ref_ann, "all")[1]), out
    long = " ".join(SHORT[4].split()[:radgraph.MAX_WORDS])  # the words RadGraph reads of it
    assert got[4] == pytest.approx(core.compute_reward(annotate([long])["0"], ref_ann, "all")[1])
