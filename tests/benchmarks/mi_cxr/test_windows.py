"""Five-visit windows, their exclusions, and change types between visits."""

from __future__ import annotations

from collections import Counter

import pytest

from medtemporal.benchmarks.mi_cxr.windows import interval_change, windows
from medtemporal.schema import Finding, Study, Timeline


def _timeline(n: int, *, orders=None, frontal=True, certain=True) -> Timeline:
    studies = []
    for i in range(n):
        findings = (
            Finding(entity="pleural effusion", present=i % 2 == 1, certain=certain or i != 2, laterality="left"),
            Finding(entity="pneumothorax", present=False),
        )
        studies.append(Study(patient_id="p1", study_id=f"s{i}", order=orders[i] if orders else i,
                             frontal=f"files/p1/s{i}.jpg" if frontal or i != 3 else None, findings=findings))
    return Timeline(patient_id="p1", source="t", licence="synthetic", studies=tuple(studies))


def test_stride_one_windows_with_complete_tracks():
    found = list(windows([_timeline(7)], Counter()))
    assert [w.start for w in found] == [0, 1, 2]
    w = found[0]
    assert [t.entity for t in w.tracks] == ["pleural effusion", "pneumothorax"]
    assert w.track("pleural effusion").changes == ("emergence", "resolution", "emergence", "resolution")
    assert w.track("pleural effusion").laterality == "left" and w.track("pneumothorax").pattern == "all_neg"


def test_gaps_missing_frontals_short_timelines_and_uncertain_states_are_counted():
    ex: Counter[str] = Counter()
    assert [w.start for w in windows([_timeline(6, orders=[0, 1, 2, 3, 4, 6])], ex)] == [0]
    assert ex["window_not_contiguous"] == 1
    assert list(windows([_timeline(5, frontal=False)], ex)) == [] and ex["window_missing_frontal"] == 1
    assert list(windows([_timeline(4)], ex)) == [] and ex["timeline_too_short"] == 1
    found = list(windows([_timeline(5, certain=False)], ex))
    assert [t.entity for t in found[0].tracks] == ["pneumothorax"] and ex["pair_uncertain_state"] == 1
    assert ex["pair_not_annotated"] == 10 * 2  # the ten other Table 10 entities, in the two windows examined


@pytest.mark.parametrize(
    "before, after, want",
    [
        ((False, None, ()), (False, None, ()), "absent"),
        ((False, None, ()), (True, "small", ("new",)), "emergence"),
        ((True, "small", ()), (False, None, ("resolved",)), "resolution"),
        ((True, "mild", ()), (True, "severe", ()), "worsening"),
        ((True, "moderate", ()), (True, "mild", ("improved",)), "improvement"),
        ((True, None, ()), (True, None, ("Unchanged",)), "unchanged"),
        ((True, "mild", ()), (True, "severe", ("improved",)), "persistent"),
        ((True, None, ()), (True, None, ()), "persistent"),
    ],
)
def test_interval_change(before, after, want):
    make = lambda p, sev, ch: Finding(entity="x", present=p, severity=sev, changes=ch)  # noqa: E731
    assert interval_change(make(*before), make(*after)) == want
