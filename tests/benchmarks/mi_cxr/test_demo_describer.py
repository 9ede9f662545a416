"""The demo's stage-wise instrument: stage-1 text from recorded truth at a known error rate, random answers."""

from __future__ import annotations

import asyncio
import re

import pytest

from medtemporal.backends import load
from medtemporal.backends.base import Message, Request, TextPart
from medtemporal.benchmarks.mi_cxr.stage1 import CHANGE_WORDS, SAME, interval_texts as _interval_texts
from medtemporal.errors import InvalidInputError
from medtemporal.schema import Item

CHANGES = ["absent", "emergence", "worsening", "resolution"]


def _items(n: int) -> list[Item]:
    return [Item.create(benchmark="mi-cxr", task="TEL", subtype="single_emergence", images=[], question=f"Q{k}?",
                        options={"A": "a", "B": "b"}, answer_type="choice", answer="A",
                        meta={"abnormality": "pleural effusion", "changes": CHANGES}) for k in range(n)]


def _agreement(text: str) -> list[bool]:
    out = []
    for said, change in zip(_interval_texts(text, 5), CHANGES):
        kinds = {k for k, p in CHANGE_WORDS.items() if said and re.search(p, said, re.I)}
        assert len(kinds) == 1, said  # every sentence decides exactly one kind
        out.append(kinds == {SAME.get(change, change)})
    return out


def test_descriptions_agree_with_the_truth_at_the_set_rate_and_answers_stay_random():
    items = _items(200)
    exact, noisy = load("micxr-describer:noisy-truth", noise=0.0), load("micxr-describer:noisy-truth", noise=0.3)
    for backend in (exact, noisy):
        backend.fit_items(items)
    describe = Request((Message("user", (TextPart("describe"),)),), item=items[0].id)
    assert all(_agreement(asyncio.run(exact.generate(describe)).text))
    share = sum(sum(_agreement(noisy.describe(i.id))) for i in items) / (4 * len(items))
    assert 0.62 < share < 0.78  # 1 − 0.3, sampled over 800 intervals
    closed = Request((Message("user", (TextPart("Q?"),)),), choices=("A", "B", "C", "D", "E"), item=items[0].id)
    letters = {asyncio.run(noisy.generate(Request((Message("user", (TextPart(f"Q{k}?"),)),), choices=closed.choices)))
               .text for k in range(40)}
    assert len(letters) > 2  # the answer does not come from the truth
    with pytest.raises(InvalidInputError):
        load("micxr-describer:noisy-truth", noise=1.5)


def test_a_stagewise_run_gets_each_items_own_description(tmp_path):
    """The runner fits the describer with the run's items and stage 1 carries the item's id."""
    from helpers.tiny import make_tiny_benchmark

    from medtemporal.benchmark import load as load_bench
    from medtemporal.benchmark import save
    from medtemporal.runner import run
    from medtemporal.schema import Prediction, iter_jsonl

    tiny = load_bench(make_tiny_benchmark(tmp_path))
    items = [i.model_copy(update={"benchmark": "mi-cxr",  # MI-CXR's spec names the stage-wise guidelines
                                  "meta": {**i.meta, "abnormality": "pneumothorax", "changes": CHANGES}})
             for i in tiny.items]
    manifest = tiny.manifest.model_copy(update={"benchmark": "mi-cxr"})
    bench = load_bench(save(tmp_path / "with-truth", items, manifest))
    run(bench.path, "micxr-describer:noisy-truth", tmp_path / "run", protocol="stagewise", progress=False,
        no_cache=True)
    describer = load("micxr-describer:noisy-truth")
    describer.fit_items(bench.items)
    lines = list(iter_jsonl(tmp_path / "run" / "predictions.jsonl", Prediction))
    assert len(lines) == len(bench.items)
    for p in lines:
        assert p.error is None and p.answer in "ABCDE"
        assert p.calls[0]["output"] == describer.describe(p.item_id) and "T4 → T5: pneumothorax" in p.calls[0]["output"]
