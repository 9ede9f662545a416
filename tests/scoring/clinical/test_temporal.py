"""Temporal Entity F1 against Libra's definition (libra/eval/temporal_f1.py), case by case."""

from __future__ import annotations

import numpy as np
import pytest

from medtemporal.schema import Item
from medtemporal.scoring import metric
from medtemporal.scoring.clinical.temporal import EPSILON, KEYWORDS, temporal_entities, temporal_entity_f1_one

E = EPSILON


def f1(tp: int, n_out: int, n_ref: int) -> float:
    """Libra's per-sample formula (temporal_f1.py:94-101) for a non-empty reference set."""
    p = (tp + E) / (n_out + E)
    r = (tp + E) / (n_ref + E)
    return 2 * p * r / (p + r + E)


CASES = [
    # (rule, reference, output, entities of the reference, entities of the output, expected F1)
    ("both without entities: 1.0", "Heart size is normal.", "No acute process.", set(), set(), 1.0),
    ("both empty strings: 1.0", "", "", set(), set(), 1.0),
    ("reference without entities, output with: epsilon", "Lungs are clear.", "New effusion.", set(), {"new"}, E),
    ("output without entities, reference with: (0+e)/(0+e) precision", "Stable effusion.", "Effusion.",
     {"stable"}, set(), f1(0, 0, 1)),
    ("the same set: 2/(2+e)", "Stable effusion, new opacity.", "New opacity; effusion is stable.",
     {"stable", "new"}, {"new", "stable"}, f1(2, 2, 2)),
    ("half overlap", "Effusion is new; heart unchanged.", "Stable cardiomegaly, new effusion.",
     {"new", "unchanged"}, {"stable", "new"}, f1(1, 2, 2)),
    ("no overlap", "Improved edema.", "Worsened edema.", {"improved"}, {"worsened"}, f1(0, 1, 1)),
    ("a set: repeats count once", "New effusion.", "New effusion, new opacity, new nodule.", {"new"}, {"new"},
     f1(1, 1, 1)),
    ("targets ignored: same word, other finding", "New pneumothorax.", "New effusion.", {"new"}, {"new"}, f1(1, 1, 1)),
    ("whole words only: renewed, news, unstable, stables", "Renewed news: unstable stables.", "Stable.",
     set(), {"stable"}, E),
    ("no stemming: 'worsens' and 'improves' are not keywords", "Effusion worsens.", "Edema improves.",
     set(), set(), 1.0),
    ("case folded", "NEW EFFUSION.", "new effusion.", {"new"}, {"new"}, f1(1, 1, 1)),
    ("hyphens and underscores become spaces", "Re-expanded lung, new_onset edema.", "Expanded lung.",
     {"expanded", "new"}, {"expanded"}, f1(1, 1, 2)),
    ("other characters are deleted, joining the word", "Im*proved edema.", "Improved edema.",
     {"improved"}, {"improved"}, f1(1, 1, 1)),
    ("punctuation kept by the cleaner still bounds words", "(stable),worse;new:larger.", "stable",
     {"stable", "worse", "new", "larger"}, {"stable"}, f1(1, 1, 4)),
    ("newlines are spaces", "Stable\nnew\n\nresolved", "resolved", {"stable", "new", "resolved"}, {"resolved"},
     f1(1, 1, 3)),
    ("Libra's placeholders vanish", "(___, __, __) stable", "stable", {"stable"}, {"stable"}, f1(1, 1, 1)),
    ("the last keyword of the list", "Unaltered position.", "Unaltered.", {"unaltered"}, {"unaltered"}, f1(1, 1, 1)),
]


@pytest.mark.parametrize(("rule", "reference", "output", "ref_set", "out_set", "expected"), CASES,
                         ids=[c[0] for c in CASES])
def test_temporal_entity_f1_follows_the_definition(rule: str, reference: str, output: str, ref_set: set[str],
                                                     out_set: set[str], expected: float) -> None:
    assert temporal_entities(reference) == ref_set
    assert temporal_entities(output) == out_set
    assert temporal_entity_f1_one(reference, output) == pytest.approx(expected, rel=1e-12, abs=0)


def test_the_keyword_list_is_libras() -> None:
    assert len(KEYWORDS) == 44
    assert {"bigger", "change", "cleared", "new", "stable", "unchanged", "worsening", "unaltered"} <= KEYWORDS
    assert all(temporal_entities(word) == {word} for word in KEYWORDS)


def _item(reference: str) -> Item:
    return Item.create(benchmark="x", task="report", subtype="report", images=[], question="Write the findings.",
                       answer_type="open", answer=reference, reference=reference)


def test_the_metric_is_the_mean_of_per_sample_f1_and_an_empty_answer_scores_0_beside_libras_1() -> None:
    """The headline scores an empty or missing answer 0; Libra's formula as released (1.0 where the reference names
    no change) is the labelled metric beside it, equal on every answer that has text."""
    items = [_item("Stable effusion."), _item("Lungs are clear."), _item("New edema, improved effusion."),
             _item("Lungs are clear."), _item("Lungs are clear."), _item("Lungs are clear.")]
    answers = ["Effusion, stable.", None, "New edema.", "", "  \n", "No."]
    m, libra = metric("temporal_entity_f1"), metric("temporal_entity_f1_libra")
    stats = m.per_sample(items, answers, [None] * 6)
    assert stats.tolist() == pytest.approx([f1(1, 1, 1), 0.0, f1(1, 1, 2), 0.0, 0.0, 1.0])
    assert libra.per_sample(items, answers, [None] * 6).tolist() == pytest.approx([f1(1, 1, 1), 1.0, f1(1, 1, 2),
                                                                                    1.0, 1.0, 1.0])
    assert float(m.reduce(stats.reshape(-1, 1).sum(axis=0), np.float64(6))) == pytest.approx(stats.mean())
    assert m.higher_is_better and m.aggregation == "mean"
