"""The MI-CXR builder on simulated cohorts: determinism, balance, and labels against the truth."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from helpers.micxr import CHANGE_TYPE, check_labels

from medtemporal.benchmark import ITEMS, Manifest, save
from medtemporal.benchmarks.mi_cxr.balance import Caps, null_share
from medtemporal.benchmarks.mi_cxr.pipeline import PAPER_QUOTAS, MiCxrConfig, build_items, plan
from medtemporal.benchmarks.mi_cxr.text import describe, trajectory
from medtemporal.benchmarks.mi_cxr.windows import Track, make_track, windows
from medtemporal.phantoms.trajectory import PatientTruth, change_of
from medtemporal.schema import Item


def truth_of(patients: dict[str, PatientTruth], item: Item, entity: str) -> tuple[str, list[str]]:
    """(presence string like '01101', change type per interval) of ``entity`` in the item's window."""
    visits = patients[item.meta["patient_id"]].visits[item.meta["window"]:][:5]
    states = [v.states[entity] for v in visits]
    presence = "".join("1" if s.present else "0" for s in states)
    return presence, [CHANGE_TYPE[change_of(a, b)] for a, b in zip(states, states[1:])]


@pytest.fixture(scope="module")
def built(timelines):
    return build_items(timelines, MiCxrConfig(max_items=2000, icr_variant=True))


def test_same_timelines_and_seed_give_byte_identical_items(timelines, tmp_path):
    cohort = timelines[:150]
    config = MiCxrConfig(max_items=600, icr_variant=True)
    manifest = Manifest(benchmark="mi-cxr", version="t", licence="synthetic")
    shuffled = list(cohort)
    random.Random(1).shuffle(shuffled)
    first = save(tmp_path / "a", build_items(cohort, config)[0], manifest)
    second = save(tmp_path / "b", build_items(shuffled, config)[0], manifest)
    other = save(tmp_path / "c", build_items(cohort, MiCxrConfig(seed=1, max_items=600, icr_variant=True))[0], manifest)
    assert (first / ITEMS).read_bytes() == (second / ITEMS).read_bytes()
    assert (first / ITEMS).read_bytes() != (other / ITEMS).read_bytes()


def test_pools_filled_in_worker_processes_select_the_same_candidates(timelines):
    config = MiCxrConfig(max_items=600, icr_variant=True)
    one, two = Counter(), Counter()
    found, chosen, letters = plan(timelines[:150], config, one, workers=1)
    assert plan(timelines[:150], config, two, workers=2)[1:] == (chosen, letters)
    assert list(two.items()) == list(one.items()) and len(chosen) > 500


def test_shared_tracks_are_those_of_each_windows_own_findings(timelines):
    for window in windows(timelines[:60], Counter()):
        for track in window.tracks:
            findings = [s.finding(track.entity) for s in window.studies]
            assert track == make_track(track.entity, findings)


def test_2000_items_have_uniform_letters_and_every_qtype(built):
    items, exclusions = built
    main = [i for i in items if i.task != "ICR-V"]
    shortfall = {k: v for k, v in exclusions.items() if k.startswith("quota_shortfall:")}
    assert len(main) == 2000 - sum(shortfall.values()) >= 1950  # what letters and nulls kept level cost
    letters = Counter(i.answer for i in main)
    for letter in "ABCDE":
        assert abs(letters[letter] / len(main) - 0.2) <= 0.03, letters
    assert set(PAPER_QUOTAS) | {"icr_variant"} == {i.subtype for i in items}
    assert Counter(i.subtype for i in items)["icr_variant"] == 400
    assert {i.task for i in items} == {"TEL", "ICR", "GTS", "ICR-V"}
    assert not [i for i in items if i.task == "ICR-V" and i.meta["pattern"] == "all_neg"]
    for item in items:
        assert list(item.options) == list("ABCDE")
        assert len(set(item.options.values())) == 5
        assert [r.label for r in item.images] == ["T1", "T2", "T3", "T4", "T5"]


def test_caps_hold_per_qtype(built):
    items, _ = built
    caps = Caps()
    for qtype in {i.subtype for i in items}:
        group = [i for i in items if i.subtype == qtype]
        n = len(group)
        k = len({i.answer for i in group} - {"E"})  # the letters the data gave (C and D for `multiple_*_2`)
        assert sum(i.answer == "E" for i in group) <= round(n * null_share(caps.null, k)) + 1
        assert max(Counter(i.meta["abnormality"] for i in group).values()) <= max(1, int(n * caps.abnormality)) + 1
        assert sum(i.meta["pattern"] != "mixed" for i in group) <= n * caps.uniform_pattern + 1e-9  # of the items built


def test_answers_follow_the_true_trajectory(built, patients):
    items, _ = built
    for item in items:
        check_labels(item, lambda entity, item=item: truth_of(patients, item, entity))


def test_images_are_the_window_visits_in_order(built, timelines):
    items, _ = built
    by_patient = {t.patient_id: t for t in timelines}
    for item in items[::17]:
        studies = by_patient[item.meta["patient_id"]].studies[item.meta["window"]:][:5]
        assert [r.path for r in item.images] == [s.frontal for s in studies]
        assert [r.visit for r in item.images] == [1, 2, 3, 4, 5]


def test_option_text_is_the_template_of_its_claims(built):
    items, _ = built
    for item in items:
        if item.task != "GTS":
            continue
        for letter, claim in item.meta["option_claims"].items():
            side = next((f for f in ("left", "right", "bilateral") if f" {f} " in item.options[letter]), None)
            track = Track(claim["abnormality"], (), (), side)
            assert item.options[letter] == trajectory(describe(track), claim["changes"])
        if item.subtype == "multi_entity_interval_summary":
            assert len(set(item.meta["abnormalities"])) == 4


def test_meta_records_source_ids_states_and_intervals(built):
    items, exclusions = built
    item = next(i for i in items if i.subtype == "single_emergence" and i.answer != "E")
    assert item.meta["intervals"] == [item.options[item.answer]]
    assert len(item.meta["study_ids"]) == 5 and len(item.meta["states"]) == 5
    assert set(item.meta["states"]) <= {"pos", "neg"}
    assert item.meta["text"] == "template"
    assert exclusions["candidates_not_selected:single_emergence"] > 0


def _entities(item: Item) -> set[str]:
    named = {item.meta["abnormality"], *item.meta.get("abnormalities", [])}
    return named | {s["abnormality"] for s in item.meta.get("statements", [])}


def test_uncertain_or_missing_states_are_excluded_and_counted(timelines):
    first = timelines[0]
    studies = list(first.studies)
    s0 = studies[0]
    findings = [f.model_copy(update={"certain": False}) if f.entity == "pneumothorax" else f for f in s0.findings]
    findings = [f for f in findings if f.entity != "cardiomegaly"]
    studies[0] = s0.model_copy(update={"findings": tuple(findings)})
    changed = first.model_copy(update={"studies": tuple(studies)})
    items, exclusions = build_items([changed], MiCxrConfig(max_items=300))
    assert exclusions["pair_uncertain_state"] == 1 and exclusions["pair_missing_state"] == 1
    window0 = [i for i in items if i.meta["window"] == 0]
    assert window0 and all(not _entities(i) & {"pneumothorax", "cardiomegaly"} for i in window0)
    later = [i for i in items if i.meta["window"] > 0]
    assert any(_entities(i) & {"pneumothorax", "cardiomegaly"} for i in later)
