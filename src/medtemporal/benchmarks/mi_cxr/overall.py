"""MI-CXR's Overall as the paper's Tables 1 and 15 compute it: a weighted mean of the six column accuracies.

The paper does not say how its Overall is computed. In all 28 published rows (Table 1, ``seeds/000`` lines
187–200; Table 15, lines 957–970) it equals

    (200 · (TEL Single + TEL Multiple + E→R / R→E + GTS Single + GTS Multi) + 317 · ICR) / 1317

to within 0.00084, inside the rounding of three-decimal cells (0.001) (`tests/benchmarks/mi_cxr/test_overall.py`
recomputes every row). 317 is ICR's quota (Table 9); the paper does not say what the 200 of each other
column stands for. The micro average over items, which weights each column by its item count (1,000 TEL
Single items against 317 ICR ones at the paper's quotas), is a different number, so both are reported:
``overall`` ("Overall (micro)") and ``overall:paper`` ("Overall (paper)"), each with its interval from the
same patient bootstrap (`medtemporal.scoring.aggregate`).
"""

from __future__ import annotations

from typing import Mapping

PAPER_OVERALL_WEIGHTS: dict[str, float] = {
    "subtypes:TEL/Single (E/R)": 200,
    "subtypes:TEL/Multiple (E/R)": 200,
    "subtypes:TEL/E\u2192R / R\u2192E": 200,
    "task:ICR": 317,
    "subtypes:GTS/Single Abnormality": 200,
    "subtypes:GTS/Multi Abnormality": 200,
}
"""Score group of each Table 1 column → its weight in the paper's Overall (`ScoreGroups.overall_weights`)."""


def paper_overall(columns: Mapping[str, float]) -> float:
    """The paper's Overall from the six column values, keyed by score group as in `PAPER_OVERALL_WEIGHTS`.

    >>> round(paper_overall(dict(zip(PAPER_OVERALL_WEIGHTS, (0.226, 0.222, 0.243, 0.442, 0.389, 0.292)))), 3)
    0.315
    """
    return sum(w * columns[g] for g, w in PAPER_OVERALL_WEIGHTS.items()) / sum(PAPER_OVERALL_WEIGHTS.values())
