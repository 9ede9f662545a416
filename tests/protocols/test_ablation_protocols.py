"""shuffled-timestamps and caption-then-reason: what each shows the model, stage by stage."""

import asyncio
import json
from pathlib import Path

import pytest
from helpers.phantoms import make_cxr_phantoms

from medtemporal.backends.base import GenerateConfig, ImagePart, RequestError, Response, TextPart
from medtemporal.benchmark import load
from medtemporal.cli import main
from medtemporal.errors import InvalidInputError
from medtemporal.protocols.caption_then_reason import CaptionThenReason
from medtemporal.protocols.shuffled_timestamps import ShuffledTimestamps, parse_dates, shuffled_order
from medtemporal.backends.session import DataUse, ModelSession
from medtemporal.runner import run


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    data = make_cxr_phantoms(tmp_path_factory.mktemp("abl"), patients=6, seed=1, image_size=64)
    out = tmp_path_factory.mktemp("b") / "eltlm"
    assert main(["build", "eltlm", "--mimic-cxr-jpg", str(data.mimic_cxr_jpg), "--qba", str(data.qba),
                 "--out", str(out)]) == 0
    return load(out)


def recording():
    requests = []

    async def generate(request):
        requests.append(request)
        return Response(f"output {len(requests)}")

    return requests, generate


def test_shuffled_images_carry_their_dates_in_a_seeded_non_chronological_order(bench):
    item = next(i for i in bench.items if len(i.images) >= 3)
    requests, generate = recording()
    solution = asyncio.run(ShuffledTimestamps(seed=7, dates="recorded").solve(item, bench.image_root, generate,
                                                                               GenerateConfig()))
    order = solution.calls[0]["shown_order"]
    assert order == shuffled_order(item, 7) != sorted(order) and sorted(order) == list(range(len(item.images)))
    parts = requests[0].messages[0].parts
    images = [p.path for p in parts if isinstance(p, ImagePart)]
    assert images == [bench.image_root / item.images[i].path for i in order]
    labels = [p.text for p in parts if isinstance(p, TextPart) and p.text.startswith("Image taken on")]
    assert labels == [f"Image taken on {item.images[i].timestamp[:10]}:" for i in order]
    assert "read them in order of their dates" in parts[-1].text and item.question in parts[-1].text
    assert shuffled_order(item, 8) != order or len(item.images) == 2  # another seed, another order


def test_undated_images_are_refused(bench):
    item = bench.items[0]
    undated = item.model_copy(update={"images": tuple(r.model_copy(update={"timestamp": None}) for r in item.images)})
    with pytest.raises(InvalidInputError, match="without a date"):
        asyncio.run(ShuffledTimestamps(dates="real").solve(undated, bench.image_root, recording()[1], GenerateConfig()))


def test_caption_then_reason_answers_from_text_only(bench):
    item = next(i for i in bench.items if len(i.images) >= 3)
    requests, generate = recording()
    solution = asyncio.run(CaptionThenReason().solve(item, bench.image_root, generate, GenerateConfig()))
    n = len(item.images)
    assert len(requests) == n + 2 and [r.n_images for r in requests] == [1] * n + [0, 0]
    final = requests[-1].messages[0].parts[0].text
    assert all(f"Image {k}: output {k}" in final for k in range(1, n + 1))
    assert f"output {n + 1}" in final and item.question in final  # the summary and the question
    assert [c["stage"] for c in solution.calls] == ["caption"] * n + ["summary", "answer"]


def test_a_separate_captioner_is_called_through_its_own_backend(bench, tmp_path, monkeypatch):
    monkeypatch.setenv("MEDTEMPORAL_CACHE", str(tmp_path / "c.sqlite"))
    item = bench.items[0]
    requests, generate = recording()
    solver = CaptionThenReason(captioner="baseline:constant-Clear lungs.")
    for side in solver.side_models():
        side.bind(ModelSession.open(side.uri, use=DataUse(item.benchmark, "synthetic")))
    solution = asyncio.run(solver.solve(item, bench.image_root, generate, GenerateConfig()))
    assert len(requests) == 1 and "Image 1: Clear lungs." in requests[0].messages[0].parts[0].text
    assert solution.calls[0]["output"] == "Clear lungs."


