"""TEL answers by rule, and the options of the interval and pair forms."""

from __future__ import annotations

import random

import pytest

from medtemporal.benchmarks.mi_cxr.tel import ALL_PAIRS, emergences, resolutions, sequences, target, tel_draft
from medtemporal.benchmarks.mi_cxr.windows import Track

P, N = True, False


@pytest.mark.parametrize(
    "qtype, present, want",
    [
        ("single_emergence", [N, N, N, N, P], 3),
        ("single_emergence", [P, P, P, P, P], None),
        ("single_emergence", [N, P, N, P, P], "skip"),
        ("single_resolution", [P, N, N, N, N], 0),
        ("multiple_emergence_1", [N, P, N, P, N], 0),
        ("multiple_emergence_2", [N, P, N, P, N], 2),
        ("multiple_emergence_2", [N, N, P, P, P], None),
        ("multiple_emergence_1", [N, N, P, P, P], 1),
        ("multiple_resolution_1", [P, P, P, N, N], 2),
        ("multiple_emergence_1", [N, N, N, N, N], None),
        ("multiple_resolution_2", [P, N, P, P, N], 3),
        ("emergence_to_resolution", [N, P, N, N, N], (2, 3)),
        ("emergence_to_resolution", [P, N, P, N, N], (3, 4)),
        ("emergence_to_resolution", [P, P, N, N, N], None),
        ("resolution_to_emergence", [P, N, N, P, P], (2, 4)),
        ("resolution_to_emergence", [N, N, P, P, P], None),
    ],
)
def test_target_by_rule(qtype, present, want):
    got = target(qtype, present)
    if want == "skip":
        assert got not in (None, 0, 1, 2, 3) and not isinstance(got, tuple)
    else:
        assert got == want


def test_pair_distractors_are_never_another_valid_sequence():
    track = Track("pleural effusion", (N, P, N, P, N), ("emergence", "resolution", "emergence", "resolution"))
    valid = set(sequences(emergences(track.present), resolutions(track.present)))
    assert valid == {(2, 3), (4, 5)}
    for seed in range(40):
        draft = tel_draft("emergence_to_resolution", track, "C", random.Random(seed))
        assert draft.options["C"] == "T2, T3" and draft.answer == "C"
        others = [draft.options[x] for x in "ABD"]
        assert "T4, T5" not in others and len(set(others)) == 3
        assert all(tuple(int(v[1]) for v in o.split(", ")) in ALL_PAIRS and not o.startswith("T1,") for o in others)
        assert draft.options["E"] == "There is no sequential emergence to resolution"


def test_interval_options_are_fixed_and_wording_matches_the_release():
    track = Track("sub-diaphragmatic air", (N, N, P, P, P), ("absent", "emergence", "unchanged", "unchanged"))
    draft = tel_draft("single_emergence", track, "B", random.Random(0))
    assert draft.question == "During which interval does sub-diaphragmatic air new appearance occur?"
    assert draft.options == {"A": "T1 \u2192 T2", "B": "T2 \u2192 T3", "C": "T3 \u2192 T4", "D": "T4 \u2192 T5",
                             "E": "There is no new appearance of sub-diaphragmatic air"}
    with pytest.raises(ValueError):
        tel_draft("single_emergence", track, "C", random.Random(0))
