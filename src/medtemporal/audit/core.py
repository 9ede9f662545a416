"""Blind accuracy per task and subtype, cross-validated by patient.

For every subtype of closed questions (multiple choice, yes/no), two blind
readers are scored against chance:

* **heuristic** — in each fold, the structural rule (`heuristics.RULES`, or
  "always the commonest answer") that does best on the training patients is
  applied to the held-out patients; the name of the rule picked most often is
  reported, with every rule's in-sample accuracy for diagnosis;
* **classifier** — the TF-IDF text classifier of `classifier`, fitted on the
  training patients and scored on the held-out ones.

Folds are `sklearn.model_selection.GroupKFold` over patients (`Item.cluster`),
so no patient is both learned from and tested on; accuracy comes with a 95%
percentile bootstrap interval over patients (`medtemporal.scoring.ci`). A
subtype is **flagged** when a reader beats chance by more than `MARGIN` and its
interval lies above chance. Open and ordering answers are skipped with a note.
"""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from sklearn.model_selection import GroupKFold

from medtemporal.audit.classifier import classifier_for
from medtemporal.audit.heuristics import PRIOR, Scores, answers, pick, rules_for, score_table
from medtemporal.errors import UndefinedMetricWarning
from medtemporal.schema import Item
from medtemporal.scoring.ci import cluster_bootstrap

MARGIN = 0.05
"""How far above chance (absolute accuracy) a blind reader may get before its subtype is flagged."""
FOLDS = 5
MIN_ITEMS = 10
"""Subtypes with fewer items, or fewer than two patients, are skipped."""
RESAMPLES = 1000
AUDITED = ("choice", "yesno")
Table = Mapping[str, Mapping[str, Scores]]


def chance_level(items: Sequence[Item]) -> float:
    """Mean over items of one over the number of answers."""
    return float(np.mean([1.0 / len(answers(it)) for it in items]))


def _folds(items: Sequence[Item], folds: int) -> list[tuple[np.ndarray, np.ndarray]]:
    groups = [it.cluster for it in items]
    n = min(folds, len(set(groups)))
    return list(GroupKFold(n_splits=n).split(np.zeros(len(items)), groups=groups))