@pytest.mark.parametrize("protocol", ["shuffled-timestamps", "caption-then-reason"])
def test_each_ablation_is_a_normal_resumable_run(bench, tmp_path, protocol):
    out = tmp_path / protocol
    options = {"dates": "real"} if protocol == "shuffled-timestamps" else {}  # a constant writes no dates
    first = run(bench.path, "baseline:constant-Stable.", out, protocol=protocol, progress=False, limit=3,
                no_cache=True, protocol_options=options)
    again = run(bench.path, "baseline:constant-Stable.", out, protocol=protocol, progress=False, limit=3,
                no_cache=True, protocol_options=options)
    assert first.done == 3 and again.requests == 0


def test_synthetic_dates_follow_appendix_f_and_label_the_shuffled_images(bench):
    item = next(i for i in bench.items if len(i.images) >= 3)
    n = len(item.images)
    dates = [f"2020-0{k}-15" for k in range(1, n + 1)]
    requests = []

    async def generate(request):
        requests.append(request)
        if request.messages[0].role == "system":
            return Response("```json\n" + json.dumps({f"Image{k}": d for k, d in enumerate(dates, 1)}) + "\n```")
        return Response(f"text {len(requests)}")

    solver = ShuffledTimestamps(seed=3, dates="synthetic")
    solution = asyncio.run(solver.solve(item, bench.image_root, generate, GenerateConfig()))
    dating = requests[n + 1]
    assert "ISO format YYYY-MM-DD" in dating.messages[0].parts[0].text
    user = dating.messages[1].parts[0].text
    assert item.question in user and "Image1: text 1" in user and f"text {n + 1}" in user
    order = shuffled_order(item, 3)
    labels = [p.text for p in requests[-1].messages[0].parts if isinstance(p, TextPart) and "taken on" in p.text]
    assert labels == [f"Image taken on {dates[i]}:" for i in order]
    assert [c.get("stage") for c in solution.calls][-2:] == ["dates", None]
    assert {"timestamps", "timestamps_system"} <= set(solver.templates)


@pytest.mark.parametrize("reply", ['["2020-01-02", "2020-01-02"]', '["2020-02-01", "2020-01-01"]', "2020-01-01",
                                   '["2020-01-01"]', '{"Image1": "2020-01-01", "Image3": "2020-02-01"}',
                                   '["01/02/2020", "2020-03-01"]'])
def test_date_replies_that_break_the_constraints_fail_the_item(reply):
    with pytest.raises(RequestError, match="ascending"):
        parse_dates(reply, 2)
    assert parse_dates('{"Image1": "2019-12-31", "Image2": "2020-01-01"}', 2) == ["2019-12-31", "2020-01-01"]


def test_a_remote_captioner_is_refused_for_credentialed_data_before_any_call(bench):
    solver = CaptionThenReason(captioner="openai+http://203.0.113.7:8000/v1:captioner")
    (side,) = solver.side_models()
    with pytest.raises(InvalidInputError, match="203.0.113.7"):
        side.bind(ModelSession.open(side.uri, use=DataUse(bench.items[0].benchmark, "credentialed")))
    with pytest.raises(InvalidInputError, match="not opened"):
        asyncio.run(side.generate(None, None))


def test_every_item_of_a_phantom_build_shows_distinct_dates_in_visit_order(tmp_path):
    """Over a whole ELTLM phantom build (same-day studies included), the captions never repeat a date
    and sorting the shown images by their dates gives the true visit order (the phantom's timestamps)."""
    data = make_cxr_phantoms(tmp_path, patients=30, seed=2, image_size=64)
    bench = tmp_path / "eltlm"
    assert main(["build", "eltlm", "--mimic-cxr-jpg", str(data.mimic_cxr_jpg), "--qba", str(data.qba),
                 "--no-audit", "--out", str(bench)]) == 0
    truth = {}
    for line in (data.root / "phantom_truth.jsonl").read_text().splitlines():
        row = json.loads(line)
        truth[row["frontal"]] = row["timestamp"]
    items = {i.id: i for i in load(bench).items}
    run(bench, "baseline:constant-Stable.", tmp_path / "run", protocol="shuffled-timestamps", progress=False,
        no_cache=True, protocol_options={"dates": "real"})
    ties = moved = 0
    for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines():
        p = json.loads(line)
        parts = p["prompt"][0]["parts"]
        shown = [(parts[k]["text"].removeprefix("Image taken on ").rstrip(":"), parts[k + 1]["image"])
                 for k in range(0, len(parts) - 1, 2)]
        dates = [d for d, _ in shown]
        assert len(set(dates)) == len(dates)
        by_date = [path for _, path in sorted(shown)]
        visits = [ref.path for ref in items[p["item_id"]].images]
        assert by_date == visits == sorted(visits, key=truth.__getitem__)
        recorded = p["calls"][-1]["recorded_dates"]
        ties += len(set(recorded)) < len(recorded)
        moved += p["calls"][-1]["dates_moved"]
    assert ties > 0 and moved >= ties  # the cohort has same-day studies, and they were moved apart


