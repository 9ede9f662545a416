"""The papers' published rows (issue 30 §6): every family says what its paper prints, and every number kept is
on the line of the paper it is cited from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.families import family_benches, scored_families  # noqa: F401  (the session's phantom benchmark of every family)

from medtemporal.cli import main
from medtemporal.contract import Published, spec
from medtemporal.published import NoneFound, PublishedTable
from medtemporal.report.published import PUBLISHED
from medtemporal.registry import discovered

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"
SEEDS = SHARED / "seeds"
FAMILIES = discovered("benchmark")
"""Every family the registry finds (built-in and plugins; not the toy families tests register)."""


def published(family: str) -> Published:
    """The family's published rows (`BenchmarkSpec.published`)."""
    return spec(family).published


def seed_lines(table: PublishedTable) -> list[str]:
    """The lines of the text the table cites: a paper in ``seeds/``, or the facts file (results published with a
    release rather than in a paper's text)."""
    if table.source == "FACTS":
        return (SHARED / "FACTS.md").read_text(encoding="utf-8").splitlines()
    number = table.source.removeprefix("seeds/")
    (path,) = SEEDS.glob(f"{number}_*.txt")
    return path.read_text(encoding="utf-8").splitlines()


def numbers(line: str) -> set[float]:
    """Every decimal number printed on ``line`` (markup such as ``\\cellcolormyblue69.90`` does not hide one; ``.933``
    and a sentence's last ``0.`` are numbers too)."""
    return {float(x) for x in re.findall(r"\d*\.\d+|\d+(?=\s*[|\t]|$|\.\s)", line)}


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_keeps_its_papers_rows_or_says_why_there_are_none(family):
    module = published(family)
    none = module.none
    assert bool(module.tables) != isinstance(none, NoneFound), family
    if none is not None:
        assert none.reason and not any(ref in none.reason for ref in ("FACTS", "seeds/", "§"))  # a reader's words
    for table in module.tables:
        assert table.rows and (table.source.startswith("seeds/") or table.source == "FACTS")
        # every column has a run's counterpart, or says in the table's setting why it has none
        assert all(c.group and c.metric or c.label.split(" (")[0] in table.setting for c in table.columns)


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the papers' text is not in ../shared/seeds")
@pytest.mark.parametrize("family", FAMILIES)
def test_every_published_number_is_on_its_line(family):
    for table in published(family).tables:
        lines = seed_lines(table)
        for row in table.rows:
            if not table.transposed:  # the facts file names a release's model in the heading of its paragraph
                around = lines[row.line - 1] if table.source != "FACTS" else "\n".join(lines[row.line - 16:row.line])
                assert row.model.removesuffix(" *").split(" + ")[0] in around, (table.name, row.model)
            for k, value in enumerate(row.values):
                line = lines[(table.lines[k] if table.transposed else row.line) - 1]
                assert value is None or value in numbers(line), (table.name, row.model, table.columns[k].label)


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the papers' text is not in ../shared/seeds")
def test_a_few_rows_against_the_text_as_a_reader_finds_them():
    from medtemporal.benchmarks.eltlm.published import TABLE_2 as ELTLM
    from medtemporal.benchmarks.mi_cxr.published import TABLE_1
    from medtemporal.benchmarks.rad3d.published import TABLE_4, TABLE_5
    from medtemporal.benchmarks.skillqa.published import TABLE_2 as SKILLQA
    from medtemporal.benchmarks.temmed.published import TABLE_3, TABLE_4 as TEMMED_RAG

    micxr = seed_lines(TABLE_1)
    assert micxr[188] == "\tGPT-5.2\t0.334\t0.371\t0.358\t0.438\t0.558\t0.390\t0.411"
    assert TABLE_1.row("GPT-5.2").values == (0.334, 0.371, 0.358, 0.438, 0.558, 0.390, 0.411)
    assert TABLE_3.row("GPT o4-mini").values[:2] == (79.15, 78.94) and TABLE_3.row("LLaVA-Med *").values[-1] is None
    assert TEMMED_RAG.row("HealthGPT * + Multi-Modal RAG").values[0] == 69.90  # the text's 69.90% (line 161)
    assert "HealthGPT achieves 69.90% accuracy" in seed_lines(TEMMED_RAG)[160]
    assert SKILLQA.row("FBK").values == (59.45, 0.47, 0.72, 0.76)
    assert ELTLM.row("GPT-5").values == (0.145, 0.359, 0.271, 0.171, 0.639, 0.699)
    radfm = dict(zip((c.label for c in TABLE_4.columns), TABLE_4.row("RadFM").values))
    assert radfm["Static Temporal Diagnosis Accuracy"] == 44.11 and radfm["Existence Detection Accuracy"] == 29.20
    printed = dict(zip((c.label for c in TABLE_5.columns), TABLE_5.row("100%").values))
    assert printed["Static Temporal Diagnosis Accuracy"] == 74.77  # as printed: Table 3's Task 6 value (FACTS §1.1)
    assert TABLE_5.columns[[c.label for c in TABLE_5.columns].index("Static Temporal Diagnosis Accuracy")].group == \
        "macro:task6"


@pytest.mark.parametrize("family", scored_families())
def test_every_family_report_shows_the_published_rows_beside_a_run(family, family_benches, tmp_path):  # noqa: F811
    run = tmp_path / "oracle"
    assert main(["run", str(family_benches[family]), "--model", "baseline:oracle", "--limit", "30", "--out", str(run),
                 "--no-progress"]) == 0
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    (page,) = [p for p in (tmp_path / "report").glob(f"{family}_*.md")
               if "## Published results beside your runs" in p.read_text()]
    text = page.read_text()
    module = published(family)
    if not module.tables:
        assert f"No published rows: {module.none.reason}." in text
        return
    first = module.tables[0]
    assert f"### {first.paper[:1].upper()}{first.paper[1:]}, {first.name}: {first.caption}" in text
    assert not any(ref in text.split("## Published results beside your runs")[1] for ref in ("FACTS", "seeds/", "§"))
    assert f"{first.rows[0].model} ({PUBLISHED})" in text
    assert "baseline:oracle" in text.split("## Published results beside your runs")[1]
    assert "**Caution:** baseline:oracle ran on phantoms (synthetic data)" in text
