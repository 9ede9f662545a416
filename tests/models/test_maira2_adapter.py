"""The MAIRA-2 adapter's side of MAIRA-2's reporting interface, on a tiny LLaVA (MAIRA-2 is a LLaVA-style model)
saved with remote code of the same shape: ``Maira2ForConditionalGeneration`` and a ``Maira2Processor`` with the
documented ``format_and_preprocess_reporting_input`` and ``convert_output_to_plaintext_or_grounded_sequence``
(microsoft/maira-2 model card). The real processor's prompt layout and the real weights are not tested here."""

from __future__ import annotations

import json

import pytest
from helpers.families import family_benches  # noqa: F401  (session fixture)
from helpers.tiny_vlms import build_tiny_llava

from medtemporal.backends import load
from medtemporal.benchmark import load as load_benchmark
from medtemporal.runner import run

pytest.importorskip("transformers")

MODELING = '''
from transformers import LlavaConfig, LlavaForConditionalGeneration


class Maira2Config(LlavaConfig):
    model_type = "maira2"


class Maira2ForConditionalGeneration(LlavaForConditionalGeneration):
    config_class = Maira2Config
'''
PROCESSING = '''
from transformers import LlavaProcessor

CALLS = []


class Maira2Processor(LlavaProcessor):
    def format_and_preprocess_reporting_input(self, current_frontal, current_lateral, prior_frontal, indication,
                                              technique, comparison, prior_report, return_tensors="pt",
                                              get_grounding=False):
        CALLS.append(dict(current_frontal=current_frontal, current_lateral=current_lateral,
                          prior_frontal=prior_frontal, indication=indication, technique=technique,
                          comparison=comparison, prior_report=prior_report, get_grounding=get_grounding))
        images = [i for i in (current_frontal, current_lateral, prior_frontal) if i is not None]
        text = "USER: " + "<image>" * len(images) + f" {indication} {prior_report or ''} ASSISTANT:"
        return self(text=text, images=images, return_tensors=return_tensors)

    def convert_output_to_plaintext_or_grounded_sequence(self, text):
        return text
'''


@pytest.fixture(scope="module")
def tiny_maira2(tmp_path_factory):
    folder = build_tiny_llava(tmp_path_factory.mktemp("tiny-maira2"))
    (folder / "modeling_maira2.py").write_text(MODELING)
    (folder / "processing_maira2.py").write_text(PROCESSING)
    config = json.loads((folder / "config.json").read_text())
    config.update(model_type="maira2", auto_map={"AutoConfig": "modeling_maira2.Maira2Config",
                                                 "AutoModelForCausalLM": "modeling_maira2.Maira2ForConditionalGeneration"})
    (folder / "config.json").write_text(json.dumps(config))
    processor = json.loads((folder / "processor_config.json").read_text())
    processor.update(processor_class="Maira2Processor", auto_map={"AutoProcessor": "processing_maira2.Maira2Processor"})
    (folder / "processor_config.json").write_text(json.dumps(processor))
    return folder


def _calls(backend):
    import sys

    return next(m for name, m in sys.modules.items() if name.endswith("processing_maira2")).CALLS


def test_longitudinal_rrg_gives_maira2_its_prior_image_and_report(tiny_maira2, family_benches, tmp_path):  # noqa: F811
    bench = family_benches["longitudinal-rrg"]
    items = {i.id: i for i in load_benchmark(bench).items}
    backend = load(f"maira2:{tiny_maira2}", device="cpu", dtype="float32")
    summary = run(bench, backend, tmp_path / "prior-report", protocol="rrg-prior-report", tasks=["findings"],
                  limit=4, progress=False, no_cache=True, score=False, config={"max_tokens": 2})
    assert (summary.done, summary.n_errors) == (4, 0), summary.error_examples
    calls = _calls(backend)[-4:]
    lines = [json.loads(x) for x in (tmp_path / "prior-report" / "predictions.jsonl").read_text().splitlines()]
    for line, call in zip(lines, calls):  # one call per item, in the order answered (concurrency 1)
        item = items[line["item_id"]]
        prior = item.meta["prior"]
        assert call["current_frontal"] is not None and call["get_grounding"] is False
        assert (call["prior_frontal"] is not None) == (prior is not None and prior["images"] > 0)
        assert call["prior_report"] == (prior["report"] if prior else None)
        assert call["indication"] == (None if item.meta["context"]["indication"] == "N/A"
                                      else item.meta["context"]["indication"])
    # without the prior report in the request (protocol rrg-current) MAIRA-2 gets neither prior input
    run(bench, backend, tmp_path / "current", protocol="rrg-current", tasks=["findings"], limit=2, progress=False,
        no_cache=True, score=False, config={"max_tokens": 2})
    assert all(c["prior_frontal"] is None and c["prior_report"] is None for c in _calls(backend)[-2:])


def test_other_items_and_the_impression_task_fail_in_one_sentence(tiny_maira2, family_benches, tmp_path):  # noqa: F811
    backend = load(f"maira2:{tiny_maira2}", device="cpu", dtype="float32")
    summary = run(family_benches["longitudinal-rrg"], backend, tmp_path / "impression", tasks=["impression"], limit=1,
                  progress=False, no_cache=True, score=False)
    assert any("findings section only" in m for m in summary.error_examples.values()), summary.error_examples
    summary = run(family_benches["mmxu"], backend, tmp_path / "mmxu", limit=1, progress=False, no_cache=True,
                  score=False)  # two images: within MAIRA-2's three, but not a report item
    assert any("run MAIRA-2 on longitudinal-rrg" in m for m in summary.error_examples.values()), summary.error_examples
