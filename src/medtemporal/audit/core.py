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

Readers are fitted on each subtype's items alone (``fit="subtype"``), or on
each task's items across its subtypes (``fit="task"``), for benchmarks whose
subtype names the answer's category: a model never sees the subtype, and a
reader fitted within it would learn the answer from it. Then the task's row
over all its subtypes (`POOLED`) is flagged or not, and the subtype rows are
its breakdown (``breakdown``, never flagged): a reader that favours one
category's wording is right more often on that category's items and less on
the others, which no one who cannot see the category can use. `run_audit`
also returns each item's held-out classifier pick.
"""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass
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
FITS = ("subtype", "task")
"""What a reader is fitted on: one subtype's items, or one task's items across its subtypes."""
POOLED = "(all)"
"""The subtype label of a task's row over all its audited subtypes (``fit="task"``)."""
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


@dataclass(frozen=True)
class _Fitted:
    """Both readers' held-out picks for a list of items, fitted together."""

    table: Table
    heuristic: list[str]
    chosen: Counter[str]
    classifier: list[str]


def _fit(items: Sequence[Item], folds: int) -> _Fitted:
    table = score_table(items)
    heuristic, chosen = heuristic_picks(items, folds, table)
    return _Fitted(table, heuristic, chosen, classifier_picks(items, folds, table))


def _record(items: Sequence[Item], fitted: _Fitted, index: Sequence[int]) -> dict[str, Any]:
    """The blind-accuracy record of ``items[index]`` from picks fitted on ``items``."""
    sub = [items[i] for i in index]
    chance = chance_level(sub)
    heuristic = _estimate([fitted.heuristic[i] for i in index], sub, chance)
    heuristic["rule"] = fitted.chosen.most_common(1)[0][0]
    heuristic["rules_in_sample"] = {k: round(_accuracy(p, sub), 4)
                                    for k, p in _rule_predictions(sub, _prior(sub), fitted.table).items()}
    classifier = _estimate([fitted.classifier[i] for i in index], sub, chance)
    return {
        "n": len(sub),
        "patients": len({it.cluster for it in sub}),
        "chance": round(chance, 4),
        "heuristic": heuristic,
        "classifier": classifier,
        "flagged": heuristic["flagged"] or classifier["flagged"],
    }


@dataclass(frozen=True)
class Audit:
    """The manifest's ``audit`` section and the classifier's held-out pick of every audited item."""

    section: dict[str, Any]
    picks: dict[str, str]
    """Item id → the answer the text classifier gave it, fitted on other patients (`classifier_picks`)."""


def run_audit(items: Sequence[Item], folds: int = FOLDS, progress: bool = False, fit: str = "subtype") -> Audit:
    """Audit ``items``: the ``audit`` section of a manifest and the classifier's held-out picks.

    The section is ``{"method": ..., "subtypes": [{"task", "subtype", "n", "patients", "chance",
    "heuristic": {...}, "classifier": {...}, "flagged"}, ...], "skipped": {"task/subtype": why},
    "flagged": ["task/subtype", ...]}``; with ``fit="task"`` each task with several audited subtypes also
    has a row over all of them (subtype `POOLED`), and its subtype rows are marked ``breakdown``.

    Raises:
        ValueError: ``fit`` is not one of `FITS`.
    """
    if fit not in FITS:
        raise ValueError(f"fit must be one of {', '.join(FITS)}, not {fit!r}")
    groups: dict[tuple[str, str], list[Item]] = defaultdict(list)
    for it in items:
        groups[(it.task, it.subtype)].append(it)
    pools: dict[tuple[str, ...], list[tuple[str, list[Item]]]] = defaultdict(list)
    skipped = {}
    for task, subtype in sorted(groups):
        group = groups[(task, subtype)]
        kinds = {it.answer_type for it in group}
        where = f"{task}/{subtype}"
        if not kinds <= set(AUDITED) or len(kinds) > 1 or any(not isinstance(it.answer, str) for it in group):
            skipped[where] = f"{'/'.join(sorted(kinds))} answers have no blind accuracy to measure"
        elif len(group) < MIN_ITEMS or len({it.cluster for it in group}) < 2:
            skipped[where] = f"too few items ({len(group)}) or patients to cross-validate"
        else:
            key = (task, subtype) if fit == "subtype" else (task, group[0].answer_type)
            pools[key].append((subtype, group))
    keys: Iterable[tuple[str, ...]] = list(pools)
    if progress:
        from tqdm import tqdm

        keys = tqdm(keys, desc="audit", unit=fit, leave=False)
    rows, picks = [], {}
    for key in keys:
        members = pools[key]
        pool = [it for _, group in members for it in group]
        fitted = _fit(pool, folds)
        picks.update((it.id, p) for it, p in zip(pool, fitted.classifier))
        start = 0
        for subtype, group in members:
            row = {"task": key[0], "subtype": subtype, **_record(pool, fitted, range(start, start + len(group)))}
            if len(members) > 1:  # a reader that never sees the subtype is judged over the whole task
                row.update(flagged=False, breakdown=True)
            rows.append(row)
            start += len(group)
        if len(members) > 1:
            rows.append({"task": key[0], "subtype": POOLED, **_record(pool, fitted, range(len(pool)))})
    section = {
        "method": {
            "folds": f"GroupKFold by patient, {folds} folds",
            "heuristic": "structural rule chosen on the training folds (medtemporal.audit.heuristics)",
            "classifier": "TF-IDF of question and options + logistic regression (medtemporal.audit.classifier)",
            "fit": fit,
            "ci": f"95% percentile bootstrap over patients, {RESAMPLES} resamples",
            "flag": f"more than {MARGIN:.0%} above chance with the interval above chance",
        },
        "subtypes": rows,
        "skipped": skipped,
        "flagged": [f"{r['task']}/{r['subtype']}" for r in rows if r["flagged"]],
    }
    return Audit(section, picks)


def audit_items(items: Sequence[Item], folds: int = FOLDS, progress: bool = False,
                fit: str = "subtype") -> dict[str, Any]:
    """The ``audit`` section of a manifest for ``items`` (see `run_audit`)."""
    return run_audit(items, folds, progress, fit).section
