"""Core hooks this issue added: Overall over the paper's tasks, the paper's generation settings by default."""

from __future__ import annotations


import pytest

from medtemporal.backends.base import GenerateConfig
from medtemporal.contract import spec
from medtemporal.runner import RunOptions
from medtemporal.errors import InvalidInputError
from medtemporal.schema import Item
from medtemporal.scoring.aggregate import Outcome, score_outcomes


def _item(task: str, i: int) -> Item:
    return Item.create(benchmark="mi-cxr", task=task, subtype=task.lower(), images=(), question=f"q{i}",
                       options={"A": "a", "B": "b"}, answer_type="choice", answer="A", meta={"patient_id": f"p{i}"})


def test_overall_covers_only_the_declared_tasks() -> None:
    outcomes = [Outcome(_item("TEL", i), "A", "answered") for i in range(4)]
    outcomes += [Outcome(_item("ICR-V", i), "B", "answered") for i in range(4)]
    scores = {s.group: s for s in score_outcomes(outcomes, lambda t: ("accuracy",), resamples=50,
                                                 overall_tasks=("TEL", "ICR", "GTS"))}
    assert scores["overall"].value == 1.0 and scores["overall"].n == 4
    assert scores["task:ICR-V"].value == 0.0
    everything = {s.group: s for s in score_outcomes(outcomes, lambda t: ("accuracy",), resamples=50)}
    assert everything["overall"].value == 0.5 and everything["overall"].n == 8
    assert spec("mi-cxr").groups.overall_tasks == ("TEL", "ICR", "GTS")


def test_runs_default_to_the_papers_generation_settings() -> None:
    for name, want in (("mi-cxr", {"temperature": 0.0, "max_tokens": None}),
                       ("temmed", {"temperature": None, "max_tokens": None})):
        resolved = RunOptions().resolve(spec(name)).generation
        assert {k: getattr(resolved, k) for k in want} == want
        assert RunOptions(config={"temperature": 0.5}).resolve(spec(name)).generation.temperature == 0.5
    unset = GenerateConfig(temperature=None, max_tokens=None)  # "the provider's default" is a valid setting
    assert (unset.temperature, unset.max_tokens) == (None, None)
    with pytest.raises(InvalidInputError, match="max-tokens"):
        GenerateConfig(max_tokens=0)
