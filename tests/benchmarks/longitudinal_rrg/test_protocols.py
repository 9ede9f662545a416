"""The three protocols' messages, the baselines' answers and the section extraction on real output shapes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from medtemporal.backends.base import GenerateConfig, ImagePart, TextPart
from medtemporal.benchmark import load
from medtemporal.benchmarks.longitudinal_rrg.baselines import NORMAL_REPORT, ReportBaseline, copy_prior
from medtemporal.benchmarks.longitudinal_rrg.extract import section
from medtemporal.benchmarks.longitudinal_rrg.protocols import (
    COMPARISON_CLAUSE,
    CurrentOnly,
    PriorImages,
    PriorReport,
)
from medtemporal.errors import InvalidInputError
from medtemporal.protocols.base import answer_request


def texts(parts) -> list[str]:
    return [p.text for p in parts if isinstance(p, TextPart)]


@pytest.fixture(scope="module")
def items(rrg_bench):
    return load(rrg_bench).items


def _with_prior(items, task="findings"):
    return next(i for i in items if i.task == task and i.subtype == "with_prior" and
                any(r.view not in ("PA", "AP") for r in i.images if r.role == "current"))


@pytest.mark.parametrize("protocol", [CurrentOnly, PriorImages, PriorReport])
def test_each_protocol_shows_what_its_name_says_in_maira2_s_order(items, protocol):
    item = _with_prior(items)
    _, parts = protocol().parts(item, Path("/root"))
    kinds = ["image" if isinstance(p, ImagePart) else "text" for p in parts]
    shown = protocol().shown(item)
    assert [r.role for r in shown] == (["current", "current"] + (["historical"] if protocol.prior_images else []))
    assert shown[0].view in ("PA", "AP") and shown[1].view not in ("PA", "AP")
    assert kinds == ["text", "image"] * len(shown) + ["text"] * (2 if protocol.prior_report else 1)
    assert [p.path for p in parts if isinstance(p, ImagePart)] == [Path("/root") / r.path for r in shown]
    captions = texts(parts)[: len(shown)]
    first = "Current study (visit 2)" if protocol.prior_images else "Current study, frontal"
    assert captions == [r.label for r in shown] and captions[0].startswith(first)
    *_, instruction = texts(parts)
    context = item.meta["context"]
    assert instruction == (f"Provide a description of the findings in the radiology study"
                           f"{COMPARISON_CLAUSE if protocol.prior_images else ''}. INDICATION: {context['indication']} "
                           f"TECHNIQUE: {context['technique']} COMPARISON: {context['comparison']}")
    prior_report = [t for t in texts(parts) if t.startswith("PRIOR_REPORT: ")]
    assert prior_report == ([f"PRIOR_REPORT: {item.meta['prior']['report']}"] if protocol.prior_report else [])
    assert item.meta["prior"]["report"].startswith("FINDINGS: ")


def test_an_item_without_a_prior_gets_the_current_study_alone_under_every_protocol(items):
    item = next(i for i in items if i.subtype == "no_prior" and i.task == "impression")
    for protocol in (CurrentOnly, PriorImages, PriorReport):
        _, parts = protocol().parts(item, Path("/root"))
        assert not any(t.startswith("PRIOR_REPORT") or "prior" in t.lower() for t in texts(parts))
        assert texts(parts)[-1].startswith("Provide the impression of the radiology study. INDICATION: ")


@pytest.mark.parametrize(("views", "current", "prior"), [("maira2", 2, 1), ("frontal", 1, 1), ("all", None, None)])
def test_the_views_option_chooses_the_images_of_each_study(items, views, current, prior):
    item = _with_prior(items)
    shown = PriorImages(views=views).shown(item)
    roles = [r.role for r in shown]
    assert roles.count("current") == (current or sum(r.role == "current" for r in item.images))
    assert roles.count("historical") == (prior or sum(r.role == "historical" for r in item.images))
    assert PriorImages(views=views).max_images(item) == len(shown)


def test_an_unknown_views_value_and_an_item_of_another_family_are_refused(items):
    with pytest.raises(InvalidInputError, match="views='lateral' is unknown"):
        PriorReport(views="lateral")
    other = items[0].model_copy(update={"task": "perception", "meta": {}})
    with pytest.raises(InvalidInputError, match="not a longitudinal-rrg item"):
        PriorReport().parts(other, Path("/root"))


def test_the_baselines_answer_the_prior_the_constant_and_the_neighbour(items):
    config = GenerateConfig()
    answers = {}
    for kind in ("copy-prior", "normal-report", "nearest-report"):
        backend = ReportBaseline(f"longitudinal_rrg:{kind}", kind)
        backend.fit_items(items)
        answers[kind] = {i.id: asyncio.run(backend.generate(answer_request(i, [TextPart("x")], config))).text
                         for i in items}
    for item in items:
        prior = item.meta["prior"]
        assert answers["copy-prior"][item.id] == (copy_prior(item) if prior else "")
        if prior:
            assert answers["copy-prior"][item.id] == (prior[item.task] or prior["findings"] or prior["impression"])
        assert answers["normal-report"][item.id] == NORMAL_REPORT[item.task]
        assert answers["nearest-report"][item.id] == item.meta["nearest"]["text"]


OUTPUTS = [
    ("The lungs are clear. No effusion.", "The lungs are clear. No effusion."),
    ("FINDINGS: The lungs are clear.\nIMPRESSION: No acute process.", "The lungs are clear."),
    ("**Findings:** Mild cardiomegaly.\n\n**Impression:** Cardiomegaly.", "Mild cardiomegaly."),
    ("## Findings\nNew right effusion.\n## Impression\nEffusion.", "New right effusion."),
    ("<think>Compare with the prior: the effusion grew.</think>\nFindings: Worsening right effusion.",
     "Worsening right effusion."),
    ("Here is the report for the current study:\nFINDINGS:\nStable cardiomegaly.\nIMPRESSION:\nStable.",
     "Stable cardiomegaly."),
    ("IMPRESSION: No acute cardiopulmonary process.", "IMPRESSION: No acute cardiopulmonary process."),
    ("I'm sorry, I cannot provide a diagnosis from these images.",
     "I'm sorry, I cannot provide a diagnosis from these images."),
    ("   \n", None),
    # one line, plain or bold, any case: split at the header (issue 42 item 15)
    ("FINDINGS: Small left effusion. IMPRESSION: Effusion.", "Small left effusion."),
    ("**Findings:** Lungs are clear. **Impression:** Normal chest.", "Lungs are clear."),
    ("findings: New opacity. impression: Pneumonia.", "New opacity."),
    ("Small effusion; no findings: of note.", "Small effusion; no findings: of note."),
]


@pytest.mark.parametrize("output", ["FINDINGS: Small left effusion. IMPRESSION: Effusion.",
                                    "**Findings:** Small left effusion. **Impression:** Effusion.",
                                    "Findings: Small left effusion. conclusion: Effusion."])
def test_a_report_on_one_line_gives_each_task_its_own_section(items, output):
    impression = next(i for i in items if i.task == "impression")
    assert section(impression, output) == "Effusion."


@pytest.mark.parametrize(("output", "want"), OUTPUTS)
def test_the_asked_section_is_taken_from_outputs_shaped_as_models_write_them(items, output, want):
    findings = next(i for i in items if i.task == "findings")
    assert section(findings, output) == want
