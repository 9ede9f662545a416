"""A Hub model that cannot be fetched fails once, at once, with the sentence of its cause: gated, missing,
unreachable, or not cached while downloads are off; a cached copy loads from its folder without the network.

The hub is simulated by huggingface_hub's own HTTP client with a mock transport (its real status mapping
turns 403 ``GatedRepo`` and 404 ``RepoNotFound`` into its errors; a refused connection raises the client's
``ConnectError``), so nothing leaves this machine, and transformers is never reached.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from medtemporal.backends import load as load_backend
from medtemporal.cli import main
from medtemporal.errors import UnavailableError
from medtemporal.hf_models import loadable

hub_http = pytest.importorskip("huggingface_hub.utils._http")
httpx = pytest.importorskip("httpx2")
REPO = "Org/Name"


@pytest.fixture
def hub(monkeypatch, tmp_path):
    """Set the simulated hub's answer (``gated``, ``missing``, ``down``); downloads allowed, an empty cache;
    every request is recorded, and transformers' loaders fail the test if reached."""
    seen: list[str] = []
    state = {"answer": "down"}

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if state["answer"] == "down":
            raise httpx.ConnectError("[Errno -2] Name or service not known", request=request)
        code, error = {"gated": (403, "GatedRepo"), "missing": (404, "RepoNotFound")}[state["answer"]]
        return httpx.Response(code, headers={"X-Error-Code": error}, request=request)

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-home" / "hub"))
    monkeypatch.setattr(pytest.importorskip("huggingface_hub.constants"), "HF_HUB_CACHE", str(tmp_path / "hf-home" / "hub"))
    hub_http.set_client_factory(lambda: httpx.Client(transport=httpx.MockTransport(handle)))
    transformers = pytest.importorskip("transformers")

    def never(*args, **kwargs):
        raise AssertionError("transformers was asked to load a model that cannot be fetched")

    monkeypatch.setattr(transformers.AutoProcessor, "from_pretrained", never)
    monkeypatch.setattr(transformers.AutoModelForImageTextToText, "from_pretrained", never)
    yield state, seen
    hub_http.set_client_factory(hub_http.default_client_factory)


@pytest.mark.parametrize("answer, sentence", [
    ("gated", "is gated on the Hugging Face hub; accept its terms on its page and log in with `hf auth login`"),
    ("missing", "is not a model on the Hugging Face hub (or it is private: log in with `hf auth login`)"),
    ("down", "cannot be fetched: the Hugging Face hub cannot be reached ([Errno -2] Name or service not known)"),
])
def test_an_unfetchable_hub_model_fails_once_with_its_sentence(hub, answer, sentence):
    state, seen = hub
    state["answer"] = answer
    start = time.perf_counter()
    with pytest.raises(UnavailableError) as raised:
        load_backend(f"hf:{REPO}")
    assert time.perf_counter() - start < 5 and len(seen) == 1  # asked once: no retries
    assert sentence in str(raised.value) and str(raised.value).startswith(f"The model '{REPO}' ")
    assert "hf:/path/to/model" in str(raised.value) and "\n" not in str(raised.value)


def test_offline_without_a_cached_copy_names_the_switch(hub, monkeypatch):
    _, seen = hub
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UnavailableError, match=r"is not in the Hugging Face cache and HF_HUB_OFFLINE=1 forbids"):
        load_backend(f"hf:{REPO}")
    assert seen == []


def test_a_cached_copy_is_loaded_from_its_folder_when_the_hub_is_down(hub, tmp_path):
    state, seen = hub
    snapshot = tmp_path / "hf-home" / "hub" / "models--Org--Name" / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("0" * 40)
    assert Path(loadable(REPO, what="model", fix="x")) == snapshot and len(seen) == 1
    assert loadable(str(snapshot), what="model", fix="x") == str(snapshot) and len(seen) == 1  # folders: no call


def test_the_cli_says_it_in_one_line_and_exits_2(hub, tmp_path, capsys):
    from helpers.eltlm import make_open_benchmark

    bench = make_open_benchmark(tmp_path, n=2, patients=1)
    assert main(["run", str(bench), "--model", f"hf:{REPO}", "--out", str(tmp_path / "r"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("medtemporal: error: The model 'Org/Name' cannot be fetched")


def test_an_encoder_out_of_reach_is_told_once_per_process_and_never_said_to_download(hub, capsys):
    from medtemporal.hf_models import model_folder, model_file

    state, seen = hub
    start = time.perf_counter()
    for _ in range(3):  # every BERTScore metric of a run asks again
        with pytest.raises(UnavailableError, match="the Hugging Face hub cannot be reached") as raised:
            model_folder("Org/Encoder", what="BERTScore encoder", fix="set MEDTEMPORAL_BERTSCORE_MODEL=/path")
        with pytest.raises(UnavailableError, match="HF_HUB_OFFLINE=1 to stop trying"):
            model_file("Org/Scorers", "labeller.pth", what="labeller checkpoint", fix="set MEDTEMPORAL_X=/path")
    assert time.perf_counter() - start < 5 and len(seen) == 2  # one question each, then remembered
    assert "MEDTEMPORAL_BERTSCORE_MODEL=/path" in str(raised.value) and "\n" not in str(raised.value)
    assert "download" not in capsys.readouterr().err
