"""The papers' published rows rendered beside runs (`medtemporal.report.published`)."""

from __future__ import annotations

from types import SimpleNamespace

from medtemporal.published import NoneFound, PublishedColumn, PublishedRow, PublishedTable
from medtemporal.report.published import published_section, published_table
from medtemporal.schema import Score

TABLE = PublishedTable("the MI-CXR paper", "Table 2", "ICR variant", "temperature 0",
                       (PublishedColumn("ICR Variant", "task:ICR-V", "accuracy", scale=1.0),
                        PublishedColumn("Nothing of ours", None, None)),
                       (PublishedRow("GPT-5.2", (0.765, 0.1), line=233, section="Closed"),
                        PublishedRow("MedGemma-27B", (0.705, None), line=244, section="Medical")), digits=3)


def _run(label: str, value: float) -> SimpleNamespace:
    score = Score(metric="accuracy", value=value, group="task:ICR-V", n=10)
    scores = SimpleNamespace(variants=None, score=lambda g, m: score if (g, m) == ("task:ICR-V", "accuracy") else None)
    return SimpleNamespace(label=label, scores=scores, path=None,
                           benchmark=SimpleNamespace(manifest=SimpleNamespace(licence="synthetic")))


def test_published_rows_then_the_runs_in_percent_with_the_papers_precision():
    text = published_table(TABLE, [_run("my-model", 0.6123)])
    lines = text.splitlines()
    assert lines[0] == "| Group | Model | ICR Variant | Nothing of ours |"
    assert lines[2] == "| Closed | GPT-5.2 (published) | 76.5 | 0.100 |"  # a fraction × 100; a column in % as is
    assert lines[3] == "| Medical | MedGemma-27B (published) | 70.5 | – |"
    assert lines[4] == "| Your runs | my-model | 61.2 | – |"


def test_overall_comes_first_and_a_subset_run_says_so():
    table = PublishedTable("p", "T", "c", "s", (PublishedColumn("TEL", "task:ICR-V", "accuracy", scale=1.0),
                                                PublishedColumn("Overall", "task:ICR-V", "accuracy", scale=1.0)),
                           (PublishedRow("M", (0.2, 0.3), line=1),), digits=3)
    run = _run("mine", 0.5)
    run.config = SimpleNamespace(limit=60, limit_per_task=None, tasks=None)
    run.folder = SimpleNamespace(benchmark_manifest=lambda c: SimpleNamespace(counts={"task": {"a": 300, "b": 51}}))
    run.scores.counts = {"items": 60}
    lines = published_table(table, [run]).splitlines()
    assert lines[0] == "| Model | Overall | TEL |" and lines[2] == "| M (published) | 30.0 | 20.0 |"
    assert lines[3] == "| mine (subset: 60 of 351 items, --limit 60) | 50.0 | 50.0 |"


def test_a_transposed_table_puts_models_and_runs_in_columns():
    wide = PublishedTable("the 3D-RAD paper", "Table 4", "zero-shot", "zero-shot",
                          (PublishedColumn("Existence Detection Accuracy", "task:ICR-V", "accuracy"),),
                          (PublishedRow("RadFM", (29.2,), line=84),), transposed=True, lines=(94,))
    lines = published_table(wide, [_run("mine", 0.5)]).splitlines()
    assert lines[0] == "| Task / metric | RadFM (published) | mine |"
    assert lines[2] == "| Existence Detection Accuracy | 29.20 | 50.00 |"  # the paper prints percent


def test_a_run_on_phantoms_is_cautioned_by_default():
    text = published_section([TABLE], [_run("mine", 0.5)])
    assert "**Caution:** mine ran on phantoms (synthetic data), not on the paper's test set" in text


def test_one_caution_per_reason_naming_its_runs_and_none_found_in_one_sentence():
    text = published_section([TABLE], [_run("a", 0.5), _run("b", 0.4), _run("c", 0.3)],
                             cautions=lambda r: f"{r.label} is on phantoms" if r.label != "c" else "c is elsewhere")
    assert text.count("**Caution:**") == 2 and "**Caution:** 2 runs (a and b) is on phantoms" in text
    assert "**Caution:** c is elsewhere" in text
    default = published_section([TABLE], [_run("a", 0.5), _run("b", 0.4)])
    assert default.count("**Caution:**") == 1 and "2 runs (a and b) ran on phantoms" in default
    assert "their numbers show the layout" in default
    assert "### The MI-CXR paper, Table 2: ICR variant" in text and "The paper's setting: temperature 0." in text
    none = published_section([], [], none=NoneFound("the paper was not reachable (FACTS §5.3)"))
    assert "No published rows: the paper was not reachable (FACTS §5.3)." in none
