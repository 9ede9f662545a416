"""Model-worded questions: the model words, rules decide and check; cached, prompt hashed."""

import pytest
from helpers.fake_openai import TEST_API_KEY as KEY
from helpers.fake_openai import FakeOpenAI
from helpers.phantoms import make_cxr_phantoms

from medtemporal.benchmark import load
from medtemporal.benchmarks.eltlm.llm import acceptable, prompt_sha256
from medtemporal.cli import main

WORDED = "How did the findings change across these examinations?"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_cxr_phantoms(tmp_path_factory.mktemp("llm"), patients=5, seed=2, image_size=64)


def build(data, out, *extra):
    return main(["build", "eltlm", "--mimic-cxr-jpg", str(data.mimic_cxr_jpg), "--qba", str(data.qba),
                 "--out", str(out), *extra])


def test_worded_questions_are_kept_only_where_the_rules_allow(data, tmp_path):
    assert build(data, tmp_path / "t") == 0
    assert build(data, tmp_path / "m", "--llm", f"baseline:constant-{WORDED}",
                 "--llm-cache", str(tmp_path / "c.sqlite")) == 0
    template, worded = load(tmp_path / "t"), load(tmp_path / "m")
    assert [i.answer for i in template.items] == [i.answer for i in worded.items]  # answers stay the rule's
    for before, after in zip(template.items, worded.items, strict=True):
        if before.task == "perception":
            assert after.question == WORDED and after.meta["question_source"].startswith("baseline:")
        else:  # the worded question does not name the abnormality: the template stays
            assert after.question == before.question and after.id == before.id
    config = worded.manifest.config
    n = sum(i.task == "perception" for i in worded.items)
    assert config["question_model_kept"] == n and config["question_model_rejected"] == len(worded.items) - n
    assert config["question_prompt_sha256"] == prompt_sha256()


def test_model_calls_are_cached_and_carry_the_reference(data, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeOpenAI.start(keep_bodies=True) as fake:
        args = ("--llm", fake.uri("writer"), "--llm-cache", str(tmp_path / "c.sqlite"))
        assert build(data, tmp_path / "a", *args) == 0
        asked = sum(fake.stats()["counts"].values())
        bench = load(tmp_path / "a")
        assert asked == len(bench.items) and bench.manifest.config["question_model_rejected"] == asked  # letters
        bodies = [b["messages"][0]["content"] for b in fake.stats()["bodies"]]
        assert all(any(i.reference in b for b in bodies) for i in bench.items)
        assert build(data, tmp_path / "b", *args) == 0
        assert sum(fake.stats()["counts"].values()) == asked  # the rebuild is served from the cache


def test_acceptance_rules(data, tmp_path):
    assert build(data, tmp_path / "t") == 0
    item = next(i for i in load(tmp_path / "t").items if i.task == "reasoning")
    entity = item.meta["entity"]
    assert acceptable(item, f"How did the {entity} evolve over the examinations?")
    assert not acceptable(item, "How did it evolve over the examinations?")  # abnormality not named
    assert not acceptable(item, f"How did the {entity} evolve?\nExplain.")
    assert not acceptable(item, f"The {entity} worsened.")  # not a question
