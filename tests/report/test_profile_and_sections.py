"""The cross-benchmark profile, and the report's settings, repeats and paired sections."""

import json

import pytest

from helpers.scored_runs import make_items, prediction, write_run, wrong_letter

from medtemporal.scoring.runs import score_stale
from medtemporal.report import load_runs, write_report
from medtemporal.report.profile import profile_chart, profile_points
from medtemporal.report.assets import Assets
from medtemporal.report.sections import files_section, runs_section

pytestmark = pytest.mark.filterwarnings("ignore::medtemporal.errors.UndefinedMetricWarning")


@pytest.fixture
def runs(tmp_path):
    items = make_items(patients=12, per_patient=3)
    right = [prediction(i, f"The answer is {i.answer}.") for i in items]
    half = [prediction(i, f"The answer is {i.answer}." if k % 2 else f"({wrong_letter(i)})")
            for k, i in enumerate(items)]
    paths = [write_run(tmp_path, items, right, name="right", model="m1"),
             write_run(tmp_path, items, half, name="half", model="m2")]
    score_stale(paths)  # as `medtemporal report` does before the report reads them
    return paths


def test_profile_needs_two_benchmarks_and_plots_every_family(runs):
    loaded = load_runs(runs)
    assert profile_chart(loaded) is None  # one benchmark: no profile
    scores = json.loads((runs[1] / "scores.json").read_text())
    scores["run"]["benchmark"] = "another"
    (runs[1] / "scores.json").write_text(json.dumps(scores))
    loaded = load_runs(runs)
    points = profile_points(loaded)
    assert {p[1] for p in points} == {"scoring-test: TEL", "scoring-test: ICR", "scoring-test: GTS",
                                      "another: TEL", "another: ICR", "another: GTS"}
    assert all(p[3] == 1.0 for p in points if p[0] == "m1") and all(p[6] == pytest.approx(0.2) for p in points)
    assert profile_chart(loaded)[:8] == b"\x89PNG\r\n\x1a\n"


def test_html_shows_settings_paired_differences_and_the_viewer(runs):
    config = json.loads((runs[1] / "config.json").read_text())
    config.update(generation={"temperature": 0.7, "seed": 3}, repeats=1, medtemporal_version="9.9")
    (runs[1] / "config.json").write_text(json.dumps(config))
    write_report(runs, formats="html")
    page = (runs[0] / "report.html").read_text()
    shared, differ = page.split('<h2 id="settings">Run settings</h2>', 1)[1].split("<h3>Settings that differ", 1)
    differ = differ.split("</table>", 1)[0]
    assert "<td>Temperature</td>" in differ and "<td>0.7</td>" in differ and "9.9" in differ
    assert "<td>Repeats</td>" in shared and "<td>Temperature</td>" not in shared
    paired = page.split('<h2 id="paired">', 1)[1].split("<table>", 1)[0]
    assert paired.count("<li>") == 1 and "generation.temperature (0.7 vs null)" in paired  # one line for the pair
    assert 'class="warn"' not in paired  # settings that differ by design are no warning
    assert 'id="viewer-index"' in page and "#view:run=1&amp;group=task:TEL" in page
    data = json.loads(page.split('id="viewer-index">', 1)[1].split("</script>", 1)[0].replace("<\\/", "</"))
    assert len(data["rows"]) == 72 and len(data["items"]) == 36
    correct = [row[4] for row in data["rows"] if row[0] == 1]
    assert correct.count(1) == 18 and correct.count(0) == 18


def test_repeats_are_shown_as_items_times_repeats(runs):
    loaded = load_runs(runs)
    config = json.loads((runs[1] / "config.json").read_text())
    config["repeats"] = 3  # as a run with --repeats 3 records it
    (runs[1] / "config.json").write_text(json.dumps(config))
    page = runs_section(loaded)
    assert "<td>36</td>" in page and "<td>36 × 3 repeats</td>" in page and "each item once per repeat" in page


def profile_png():
    """A chart PNG as the report's charts are written (with its smallest text size)."""
    from medtemporal.report.plots import figure_png, pyplot

    fig, ax = pyplot().subplots(figsize=(3, 2))
    ax.plot([1, 2], [3, 4])
    return figure_png(fig)


def test_family_files_show_each_figure_once_where_the_markdown_names_it(tmp_path):
    png = tmp_path / "fig3.png"
    png.write_bytes(profile_png())
    other = tmp_path / "other.png"
    other.write_bytes(png.read_bytes())
    md = tmp_path / "tables.md"
    md.write_text('# Family\n\nRight when the output contains "<gold>." (`a<b`).\n\n![lengths](fig3.png)\n\n## After\n')
    html = files_section([md, png, other], Assets())
    assert html.count("<img") == 2 and html.count('src="fig3.png"') == 1 and html.count('src="other.png"') == 1
    assert html.index('src="fig3.png"') < html.index("After") < html.index('src="other.png"')  # in place, then the rest
    assert "&lt;gold&gt;." in html and "<code>a&lt;b</code>" in html  # text, never a tag
    assert 'id="fig-fig3"' in html and 'data-min-font-px="' in html
    inline = files_section([md, png], Assets(single_file=True))
    assert inline.count("data:image/png;base64,") == 1
