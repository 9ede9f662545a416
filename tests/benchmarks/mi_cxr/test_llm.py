"""LLM-worded options: scripted models through the real Backend interface, the checks, the cache, the guard."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest

from medtemporal.backends.base import Backend, Request, Response
from medtemporal.benchmarks.mi_cxr.pipeline import MiCxrConfig, build_items
from medtemporal.benchmarks.mi_cxr.llm import REWORDED, TextModel, check_text, open_text_model
from medtemporal.benchmarks.mi_cxr.windows import Track
from medtemporal.errors import InvalidInputError
from medtemporal.backends.session import DataUse, ModelSession

CONFIG = MiCxrConfig(max_items=250, icr_variant=True, icr_variant_items=60)
_VARIANT = {"Resolution": "has cleared", "New Appearance": "is newly seen", "Marked Improvement": "is markedly improved",
            "Severe Worsening": "is severely worse"}


def _summary(spec: dict) -> str:
    side = f"{spec['laterality']} " if "laterality" in spec else ""
    arrow = " \u2192 "
    steps = ", ".join(f"{iv['interval'].replace(arrow, ' to ')} shows {iv['change']}" for iv in spec["intervals"])
    return f"For the {side}{spec['abnormality']}, {steps}."


def _session(backend: Backend, cache) -> ModelSession:
    """``backend`` as the session a build opens (cached in ``cache``; None: no cache)."""
    return ModelSession(backend, use=DataUse("mi-cxr", "synthetic"), cache_path=cache, no_cache=cache is None)


@dataclass
class Scripted(Backend):
    """Answers the MI-CXR prompts from their input: faithfully, or with every change said as 'resolves'."""

    faithful: bool = True
    calls: int = 0

    async def generate(self, request: Request) -> Response:
        self.calls += 1
        prompt = request.messages[0].parts[0].text
        if "distractor statements" in prompt:
            categories = re.search(r"in this order: (.+)\.", prompt).group(1).split(", ")
            desc = re.search(r"Correct interval-change statement: The (.+?) (?:is|has) ", prompt).group(1)
            return Response("\n".join(f"The {desc} {_VARIANT[c] if self.faithful else 'has resolved'}." for c in categories))
        payload = json.loads(next(line for line in prompt.splitlines() if line.startswith("{")))
        if not self.faithful:
            payload = json.loads(json.dumps(payload).replace("worsening", "resolution"))
        if "abnormality" in payload:
            return Response(_summary(payload))
        return Response(json.dumps({k: _summary(v) for k, v in payload.items()}))


def _plain(items):
    return [(i.subtype, i.answer, i.images, {k: v for k, v in i.meta.items() if k != "text"}) for i in items]


@pytest.fixture(scope="module")
def template(timelines):
    return build_items(timelines[:100], CONFIG)[0]


def test_faithful_model_words_the_summaries_and_never_changes_a_label(timelines, template, tmp_path):
    model = TextModel(_session(Scripted("scripted:faithful"), tmp_path / "c.sqlite"))
    items, exclusions = build_items(timelines[:100], CONFIG, model)
    assert _plain(items) == _plain(template)
    assert not [k for k in exclusions if k.startswith("llm_text_rejected")]
    for new, old in zip(items, template):
        assert new.meta["text"] == ("llm" if new.subtype in REWORDED else "template")
        if new.subtype in ("single_entity_interval_summary", "multi_entity_interval_summary"):
            assert all(new.options[x].startswith("For the ") for x in "ABCD")
            assert new.options[new.answer if new.answer != "E" else "A"] != old.options["A"]
        elif new.subtype == "icr_variant":
            for x in "ABCD":
                assert (new.options[x] == old.options[x]) == (x == new.answer)
        else:
            assert new.options == old.options


def test_cached_responses_rebuild_the_same_items_without_calling_the_model(timelines, tmp_path):
    first = Scripted("scripted:faithful")
    items, _ = build_items(timelines[:100], CONFIG, TextModel(_session(first, tmp_path / "c.sqlite")))
    again = Scripted("scripted:faithful")
    items2, _ = build_items(timelines[:100], CONFIG, TextModel(_session(again, tmp_path / "c.sqlite")))
    assert first.calls > 0 and again.calls == 0 and items2 == items


def test_outputs_breaking_a_constraint_fall_back_to_templates_and_are_counted(timelines, template, tmp_path):
    items, exclusions = build_items(
        timelines[:100], CONFIG, TextModel(_session(Scripted("scripted:unfaithful", faithful=False), None))
    )
    rejected = sum(v for k, v in exclusions.items() if k.startswith("llm_text_rejected"))
    fell_back = [i for i in items if i.subtype in REWORDED and i.meta["text"] == "template"]
    assert rejected == len(fell_back) > 0
    by_id = {i.id: i for i in template}
    assert all(i.id in by_id for i in fell_back)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("Between T1 and T2, the left pleural effusion newly appears; then from T2 through T5 it worsens.", None),
        ("The left pleural effusion newly appears. It worsens from T2 to T5.", "more than one sentence"),
        ("Between T1 and T2, the right pleural effusion newly appears, and it worsens through T5.", "laterality"),
        ("Between T1 and T2, the left pleural effusion newly appears, worsens, then improves by T5.", "unwanted improvement"),
        ("Between T1 and T2, the left pleural effusion newly appears and persists through T5.", "missing a worsening"),
        ("Between T1 and T2, a left pleural effusion and pneumothorax newly appear, worsening through T5.", "another"),
        ("Between T2 and T1, the left pleural effusion newly appears, worsening through T5.", "in order"),
    ],
)
def test_check_text(text, reason):
    track = Track("pleural effusion", (False, True, True, True, True),
                  ("emergence", "worsening", "worsening", "worsening"), "left")
    got = check_text(text, track, track.changes)
    assert (got is None) if reason is None else (reason in got)


def test_credentialed_annotations_stay_local_unless_allowed(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with pytest.raises(InvalidInputError, match="Refusing to send"):
        open_text_model("openai+http://example.com/v1:m", tmp_path / "c.sqlite", 0, "credentialed", False)
    assert open_text_model("openai+http://example.com/v1:m", tmp_path / "c.sqlite", 0, "synthetic", False)
    assert open_text_model("openai+http://127.0.0.1:9/v1:m", tmp_path / "c.sqlite", 0, "credentialed", False)
