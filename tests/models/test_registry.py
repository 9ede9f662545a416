"""The model registry: what a name resolves to, what each entry states, `medtemporal models`, and a run of a
registered name recording its entry."""

from __future__ import annotations

import json

import pytest
from helpers.tiny import make_tiny_benchmark

from medtemporal.backends.uri import split_scheme
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError, UnknownNameError
from medtemporal.models import ANSWER_FORMATS, ModelEntry, entries, lookup, resolve
from medtemporal.registry import lookup as registry_lookup
from medtemporal.registry import register
from medtemporal.runs import RunFolder


def test_a_name_resolves_per_backend_and_a_uri_stays_as_written():
    assert resolve("medgemma-4b").uri == "hf:google/medgemma-4b-it"
    assert dict(resolve("medgemma-4b").options) == {"dtype": "bfloat16"}
    assert resolve("medgemma-4b@vllm").uri == "vllm:google/medgemma-4b-it"
    assert resolve("lingshu-7b@server").uri == "openai+http://localhost:8000/v1:lingshu-medical-mllm/Lingshu-7B"
    assert resolve("lingshu-7b@https://box/v1").uri == "openai+https://box/v1:lingshu-medical-mllm/Lingshu-7B"
    assert resolve("qwen2.5-vl-7b@vllm").options["mm_processor_kwargs"] == {"min_pixels": 200704, "max_pixels": 1003520}
    assert resolve("gemini-2.5-flash").options == {"api_key_env": "GEMINI_API_KEY"}
    for uri in ("hf:/models/mine", "openai+http://u:p@host:8000/v1:m", "baseline:random", "/models/x", "./x"):
        assert resolve(uri).uri == uri and resolve(uri).entry is None
    assert lookup("medvlm-r1").size == "2B" and lookup("medvlm-r1").hub_id == "JZPeterPan/MedVLM-R1"


def test_bad_names_fail_in_one_sentence():
    with pytest.raises(UnknownNameError, match="Did you mean 'medgemma-4b'.*`medtemporal models` lists the names"):
        resolve("medgema-4b")
    with pytest.raises(InvalidInputError, match="maira-2 runs through hf, not 'vllm'"):
        resolve("maira-2@vllm")
    with pytest.raises(InvalidInputError, match="chexagent-2-3b cannot run in medtemporal yet: its remote code"):
        resolve("chexagent-2-3b")


@pytest.mark.parametrize("entry", entries(), ids=lambda e: e.name)
def test_every_entry_cites_its_sources_and_runs_through_a_registered_backend(entry: ModelEntry):
    assert entry.sources and all(s.startswith("https://") for s in entry.sources)
    assert entry.answer_format in ANSWER_FORMATS and entry.licence
    assert (entry.hub_id is None) == (entry.architecture == "api") == (entry.size is None)
    if entry.hub_id:
        assert entry.params_b and entry.weights_gb == round(2 * entry.params_b, 1)
    if entry.unsupported:
        return
    for backend in entry.backends():
        scheme, _ = split_scheme(entry.uri(backend))
        factory = registry_lookup("backend", scheme).obj  # a backend that exists, taking the entry's options
        import inspect

        accepted = set(inspect.signature(factory).parameters) | {"api_key_env"}
        assert set(entry.options(backend)) <= accepted, (entry.name, backend)


def test_models_lists_every_entry_and_shows_one(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert all(f"{e.name} " in out for e in entries())
    assert "gated" in out and "tiny random-weight Gemma 3 through hf: on one item of every family" in out
    assert main(["models", "medvlm-r1@vllm"]) == 0
    shown = capsys.readouterr().out
    assert "resolves to:   vllm:JZPeterPan/MedVLM-R1" in shown and "think-answer" in shown and "about 4 GB" in shown


def test_a_registered_name_runs_with_its_options_and_the_run_records_it(tmp_path):
    from helpers.tiny_vlms import build_tiny_qwen2vl

    folder = build_tiny_qwen2vl(tmp_path / "tiny-qwen2-vl")
    name = "tiny-qwen2-vl-test"
    register("model", name)(ModelEntry(name, str(folder), "0.001B", "qwen2_vl", "hf", "test", False,
                                       ("https://example.org/tiny",), hf_options={"dtype": "float32"},
                                       generation={"max_tokens": 3}))
    bench = make_tiny_benchmark(tmp_path, n=2)
    assert main(["run", str(bench), "--model", name, "--out", str(tmp_path / "run"), "--no-progress", "--no-cache",
                 "--option", "device=cpu"]) == 0
    config = RunFolder(tmp_path / "run").read_config()
    assert config.model_entry == name and config.name == name and config.model.uri == f"hf:{folder}"
    assert config.model.settings["dtype"] == "float32" and config.generation["max_tokens"] == 3
    lines = [json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert len(lines) == 2 and all(p["output_tokens"] <= 3 for p in lines)
