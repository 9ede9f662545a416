"""MI-CXR test helpers: timelines straight from the phantom trajectory model, and label checks by rule.

The label checks re-derive every answer from a presence string and change
types with code independent of the builder, so a builder bug cannot hide in both.
"""

from __future__ import annotations

import numpy as np

from medtemporal.benchmarks.mi_cxr.text import INTERVALS
from medtemporal.phantoms.trajectory import ENTITIES, PatientTruth, change_of, simulate_patient
from medtemporal.schema import Finding, Study, Timeline

CHANGE_TYPE = {"new": "emergence", "resolved": "resolution", "worsened": "worsening", "improved": "improvement",
               "unchanged": "unchanged", None: "absent"}
"""The phantom's annotated change word (None: absent at both visits) → the builder's change type."""


def expected_tel(qtype: str, presence: str) -> str:
    """The correct option text of a TEL item from a presence string like '01101' ('' for the null option)."""
    ups = [i for i in range(4) if presence[i:i + 2] == "01"]
    downs = [i for i in range(4) if presence[i:i + 2] == "10"]
    if qtype in ("emergence_to_resolution", "resolution_to_emergence"):
        first, then = (ups, downs) if qtype == "emergence_to_resolution" else (downs, ups)
        for f in first:
            later = [t for t in then if t > f]
            if later:
                return f"T{f + 2}, T{later[0] + 2}"
        return ""
    events = ups if "emergence" in qtype else downs
    k = 1 if qtype.endswith("_2") else 0
    return INTERVALS[events[k]] if len(events) > k else ""


def check_labels(item, truth) -> None:
    """Assert that ``item``'s answer is the one option true of ``truth(entity) -> (presence, change types)``."""
    if item.task == "TEL":
        presence, _ = truth(item.meta["abnormality"])
        want = expected_tel(item.subtype, presence)
        assert (item.options[item.answer] if item.answer != "E" else "") == want, (item.subtype, presence, item.options)
        return
    if item.subtype == "icr_multi_abn":
        truths = [s["claim"] == truth(s["abnormality"])[1][INTERVALS.index(s["interval"])] for s in item.meta["statements"]]
    elif item.subtype == "icr_variant":
        actual = truth(item.meta["abnormality"])[1][INTERVALS.index(item.meta["intervals"][0])]
        truths = [item.meta["claims"][x] == actual for x in "ABCD"]
    else:
        claims = item.meta["option_claims"]
        truths = [claims[x]["changes"] == truth(claims[x]["abnormality"])[1] for x in "ABCD"]
    assert sum(truths) <= 1, (item.subtype, item.options, truths)
    assert item.answer == ("ABCD"[truths.index(True)] if any(truths) else "E"), (item.options, truths)


def truth_timeline(patient: str, truth: PatientTruth) -> Timeline:
    """A timeline whose findings are exactly ``truth`` (every entity certain at every visit)."""
    studies = []
    for i, visit in enumerate(truth.visits):
        findings = []
        for entity in ENTITIES:
            state = visit.states[entity]
            prev = truth.visits[i - 1].states[entity] if i else None
            change = change_of(prev, state)
            findings.append(
                Finding(
                    entity=entity,
                    present=state.present,
                    laterality=state.laterality,
                    severity=state.severity_word,
                    changes=(change,) if change else (),
                )
            )
        sid = f"s{50000000 + 1000 * int(patient[1:]) + i}"
        studies.append(
            Study(
                patient_id=patient,
                study_id=sid,
                timestamp=f"2150-01-{1 + i:02d}T08:00:00",
                order=i,
                frontal=f"files/p10/{patient}/{sid}/{sid}.jpg",
                findings=tuple(findings),
            )
        )
    return Timeline(patient_id=patient, source="phantom", licence="synthetic", studies=tuple(studies))


def make_patients(n: int, seed: int = 0, visits: tuple[int, int] = (5, 9)) -> dict[str, PatientTruth]:
    """``n`` simulated patients with 5–8 visits each, by patient id."""
    rng = np.random.default_rng(seed)
    return {f"p{10000000 + k}": simulate_patient(rng, int(rng.integers(*visits))) for k in range(n)}


def make_timelines(patients: dict[str, PatientTruth]) -> list[Timeline]:
    """The timelines of ``patients`` (findings exactly their truth)."""
    return [truth_timeline(pid, truth) for pid, truth in patients.items()]
