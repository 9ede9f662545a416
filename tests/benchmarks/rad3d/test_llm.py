"""``build 3d-rad --llm``: a model writes open pairs, a model rates them, the paper's filter drops weak ones."""

from __future__ import annotations

import json
import re

from helpers.rad3d import build_args

from medtemporal.backends.base import Backend, Request, Response, TextPart
from medtemporal.benchmarks.rad3d.command import build
from medtemporal.benchmarks.rad3d.llm import keep, measurement_sentences, parse_pairs
from medtemporal.registry import register

CALLS: list[str] = []


class Scripted(Backend):
    """Answers the generation prompt with fixed pairs (Task 3 from the stated diameter) and rates them."""

    async def generate(self, request: Request) -> Response:
        text = " ".join(p.text for m in request.messages for p in m.parts if isinstance(p, TextPart))
        CALLS.append(text)
        if text.startswith("Rate this"):
            low = "trachea" in text
            return Response(json.dumps({"visual_verifiability": 2 if low else 4, "specificity_clarity": 4,
                                        "answer_appropriateness": 5, "qa_alignment": 4, "linguistic_quality": 4}))
        if "Task: Medical Computation" in text:
            m = re.search(r"diameter of (\d+) mm", text)
            pairs = [{"subtask": "Diameter", "question": "What is the nodule's diameter?", "answer": f"{m[1]} mm"}] if m else []
        elif "Task: Image Observation" in text:
            pairs = [{"subtask": "Anatomical_observation", "question": "How does the trachea appear?", "answer": "Patent."},
                     {"subtask": "Not_a_subtask", "question": "x?", "answer": "y"}]
        else:
            pairs = []
        return Response("Here you go:\n" + json.dumps(pairs))


register("backend", "scripted-rad3d-qa")(lambda uri, target: Scripted(uri=uri))


def test_model_written_pairs_are_filtered(ct_phantom, truth, tmp_path):
    args = build_args(ct_phantom, tmp_path / "b", tasks="task1,task2,task3", llm="scripted-rad3d-qa:x",
                      llm_cache=tmp_path / "qa.sqlite", allow_remote_data=False)
    items, manifest = build(args)
    assert manifest.config["open_questions"] == "model:scripted-rad3d-qa:x"
    assert set(manifest.config["qa_prompts"]) == {"rad3d_qa_generate", "rad3d_qa_score"}
    assert manifest.exclusions["qa_below_quality_threshold"] > 0  # every trachea pair scored 2 on one dimension
    assert {i.subtype for i in items} == {"Diameter"}
    for item in items:
        m = next(t["measurements"] for t in truth.values() if t["patient"] == item.meta["patient_id"])
        assert item.answer == f"{m['nodule_diameter_mm']} mm"
    # Task 3 prompts hold only the sentences that state a measurement
    assert all("The trachea is patent" not in c for c in CALLS if "Task: Medical Computation" in c)
    n = len(CALLS)
    again, _ = build(args)
    assert [i.id for i in again] == [i.id for i in items] and len(CALLS) == n  # served from the cache


def test_filter_and_parsing_rules():
    base = dict.fromkeys(("visual_verifiability", "specificity_clarity", "answer_appropriateness", "qa_alignment",
                          "linguistic_quality"), 3)
    assert keep(base) and not keep({**base, "qa_alignment": 2}) and not keep(None) and not keep({"x": 5})
    assert parse_pairs('[{"subtask": "Size", "question": "Size?", "answer": "3x4 mm"}]', "task3")[0].answer == "3x4 mm"
    assert parse_pairs("no json", "task3") == []
    assert measurement_sentences("Heart normal. A 5 mm nodule. Lesion 3x4 mm wide.") == "A 5 mm nodule. Lesion 3x4 mm wide."
