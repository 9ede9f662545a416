"""MI-CXR error types by the LLM judge (appendix G): strict parsing, the real `openai` client against the
loopback fake server, resume and cache, ``score --judge`` into the report, and the scripted stand-in."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from helpers.fake_openai import TEST_API_KEY as KEY
from helpers.fake_openai import FakeOpenAI
from helpers.reports import loaded
from helpers.scored_runs import OPTIONS, prediction, write_run, wrong_letter

from medtemporal.benchmark import Manifest, save
from medtemporal.benchmarks.mi_cxr.report import judge_table, judged_taxonomy
from medtemporal.benchmarks.mi_cxr.error_judge import FILE, judge_errors, parse_error_type, stored_labels
from medtemporal.report import load_runs
from medtemporal.report.console import run_table
from medtemporal.report.loaded import ReportRun
from medtemporal.schema import Item
from medtemporal.scoring import score_run
from medtemporal.scoring.failures import judge_failure
from medtemporal.scoring.judge import Judge
from medtemporal.runs import RunFolder
from medtemporal.report.family import family_report
from medtemporal.scoring.outcomes import load_outcomes

pytestmark = pytest.mark.filterwarnings("ignore::medtemporal.errors.UndefinedMetricWarning")
CHANGES = ["absent", "absent", "emergence", "unchanged"]


def _items(n: int = 12) -> list[Item]:
    tasks = ["TEL", "ICR", "GTS"]
    return [Item.create(benchmark="mi-cxr", task=tasks[k % 3], subtype="x", images=[], question=f"Question {k}?",
                        options=OPTIONS, answer_type="choice", answer="C" if k % 4 else "E",
                        meta={"patient_id": f"p{k // 2}", "abnormality": "pneumothorax", "changes": CHANGES})
            for k in range(n)]


def _run(tmp_path: Path, items: list[Item], describe: str | None = None) -> Path:
    """Items 0-7 answered wrongly (0 and 4 with the null option), the rest right."""
    bench = tmp_path / "bench"
    save(bench, items, Manifest(benchmark="mi-cxr", version="1", licence="synthetic"))
    preds = []
    for k, i in enumerate(items):
        letter = i.answer if k >= 8 else ("E" if k in (1, 5) else wrong_letter(i) if i.answer != "E" else "B")
        p = prediction(i, f"The answer is {letter}.")
        if describe is not None:
            p = p.model_copy(update={"calls": ({"stage": "describe", "output": describe},)})
        preds.append(p)
    return write_run(tmp_path, items, preds, bench=bench)


def test_the_label_line_is_read_strictly():
    assert parse_error_type("Reasoning first.\n**Error type:** Forced choice") == "forced_choice"
    assert parse_error_type("Error type: exclusivity.") == "exclusivity"
    assert parse_error_type("Error type: abstention\nError type: exclusivity") is None  # two different labels
    assert parse_error_type("The answer is B.") is None and parse_error_type(None) is None
    assert parse_error_type("Error type: misreading") is None  # not one of the five


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI.start() as srv:
        yield srv


def test_a_model_judge_labels_wrong_answers_through_the_openai_client_and_resumes(server, tmp_path, monkeypatch):
    server.reset()
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    items = _items()
    run = _run(tmp_path, items)
    # the judge sees the task family: TEL wrongs → exclusivity, ICR → forced choice, GTS → an unreadable reply
    server.configure(keep_bodies=True, replies=[["[Task]\nTEL", "Error type: exclusivity"],
                                                ["[Task]\nICR", "Error type: forced_choice"],
                                                ["[Task]\nGTS", "I cannot tell."]])
    judge = Judge(server.uri("judge-llm"), max_tokens=32)
    cache = tmp_path / "cache.sqlite"
    block = judge_errors(load_outcomes(run), judge, cache_path=cache, progress=False)
    assert block["counts"]["wrong"] == 8 and block["counts"]["asked"] == 8
    assert block["counts"]["labelled"] == sum(i.task != "GTS" for i in items[:8])
    unread = sum(i.task == "GTS" for i in items[:8])  # the failure check reads the block as any judge's
    assert 0.2 < unread / 8 and f"cannot read for {unread} of 8 answers" in judge_failure(block)
    assert judge_failure({**block, "counts": {**block["counts"], "judged": 80}}) is None
    bodies = server.stats()["bodies"]
    assert len(bodies) == 8 and all(b["model"] == "judge-llm" and b["temperature"] == 0 for b in bodies)
    sent = bodies[0]["messages"][0]["content"]
    text = sent if isinstance(sent, str) else "\n".join(p["text"] for p in sent)
    assert "T3 → T4: emergence" in text and "[Correct Answer]" in text  # the item's annotation goes to the judge
    labels = stored_labels(run)
    assert {labels[(i.id, 0)] for i in items[:8] if i.task == "TEL"} == {"exclusivity"}
    assert {labels[(i.id, 0)] for i in items[:8] if i.task == "GTS"} == {None}  # unparseable, never a type
    counts = judged_taxonomy(loaded([run])[0])
    assert counts["ICR"]["forced_choice"] == sum(i.task == "ICR" for i in items[:8])
    assert counts["GTS"]["unparseable"] == sum(i.task == "GTS" for i in items[:8])
    again = judge_errors(load_outcomes(run), judge, cache_path=cache, progress=False)  # resume: nothing asked twice
    assert again["counts"]["from_file"] == 8 and again["counts"]["asked"] == 0
    assert len(server.stats()["bodies"]) == 8
    (run / FILE).unlink()  # a new folder state: the response cache answers
    cached = judge_errors(load_outcomes(run), judge, cache_path=cache, progress=False)
    assert cached["counts"]["from_cache"] == 8 and cached["counts"]["asked"] == 0


def test_score_with_a_judge_runs_the_error_pass_and_the_report_shows_fig25(tmp_path):
    items = _items()
    described = "T1 → T2: remains absent. T2 → T3: remains absent. T3 → T4: newly appears. T4 → T5: unchanged."
    run = _run(tmp_path, items, describe=described)
    score_run(run, judge=Judge("micxr-scripted-judge:errors"), judge_options={"progress": False})
    scores = RunFolder(run).scores()
    assert scores.judge["uri"] == "micxr-scripted-judge:errors" and scores.judge["counts"]["labelled"] == 8
    assert scores.judge["prompts"] == ["micxr_error_type"]
    line = [x for x in run_table(ReportRun(run, "run", scores)).splitlines() if x.startswith("Judge ")]
    assert line == ["Judge micxr-scripted-judge:errors: 8 verdicts read, 0 unparseable, 0 failed, "
                    "0 answers missing (scored 0 without a call)."]
    lines = (run / FILE).read_text().splitlines()
    assert len(lines) == 8
    # the descriptions agree with the annotation, so the scripted judge reads the choice: null chosen → abstention
    labels = stored_labels(run)
    assert labels[(items[1].id, 0)] == "abstention" and labels[(items[5].id, 0)] == "abstention"
    assert labels[(items[0].id, 0)] == "forced_choice"  # gold was the null option
    table, png = judge_table(load_runs([run]))
    assert "Failure of Temporal Exclusivity" in table and png[:4] == b"\x89PNG"
    written = family_report([run], tmp_path / "out")
    assert "mi-cxr_judged_errors.png" in [p.name for p in written]
    assert "by the LLM judge (Appendix G, Fig. 25 layout)" in written[0].read_text()


def test_the_scripted_judge_flags_descriptions_that_contradict_the_annotation(tmp_path):
    items = _items()
    run = _run(tmp_path, items, describe="T1 → T2: has resolved. T2 → T3: unchanged. T3 → T4: new. T4 → T5: stable.")
    judge_errors(load_outcomes(run), Judge("micxr-scripted-judge:errors"), progress=False)
    assert Counter(stored_labels(run).values()) == {"local_misinterpretation": 8}
    assert json.loads((run / FILE).read_text().splitlines()[0])["status"] == "ok"