def test_recorded_dates_are_shown_unchanged_on_request(bench):
    item = next(i for i in bench.items if len(i.images) >= 2)
    tied = item.model_copy(update={"images": tuple(r.model_copy(update={"timestamp": "2150-01-01T08:00:00"})
                                                   for r in item.images)})
    solution = asyncio.run(ShuffledTimestamps(dates="recorded").solve(tied, bench.image_root, recording()[1],
                                                                      GenerateConfig()))
    assert solution.calls[0]["dates"] == ["2150-01-01"] * len(item.images)
    solution = asyncio.run(ShuffledTimestamps(dates="real").solve(tied, bench.image_root, recording()[1],
                                                                  GenerateConfig()))
    assert solution.calls[0]["dates"][:2] == ["2150-01-01", "2150-01-02"]
    assert solution.calls[0]["dates_moved"] == len(item.images) - 1
    with pytest.raises(InvalidInputError, match="dates must be one of"):
        ShuffledTimestamps(dates="shifted")


SEED = Path(__file__).resolve().parents[2] / ".." / "shared" / "seeds" / "003_8b254e24b12f3db8.txt"


@pytest.mark.skipif(not SEED.is_file(), reason="the ELTLM paper text is not in ../shared/seeds")
def test_the_date_prompts_are_table_5_verbatim():
    from medtemporal.prompts import PromptSet

    lines = SEED.read_text(encoding="utf-8").splitlines()
    prompts = PromptSet()
    assert prompts.text("timestamps_system").strip() == lines[377].strip()
    assert lines[402:405] == ["Output example (only JSON):", "", '"2023-01-01"']  # the template's closing lines
    user = "\n".join(lines[381:405]).replace("{question}", "$question").replace(
        "{formatted_image_list}", "$image_list").replace("{temporal_summary}", "$summary")
    assert prompts.text("timestamps").strip() == user.strip()


def test_invented_dates_are_the_default_as_in_the_paper():
    assert ShuffledTimestamps().settings["dates"] == "synthetic"


def _file_ordered(item):
    """``item`` with its images listed latest first (as ``--order file`` may list them), dates kept."""
    return item.model_copy(update={"images": tuple(reversed(item.images))})


def test_a_file_ordered_item_never_shows_dates_against_the_recorded_ones(bench):
    item = _file_ordered(next(i for i in bench.items if len(i.images) >= 3))
    recorded = [ref.timestamp for ref in item.images]
    n = len(item.images)
    for dates in ("real", "recorded"):
        shown = asyncio.run(ShuffledTimestamps(dates=dates).solve(item, bench.image_root, recording()[1],
                                                                  GenerateConfig())).calls[-1]["dates"]
        for a in range(n):
            for b in range(n):
                if recorded[a] < recorded[b]:
                    assert shown[a] < shown[b], (dates, recorded, shown)
    invented = [f"2020-0{k}-15" for k in range(1, n + 1)]
    requests = []

    async def generate(request):
        requests.append(request)
        if request.messages[0].role == "system":
            return Response(json.dumps(invented))
        return Response(f"text {len(requests)}")

    solution = asyncio.run(ShuffledTimestamps(dates="synthetic").solve(item, bench.image_root, generate,
                                                                       GenerateConfig()))
    described = [r.image_paths[0] for r in requests[:n]]
    assert described == [bench.image_root / ref.path for ref in reversed(item.images)]  # in time order
    assert solution.calls[-1]["dates"] == list(reversed(invented))  # the latest image gets the latest date
    assert solution.calls[-1]["chronology"] == list(reversed(range(n)))
