"""Hugging Face models fetched the way ``transformers`` fetches them, and the offline switch.

`model_folder` turns a model name (``roberta-large``,
``StanfordAIMI/XrayCLIP__vit-b-16__laion2b-s34b-b88k``) or a local folder into
a local folder. A name is looked up in the Hugging Face hub cache
(``$HF_HUB_CACHE``; by default ``$HF_HOME/hub``, ``~/.cache/huggingface/hub``)
and, on first use, downloaded there with ``huggingface_hub.snapshot_download``:
the configuration, tokenizer and processor files and the ``safetensors``
weights (the PyTorch ``.bin`` weights only for a model without
``safetensors``), the files ``from_pretrained`` reads, so a later
``from_pretrained(name)`` finds them. A cached model is used without
contacting the hub. `model_file` does the same for one file of a repo (a ``.pth``
checkpoint beside others that a metric does not need).

`offline_variable` names the set switch when ``HF_HUB_OFFLINE`` or
``TRANSFORMERS_OFFLINE`` is ``1`` (``true``, ``yes``, ``on``): then nothing is
downloaded (the nltk data of the text metrics neither) and what is not on disk
fails with one sentence naming what fixes it (`UnavailableError`).

>>> offline_variable() in (None, "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
True
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from medtemporal.errors import UnavailableError, require

MODEL_CONFIG = "config.json"
"""A Hugging Face model folder's configuration file (not a run folder's ``config.json``)."""

OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
"""Environment variables that forbid downloads (Hugging Face's own switches)."""
MODEL_FILES = ("*.json", "*.txt", "*.model", "*.tiktoken", "*.safetensors")
"""Configuration, tokenizer and processor files and ``safetensors`` weights; no TensorFlow, Flax, ONNX or
Rust copies of the weights."""
BIN_WEIGHTS = ("pytorch_model*.bin",)
"""PyTorch weights, fetched only for a model that has no ``safetensors``."""

_KNOWN: dict[tuple[str | None, ...], Path | str] = {}
"""What each (name, switch, cache) resolved to in this process: a folder, or the sentence it failed with."""


def offline_variable() -> str | None:
    """The variable that forbids downloads (read now, not at import), or None when downloads are allowed."""
    return next((v for v in OFFLINE_VARIABLES if os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on")),
                None)


def has_weights(folder: Path) -> bool:
    """Whether ``folder`` holds ``config.json`` and ``safetensors`` or PyTorch ``.bin`` weights."""
    return (folder / MODEL_CONFIG).is_file() and (any(folder.glob("*.safetensors")) or any(folder.glob("*.bin")))


def revision(folder: Path) -> str | None:
    """The commit of a hub-cache snapshot folder (``…/snapshots/<commit>``), else None."""
    return folder.name if folder.parent.name == "snapshots" else None


def _looks_like_path(name: str) -> bool:
    """A name no hub model can have: absolute, ``./``, ``~``, or more than one ``/``."""
    return name.startswith(("/", ".", "~")) or "\\" in name or name.count("/") > 1


def model_folder(name: str | Path, *, what: str, fix: str) -> Path:
    """The local folder of model ``name``, downloaded into the hub cache on first use.

    Args:
        name: A local model folder, or a Hugging Face model name.
        what: What the model is for, e.g. ``"BERTScore encoder"`` (in messages).
        fix: The clause that tells a user what else to do, e.g. ``"set MEDTEMPORAL_BERTSCORE_MODEL=/path/to/model"``.

    Raises:
        UnavailableError: in one sentence: a folder without config or weights, an unknown or gated name,
            no connection, or a name not cached while downloads are switched off.
    """
    text = str(name)
    folder = Path(text).expanduser()
    if folder.is_dir():
        if not has_weights(folder):
            raise UnavailableError(f"The {what} folder {folder} lacks config.json or weights; {fix}.")
        return folder
    if _looks_like_path(text):
        raise UnavailableError(f"The {what} folder {folder} does not exist; {fix}.")
    switch = offline_variable()
    key = (text, switch, os.environ.get("HF_HOME"), os.environ.get("HF_HUB_CACHE"))
    if key not in _KNOWN:
        try:
            _KNOWN[key] = _fetch(text, switch, what, fix)
        except UnavailableError as exc:
            _KNOWN[key] = str(exc)
    known = _KNOWN[key]
    if isinstance(known, str):
        raise UnavailableError(known)
    return known


def _snapshot(repo: str, local: bool) -> Path:
    """``snapshot_download`` of the files `from_pretrained` reads (`MODEL_FILES`, else `BIN_WEIGHTS` too)."""
    hub = require("huggingface_hub", "hf")
    folder = Path(hub.snapshot_download(repo, allow_patterns=list(MODEL_FILES), local_files_only=local))
    if not has_weights(folder):
        folder = Path(hub.snapshot_download(repo, allow_patterns=list(BIN_WEIGHTS), local_files_only=local))
    return folder


def _fetch(repo: str, switch: str | None, what: str, fix: str) -> Path:
    """The cached snapshot of ``repo``, else (downloads allowed) a fresh download of it."""
    errors = require("huggingface_hub.errors", "hf")
    try:
        folder = _snapshot(repo, local=True)
        if has_weights(folder):
            return folder
    except errors.LocalEntryNotFoundError:
        pass
    except errors.HFValidationError:
        raise UnavailableError(f"The {what} {repo!r} is neither a local folder nor a Hugging Face model name; {fix}.") from None
    if switch is not None:
        raise UnavailableError(f"The {what} {repo!r} is not in the Hugging Face cache and {switch}=1 forbids "
                               f"downloading it; run once online, or {fix}.")
    _ask_hub(repo, what, fix)
    print(f"medtemporal: downloading the {what} {repo} into the Hugging Face cache (first use; "
          f"set HF_HUB_OFFLINE=1 to forbid downloads)", file=sys.stderr)
    try:
        folder = _snapshot(repo, local=False)
    except errors.GatedRepoError:
        raise UnavailableError(f"The {what} {repo!r} is gated on the Hugging Face hub; accept its terms on its page and "
                               f"log in with `hf auth login`, or {fix}.") from None
    except (errors.RepositoryNotFoundError, errors.RevisionNotFoundError):
        raise UnavailableError(f"The {what} {repo!r} is neither a local folder nor a model on the Hugging Face hub; "
                               f"{fix}.") from None
    except OSError as exc:  # no connection (LocalEntryNotFoundError), HTTP errors, a full disk
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UnavailableError(f"The {what} {repo!r} could not be downloaded from the Hugging Face hub "
                               f"({first.removeprefix('Got: ').rstrip('.')}); check the connection and run again, "
                               f"or {fix}.") from None
    if not has_weights(folder):
        raise UnavailableError(f"The {what} {repo!r} on the Hugging Face hub has no config.json or PyTorch weights "
                               f"that transformers can load; {fix}.")
    return folder


def loadable(name: str, *, what: str, fix: str, revision: str | None = None) -> str:
    """What a loader (``from_pretrained``, vLLM) should be given for model ``name``: ``name`` itself, or the folder
    of its cached copy; a Hub model that cannot be had fails here, once and at once, in one sentence.

    A local folder, or anything that is not a Hub name, is returned as it is (the loader names what is wrong with
    it). For a Hub name, the hub is asked once whether the model exists and may be read (``auth_check``, no
    retries): gated, missing and unreachable each get their own sentence, instead of the loader's retries of
    every file (minutes of "Retrying in 8s") ending in a message about something else. With downloads switched
    off (`offline_variable`), or the hub unreachable, a cached copy is used from its folder, so the loader
    never tries the network.

    Raises:
        UnavailableError: the model is gated or missing on the hub, the hub cannot be reached and the model is
            not cached, or downloads are off and it is not cached.
    """
    if Path(name).expanduser().is_dir() or _looks_like_path(name) or name.count("/") != 1:
        return name
    hub = require("huggingface_hub", "hf")
    errors = require("huggingface_hub.errors", "hf")
    switch = offline_variable()
    if switch is None:
        try:
            _ask_hub(name, what, fix)
            return name
        except _Unreachable:
            cached = _cached(hub, errors, name, revision)
            if cached is not None:
                return cached
            raise
    cached = _cached(hub, errors, name, revision)
    if cached is None:
        raise UnavailableError(f"The {what} {name!r} is not in the Hugging Face cache and {switch}=1 forbids "
                               f"downloading it; run once online, or {fix}.")
    return cached


class _Unreachable(UnavailableError):
    """The Hugging Face hub cannot be reached (no connection) and the model is not cached."""


def _ask_hub(name: str, what: str, fix: str) -> None:
    """Ask the hub once (``auth_check``, no retries) whether model ``name`` exists and may be read, before anything
    says it is downloading: one sentence for gated, missing and unreachable, instead of minutes of retries.

    Raises:
        UnavailableError: gated, missing, or not a model name; `_Unreachable` when the hub cannot be reached.
    """
    hub = require("huggingface_hub", "hf")
    errors = require("huggingface_hub.errors", "hf")
    try:
        hub.auth_check(name)
    except errors.GatedRepoError:
        raise UnavailableError(f"The {what} {name!r} is gated on the Hugging Face hub; accept its terms on its page "
                               f"and log in with `hf auth login`, or {fix}.") from None
    except errors.RepositoryNotFoundError:
        raise UnavailableError(f"The {what} {name!r} is not a model on the Hugging Face hub (or it is private: log "
                               f"in with `hf auth login`); check the name, or {fix}.") from None
    except errors.HFValidationError:
        raise UnavailableError(f"The {what} {name!r} is neither a local folder nor a Hugging Face model name; "
                               f"{fix}.") from None
    except Exception as exc:  # noqa: BLE001 (no connection: the HTTP client's own errors, not OSError)
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0].rstrip(".")
        raise _Unreachable(f"The {what} {name!r} cannot be fetched: the Hugging Face hub cannot be reached "
                           f"({reason}) and the model is not in the Hugging Face cache; connect and run again "
                           f"(or set HF_HUB_OFFLINE=1 to stop trying), or {fix}.") from None


def _cached(hub: object, errors: object, name: str, revision: str | None) -> str | None:
    """The folder of the cached copy of Hub model ``name`` (its config at least), else None."""
    try:
        folder = Path(hub.snapshot_download(name, revision=revision, local_files_only=True))  # type: ignore[attr-defined]
    except (errors.LocalEntryNotFoundError, errors.HFValidationError, OSError):  # type: ignore[attr-defined]
        return None
    return str(folder) if (folder / "config.json").is_file() else None


def model_file(repo: str, filename: str, *, what: str, fix: str) -> Path:
    """One file of Hugging Face repo ``repo`` (e.g. ``chexbert.pth`` of ``StanfordAIMI/RRG_scorers``) in the hub
    cache, downloaded there on first use with ``huggingface_hub.hf_hub_download``; offline, only a cached copy.

    Raises:
        UnavailableError: in one sentence, as `model_folder`.
    """
    hub = require("huggingface_hub", "hf")
    errors = require("huggingface_hub.errors", "hf")
    switch = offline_variable()
    key = (f"{repo}/{filename}", switch, os.environ.get("HF_HOME"), os.environ.get("HF_HUB_CACHE"))
    if key not in _KNOWN:
        try:
            _KNOWN[key] = Path(hub.hf_hub_download(repo, filename, local_files_only=True))
        except errors.LocalEntryNotFoundError:
            if switch is not None:
                _KNOWN[key] = (f"The {what} ({filename} of {repo}) is not in the Hugging Face cache and {switch}=1 "
                               f"forbids downloading it; run once online, or {fix}.")
            else:
                try:
                    _ask_hub(repo, what, fix)
                    print(f"medtemporal: downloading the {what} ({filename} of {repo}) into the Hugging Face cache "
                          "(first use; set HF_HUB_OFFLINE=1 to forbid downloads)", file=sys.stderr)
                    _KNOWN[key] = Path(hub.hf_hub_download(repo, filename))
                except UnavailableError as exc:
                    _KNOWN[key] = str(exc)
                except (errors.GatedRepoError, errors.RepositoryNotFoundError, errors.EntryNotFoundError,
                        errors.RevisionNotFoundError, OSError) as exc:
                    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    _KNOWN[key] = (f"The {what} ({filename} of {repo}) could not be downloaded from the Hugging Face "
                                   f"hub ({first.removeprefix('Got: ').rstrip('.')}); check the connection and run "
                                   f"again, or {fix}.")
    known = _KNOWN[key]
    if isinstance(known, str):
        raise UnavailableError(known)
    return known
