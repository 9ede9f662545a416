"""Each family's report page in real Chromium at 1400 px: small page, tables that fit or scroll with their first
column in view, every image loaded (the 3D-RAD slices the model saw included), each figure once with readable
text, unique ids; the same from a single-file page."""

import json

import pytest
from helpers.browser import chromium, layout
from helpers.eltlm import make_open_benchmark, make_open_run
from helpers.fake_openai import TEST_API_KEY as KEY
from helpers.fake_openai import FakeOpenAI

from medtemporal.cli import main
from medtemporal.report import write_report
from medtemporal.scoring import score_run
from medtemporal.scoring.judge import Judge

pytestmark = pytest.mark.filterwarnings("ignore::medtemporal.errors.UndefinedMetricWarning")
SLICES = 4


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    chromium()
    root = tmp_path_factory.mktemp("pages")
    bench = make_open_benchmark(root / "eltlm", n=24)
    eltlm = [make_open_run(bench, root / "eltlm" / p, protocol=p)
             for p in ("direct", "shuffled-timestamps", "caption-then-reason")]
    for run in eltlm:
        score_run(run, judge=Judge("scripted-judge:overlap"), resamples=200)
    with pytest.MonkeyPatch.context() as mp, FakeOpenAI.start() as server:
        mp.setenv("OPENAI_API_KEY", KEY)
        mp.setenv("MEDTEMPORAL_VOLUME_CACHE", str(root / "volumes"))
        mp.setenv("MEDTEMPORAL_CACHE", str(root / "responses.sqlite"))
        data, ct = root / "ct", root / "3d-rad"
        assert main(["phantoms", "ct-rate", "--patients", "4", "--seed", "1", "--shape", "40,40,16", "--out", str(data)]) == 0
        assert main(["build", "3d-rad", "--ct-rate", str(data), "--out", str(ct / "bench")]) == 0
        models = {"served": server.uri("ct-vlm"), "rad3d-history": "rad3d:history", "baseline-random": "baseline:random"}
        rad3d = [ct / name for name in models]  # the served model is sent the slices; the baselines read no images
        for run in rad3d:
            assert main(["run", str(ct / "bench"), "--model", models[run.name], "--tasks",
                         "task4,task5,task6", "--protocol-option", f"slices={SLICES}", "--protocol-option", "size=32",
                         "--out", str(run), "--no-progress"]) == 0
        write_report(eltlm, root / "report-eltlm", formats="html")
        write_report(rad3d, root / "report-3d-rad", formats="html")
        write_report(rad3d, root / "report-3d-rad-single", formats="html", single_file=True)
        yield {name: root / f"report-{name}" / "report.html" for name in ("eltlm", "3d-rad", "3d-rad-single")}


def _check(measures):
    """What every report page must hold at 1400 px."""
    assert measures["console"] == []
    assert measures["pageOverflow"] <= 0  # nothing sticks out of the page sideways
    clipped = [t for t in measures["tables"] if not (t["fits"] or (t["scrolls"] and t["scrollerFits"]))]
    assert measures["tables"] and clipped == []
    assert all(t["sticky"] for t in measures["tables"] if t["scrolls"] and t["sticky"] is not None)
    assert measures["images"] and [i for i in measures["images"] if not i["loaded"]] == []
    assert len(measures["ids"]) == len(set(measures["ids"]))
    sources = [f["src"] for f in measures["figures"]]
    assert all(f["id"] for f in measures["figures"]) and len(sources) == len(set(sources))  # each figure once
    small = [f for f in measures["figures"] if not f["minFontPx"] or f["minFontPx"] * f["scale"] < 9]
    assert small == []  # every chart's smallest text is at least 9 px as shown


@pytest.mark.parametrize("name", ["eltlm", "3d-rad"])
def test_the_page_is_small_and_its_assets_load_beside_it(pages, name):
    page = pages[name]
    text = page.read_text()
    assert page.stat().st_size < 300_000 and "data:image" not in text and (page.parent / "assets").is_dir()
    measures = layout(page, fragment="view:run=0")
    _check(measures)
    assert "Prompt as sent" in measures["detail"] and "Raw output" in measures["detail"]


