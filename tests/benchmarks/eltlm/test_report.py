"""ELTLM's report: Table 2 layout, calibration row, sequence-length strata and paired ablation deltas."""

import json
import math

import pytest
from helpers.eltlm import ANSWER, make_open_benchmark, make_open_run

from medtemporal.benchmark import load
from medtemporal.contract import spec
from medtemporal.benchmarks.eltlm.metrics import rouge_l_f1_of
from medtemporal.benchmarks.eltlm.report import ablation_table
from medtemporal.report import load_runs
from medtemporal.scoring import score_run
from medtemporal.scoring.judge import Judge
from medtemporal.report.family import family_report

JUDGE = Judge("scripted-judge:overlap")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("rep")
    bench = make_open_benchmark(root)
    direct = make_open_run(bench, root / "direct")
    ablation = make_open_run(bench, root / "caption", protocol="caption-then-reason")
    preds = ablation / "predictions.jsonl"  # the same model answering otherwise under the ablation
    preds.write_text(preds.read_text().replace(json.dumps(ANSWER), json.dumps("Unknown.")))
    for r in (direct, ablation):
        score_run(r, judge=JUDGE, resamples=200)
    return bench, [direct, ablation]


def test_paper_layout_tables_and_figure(runs, tmp_path):
    _, paths = runs
    written = family_report(paths, tmp_path)
    text = (tmp_path / "eltlm_tables.md").read_text()
    assert "| Model | Perception ROUGE-L | Perception Accuracy | Perception Completeness | Reasoning ROUGE-L" in text
    assert "| reference | 100.0 | 100.0 | 12 | 0 |" in text and "| empty | 0.0 | 0.0 | 12 | 0 |" in text
    assert "| judge_accuracy |" in text and "2 studies | 3 studies | 4 studies | 5 studies" in text
    png = tmp_path / "eltlm_lengths.png"
    assert png in written and png.read_bytes()[:4] == b"\x89PNG"


def test_the_image_order_and_the_items_it_puts_at_risk_are_counted(runs, tmp_path):
    bench, paths = runs
    family_report(paths, tmp_path)
    text = (tmp_path / "eltlm_tables.md").read_text()
    section = text.split("## Image order (date vs file)")[1].split("## Ablations")[0]
    items = load(bench).items
    differ = [i for i in items if i.meta["date_order_differs"]]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "Run" not in line and "---" not in line]
    assert len(rows) == 2 and all(f"| date | {len(differ)} of {len(items)} |" in r for r in rows)
    # direct answers the constant ANSWER: ROUGE-L 1 exactly where it is the reference, on each group
    expected = [sum(rouge_l_f1_of(i.reference, ANSWER) for i in g) / len(g)
                for g in (differ, [i for i in items if not i.meta["date_order_differs"]])]
    direct = next(r for r in rows if "caption" not in r)
    assert f"ROUGE-L {100 * expected[0]:.1f} (n={len(differ)}) / {100 * expected[1]:.1f} (n={len(items) - len(differ)})" in direct


def test_ablation_deltas_are_paired_and_clustered_by_patient(runs):
    bench, paths = runs
    items = load(bench).items
    share = sum(i.reference == ANSWER for i in items) / len(items)  # direct is right exactly there
    table = ablation_table(load_runs(paths), resamples=200)
    row = next(line for line in table.splitlines() if "| Accuracy |" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "caption-then-reason" and cells[4:] == ["12", "4"]
    assert math.isclose(float(cells[3].split()[0]), -100 * share, abs_tol=0.05)  # points, × 100
    low, high = (float(x) for x in cells[3].split("[")[1].rstrip("]").split(","))
    assert low - 0.05 <= -100 * share <= high + 0.05


def test_rouge_l_f1_is_rouge_scores_with_stemming():
    from rouge_score import rouge_scorer

    ref, hyp = "Interval worsening of the left pleural effusions.", "the left pleural effusion worsened"
    expected = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True).score(ref, hyp)["rougeL"].fmeasure
    assert rouge_l_f1_of(ref, hyp) == pytest.approx(expected) and 0 < expected < 1
    assert rouge_l_f1_of(ref, None) == 0.0 and rouge_l_f1_of(ref, ref) == 1.0


def test_spec_and_demo_section(tmp_path):
    s = spec("eltlm")
    assert s.metrics["*"][:3] == ("rouge_l_f1", "judge_accuracy", "judge_completeness")
    section = s.demo(tmp_path, 6, 0)
    runs = [step for step in section.steps if step[0] == "run"]
    assert {step[step.index("--protocol") + 1] for step in runs} == {"direct", "shuffled-timestamps",
                                                                      "caption-then-reason"}
    assert all(step[step.index("--judge") + 1] == "scripted-judge:overlap" for step in runs)
