"""Phantom trajectories: determinism, coverage of every MI-CXR pattern, heavy-tailed gaps."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from medtemporal.phantoms.trajectory import (
    ENTITIES,
    PATTERNS,
    SIDES,
    UNGRADED,
    EntityState,
    change_of,
    sample_gaps,
    simulate_patient,
)


@pytest.fixture(scope="module")
def patients():
    rng = np.random.default_rng(11)
    return [simulate_patient(rng, int(rng.integers(5, 12))) for _ in range(300)]


def presence(truth, entity: str) -> str:
    return "".join("1" if v.states[entity].present else "0" for v in truth.visits)


def test_same_seed_same_patient_and_other_seed_differs():
    a = simulate_patient(np.random.default_rng(5), 8)
    b = simulate_patient(np.random.default_rng(5), 8)
    c = simulate_patient(np.random.default_rng(6), 8)
    assert a == b
    assert a != c


def test_every_pattern_occurs_and_matches_its_presence_string(patients):
    seen = Counter()
    for truth in patients:
        for entity, pattern in truth.patterns.items():
            if entity == "normal cardiac silhouette":
                continue
            seen[pattern] += 1
            p = presence(truth, entity)
            start, flips = PATTERNS[pattern]
            assert p[0] == ("1" if start else "0"), (pattern, p)
            assert sum(a != b for a, b in zip(p, p[1:])) == flips, (pattern, p)
    assert set(seen) == set(PATTERNS)


def test_question_type_windows_arise_within_five_visits(patients):
    windows = Counter()
    for truth in patients:
        for entity in ENTITIES:
            p = presence(truth, entity)
            for i in range(len(p) - 4):
                w = p[i : i + 5]
                ups = sum(w[j : j + 2] == "01" for j in range(4))
                downs = sum(w[j : j + 2] == "10" for j in range(4))
                windows[(ups, downs, w[0])] += 1
    assert windows[(1, 0, "0")] and windows[(0, 1, "1")]  # single emergence / resolution
    assert windows[(2, 1, "0")] and windows[(1, 2, "1")]  # two emergences / two resolutions
    assert windows[(1, 1, "0")] and windows[(1, 1, "1")]  # E->R and R->E
    assert windows[(0, 0, "0")] and windows[(0, 0, "1")]  # persistent absence / presence


def test_severity_laterality_and_changes_are_consistent(patients):
    changes = Counter()
    for truth in patients:
        for i, visit in enumerate(truth.visits):
            for entity, state in visit.states.items():
                if not state.present or entity in UNGRADED:
                    assert state.severity == 0
                else:
                    assert 1 <= state.severity <= 3 and state.severity_word in ("mild", "moderate", "severe")
                if state.present and entity in SIDES:
                    assert state.laterality in SIDES[entity][0]
                else:
                    assert state.laterality is None
                prev = truth.visits[i - 1].states[entity] if i else None
                changes[change_of(prev, state)] += 1
            assert visit.states["normal cardiac silhouette"].present == (not visit.states["cardiomegaly"].present)
        for kind in ("worsening", "improving"):
            for entity in (e for e, p in truth.patterns.items() if p == kind):
                levels = [v.states[entity].severity for v in truth.visits]
                assert levels == sorted(levels, reverse=kind == "improving") and len(set(levels)) > 1
    assert set(changes) == {None, "new", "resolved", "worsened", "improved", "unchanged"}


def test_change_of_names_the_annotated_change():
    absent, small, large = EntityState(False), EntityState(True, 1, "right"), EntityState(True, 3, "right")
    assert [change_of(None, small), change_of(absent, absent)] == [None, None]
    assert [change_of(absent, small), change_of(small, absent)] == ["new", "resolved"]
    assert [change_of(small, large), change_of(large, small), change_of(small, small)] == ["worsened", "improved", "unchanged"]


def test_gaps_are_heavy_tailed_like_the_paper():
    gaps = sample_gaps(np.random.default_rng(0), 20_000)
    assert 1.0 < np.median(gaps) < 2.5  # paper: 1.4-1.9 days
    assert 0.3 < np.mean(gaps < 1) < 0.45 and 0.04 < np.mean(gaps > 180) < 0.1  # Table 14: 37% and 7%
    assert np.percentile(gaps, 90) > 60 and gaps.max() > 1000 and gaps.min() > 0