def test_eltlm_shows_fig3_once(pages):
    measures = layout(pages["eltlm"])
    ids = [f["id"] for f in measures["figures"]]
    assert ids.count("fig-eltlm_lengths") == 1 and "fig-rouge-l-f1-perception" in ids
    assert pages["eltlm"].read_text().count('src="eltlm_lengths.png"') == 1


def test_3d_rad_viewer_shows_the_slices_the_model_saw(pages):
    measures = layout(pages["3d-rad"], fragment="view:run=0&group=task:task4")
    _check(measures)
    slices = [i for i in measures["images"] if i["detail"]]
    assert len(slices) == SLICES and all(i["src"].startswith("assets/img/") for i in slices)
    assert not measures["notFound"] and f"Images as the model saw them ({SLICES})" in measures["detail"]
    assert "fig-accuracy-task4" in [f["id"] for f in measures["figures"]]  # 18 subtypes × 3 runs: one panel each
    predictions = (pages["3d-rad"].parents[1] / "3d-rad" / "served" / "predictions.jsonl").read_text()
    parts = [p for line in predictions.splitlines() for m in json.loads(line)["prompt"] for p in m["parts"]]
    assert all(p["root"] == "volumes" and not p["image"].startswith("/") for p in parts if "image" in p)


def test_a_single_file_page_holds_everything(pages):
    page = pages["3d-rad-single"]
    assert not (page.parent / "assets").exists()
    measures = layout(page, fragment="view:run=0&group=task:task5")
    _check(measures)
    slices = [i for i in measures["images"] if i["detail"]]
    assert len(slices) == SLICES and all(i["src"].startswith("data:image/jpeg") for i in slices)
    assert all(i["src"].startswith("data:image/") for i in measures["images"])


INTERNAL = ("FACTS", "seeds/", "§")
"""Our own notes' references, which mean nothing to a reader of the page."""


@pytest.mark.parametrize("name", ["eltlm", "3d-rad"])
@pytest.mark.parametrize("width, height", [(1400, 900), (390, 844)])
def test_the_first_screen_holds_a_score_table_and_nothing_overflows(pages, name, width, height):
    measures = layout(pages[name], width=width)
    assert measures["firstH2"].startswith("metric-")  # the page opens on the scores
    assert min(t["top"] for t in measures["tables"]) < height - 100  # a score table on the first screen
    assert measures["pageOverflow"] <= 0
    clipped = [t for t in measures["tables"] if not (t["fits"] or (t["scrolls"] and t["scrollerFits"]))]
    assert clipped == []  # every table fits or scrolls inside the page
    headlines = [t["headline"] for t in measures["tables"] if t["headline"] is not None]
    assert headlines and all(headlines)  # Overall in view without scrolling sideways, on a phone too
    small = [f for f in measures["figures"] if not f["minFontPx"] or f["minFontPx"] * f["scale"] < 9]
    assert small == []  # every chart's smallest text is at least 9 px as shown, on a phone too
    assert "Glossary" in measures["text"]
    text = pages[name].read_text() + "".join(p.read_text() for p in (pages[name].parent / "assets").glob("*.js"))
    assert [r for r in INTERNAL if r in text] == []


def test_eltlm_viewer_shows_the_answers_scores_and_the_judges_verdict_on_one_scale(pages):
    measures = layout(pages["eltlm"], fragment="view:run=0")
    assert "This answer's scores (× 100)" in measures["detail"] and "rouge_l_f1 " in measures["detail"]
    assert "Judge verdict (× 100) and rationale" in measures["detail"]
    assert "accuracy 0" in measures["detail"] or "accuracy 100" in measures["detail"]
    glossary = measures["text"].split("Glossary: tasks and subtypes")[1]
    assert glossary.index("perception") < glossary.index("reasoning") < glossary.index("2_studies")


def test_3d_rad_baseline_rows_show_the_volume_not_a_missing_image(pages):
    measures = layout(pages["3d-rad"], fragment="view:run=2&group=task:task5")
    assert not measures["notFound"] and "(image not found)" not in measures["detail"]
    assert [i for i in measures["images"] if i["detail"] and not i["loaded"]] == []
    glossary = measures["text"].split("Glossary: tasks and subtypes")[1]
    letters = [glossary.index(f"task5_{x}") for x in "bcdefgh" if f"task5_{x}" in glossary]
    assert letters and letters == sorted(letters)  # sorted, and named as the paper names them
    assert "Static Temporal Diagnosis" in glossary