def _prior(items: Iterable[Item]) -> list[str]:
    counts = Counter(str(it.answer) for it in items)
    return [a for a, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def _rule_predictions(items: Sequence[Item], prior: list[str], table: Table) -> dict[str, list[str]]:
    """Each rule's pick for every item (the prior rule: the commonest training answer the item offers)."""
    out = {PRIOR: [pick({a: 0.0 for a in answers(it)}, prior) for it in items]}
    for name in rules_for(items[0].answer_type):
        out[name] = [pick(table[it.id][name], prior) for it in items]
    return out


def _accuracy(picks: Sequence[str], items: Sequence[Item]) -> float:
    return float(np.mean([p == it.answer for p, it in zip(picks, items)])) if items else 0.0


def heuristic_picks(items: Sequence[Item], folds: int, table: Table) -> tuple[list[str], Counter[str]]:
    """Held-out picks of the rule chosen on each fold's training patients, and how often each rule was chosen."""
    picks: list[str] = [""] * len(items)
    chosen: Counter[str] = Counter()
    for train, test in _folds(items, folds):
        tr = [items[i] for i in train]
        prior = _prior(tr)
        scores = {name: _accuracy(p, tr) for name, p in _rule_predictions(tr, prior, table).items()}
        best = max(scores, key=lambda k: (scores[k], k == PRIOR))
        chosen[best] += 1
        te = [items[i] for i in test]
        for i, p in zip(test, _rule_predictions(te, prior, table)[best]):
            picks[i] = p
    return picks, chosen


def classifier_picks(items: Sequence[Item], folds: int, table: Table) -> list[str]:
    """Held-out picks of the text classifier fitted on each fold's training patients."""
    picks: list[str] = [""] * len(items)
    for train, test in _folds(items, folds):
        model = classifier_for(items[0].answer_type, table).fit([items[i] for i in train])
        for i, p in zip(test, model.predict([items[i] for i in test])):
            picks[i] = p
    return picks


def _estimate(picks: Sequence[str], items: Sequence[Item], chance: float) -> dict[str, Any]:
    correct = np.array([p == it.answer for p, it in zip(picks, items)], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        est = cluster_bootstrap(correct, [it.cluster for it in items], resamples=RESAMPLES, rng=0)
    flagged = est.value - chance > MARGIN and est.low is not None and est.low > chance
    return {"accuracy": round(est.value, 4), "ci_low": None if est.low is None else round(est.low, 4),
            "ci_high": None if est.high is None else round(est.high, 4), "above_chance": round(est.value - chance, 4),
            "flagged": bool(flagged)}


def audit_subtype(items: Sequence[Item], folds: int = FOLDS) -> dict[str, Any]:
    """The blind-accuracy record of one subtype's items (all of one answer type)."""
    chance = chance_level(items)
    table = score_table(items)
    h_picks, chosen = heuristic_picks(items, folds, table)
    heuristic = _estimate(h_picks, items, chance)
    heuristic["rule"] = chosen.most_common(1)[0][0]
    prior = _prior(items)
    heuristic["rules_in_sample"] = {k: round(_accuracy(p, items), 4) for k, p in _rule_predictions(items, prior, table).items()}
    classifier = _estimate(classifier_picks(items, folds, table), items, chance)
    return {
        "n": len(items),
        "patients": len({it.cluster for it in items}),
        "chance": round(chance, 4),
        "heuristic": heuristic,
        "classifier": classifier,
        "flagged": heuristic["flagged"] or classifier["flagged"],
    }


def audit_items(items: Sequence[Item], folds: int = FOLDS, progress: bool = False) -> dict[str, Any]:
    """The ``audit`` section of a manifest for ``items``.

    Returns:
        ``{"method": ..., "subtypes": [{"task", "subtype", "n", "patients", "chance",
        "heuristic": {...}, "classifier": {...}, "flagged"}, ...], "skipped": {"task/subtype": why},
        "flagged": ["task/subtype", ...]}``.
    """
    groups: dict[tuple[str, str], list[Item]] = defaultdict(list)
    for it in items:
        groups[(it.task, it.subtype)].append(it)
    rows, skipped = [], {}
    keys = sorted(groups)
    if progress:
        from tqdm import tqdm

        keys = tqdm(keys, desc="audit", unit="subtype", leave=False)
    for task, subtype in keys:
        group = groups[(task, subtype)]
        kinds = {it.answer_type for it in group}
        where = f"{task}/{subtype}"
        if not kinds <= set(AUDITED) or len(kinds) > 1 or any(not isinstance(it.answer, str) for it in group):
            skipped[where] = f"{'/'.join(sorted(kinds))} answers have no blind accuracy to measure"
            continue
        if len(group) < MIN_ITEMS or len({it.cluster for it in group}) < 2:
            skipped[where] = f"too few items ({len(group)}) or patients to cross-validate"
            continue
        rows.append({"task": task, "subtype": subtype, **audit_subtype(group, folds)})
    return {
        "method": {
            "folds": f"GroupKFold by patient, {folds} folds",
            "heuristic": "structural rule chosen on the training folds (medtemporal.audit.heuristics)",
            "classifier": "TF-IDF of question and options + logistic regression (medtemporal.audit.classifier)",
            "ci": f"95% percentile bootstrap over patients, {RESAMPLES} resamples",
            "flag": f"more than {MARGIN:.0%} above chance with the interval above chance",
        },
        "subtypes": rows,
        "skipped": skipped,
        "flagged": [f"{r['task']}/{r['subtype']}" for r in rows if r["flagged"]],
    }
