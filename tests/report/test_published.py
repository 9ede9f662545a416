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


def test_published_rows_then_the_runs_in_the_papers_units_and_decimals():
    text = published_table(TABLE, [_run("my-model", 0.6123)])
    lines = text.splitlines()
    assert lines[0] == "| Group | Model | ICR Variant | Nothing of ours |"
    assert lines[2] == "| Closed | GPT-5.2 (published) | 0.765 | 0.100 |"
    assert lines[3] == "| Medical | MedGemma-27B (published) | 0.705 | – |"
    assert lines[4] == "| Your runs | my-model | 0.612 | – |"


def test_a_transposed_table_puts_models_and_runs_in_columns():
    wide = PublishedTable("the 3D-RAD paper", "Table 4", "zero-shot", "zero-shot",
                          (PublishedColumn("Existence Detection Accuracy", "task:ICR-V", "accuracy"),),
                          (PublishedRow("RadFM", (29.2,), line=84),), transposed=True, lines=(94,))
    lines = published_table(wide, [_run("mine", 0.5)]).splitlines()
    assert lines[0] == "| Task / metric | RadFM (published) | mine |"
    assert lines[2] == "| Existence Detection Accuracy | 29.20 | 50.00 |"


def test_a_run_on_phantoms_is_cautioned_by_default():
    text = published_section([TABLE], [_run("mine", 0.5)])
    assert "**Caution:** mine ran on phantoms (synthetic data), not on the paper's test set" in text


def test_cautions_once_and_none_found_in_one_sentence():
    text = published_section([TABLE], [_run("a", 0.5), _run("b", 0.4)], cautions=lambda r: f"{r.label} is on phantoms")
    assert text.count("**Caution:** a is on phantoms") == 1 and "**Caution:** b is on phantoms" in text
    assert "### The MI-CXR paper, Table 2: ICR variant" in text and "The paper's setting: temperature 0." in text
    none = published_section([], [], none=NoneFound("the paper was not reachable (FACTS §5.3)"))
    assert "No published rows: the paper was not reachable (FACTS §5.3)." in none
