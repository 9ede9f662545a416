"""Blind accuracy per task and subtype, cross-validated by patient.

For every subtype of closed questions (multiple choice, yes/no), three blind
readers are scored against chance:

* **heuristic** — in each fold, the structural rule (`heuristics.RULES`, or
  "always the commonest answer") that does best on the training patients is
  applied to the held-out patients; the name of the rule picked most often is
  reported, with every rule's in-sample accuracy for diagnosis;
* **options** — the TF-IDF text classifier of `classifier`, which ranks the
  options one at a time;
* **question** — `question`'s reader, which sees the question and the options
  together (the question's n-grams crossed with each option's letter), so a
  question that states the answer's evidence (a label history) is read.

Folds are `sklearn.model_selection.GroupKFold` over patients (`Item.cluster`),
so no patient is both learned from and tested on; accuracy comes with a 95%
percentile bootstrap interval over patients (`medtemporal.scoring.ci`). The
best reader (highest accuracy) is reported per subtype. A subtype is
**answerable blind** when a reader's interval lies wholly more than `MARGIN`
above chance (its lower end above chance + 5 points), not when a point
estimate does, and only with at least `MIN_PATIENTS` patients. A benchmark's spec may declare that its paper's own design
makes some subtypes answerable (`BenchmarkSpec.audit_notes`, patterns over
``task/subtype``): those are reported **by design**, with the note, and not
flagged (also where a reader is above chance + 5 points with too few patients
for an interval). Open and ordering answers are skipped with a note.
"""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from fnmatch import fnmatchcase
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
from sklearn.model_selection import GroupKFold

from medtemporal.audit.classifier import classifier_for
from medtemporal.audit.features import SubtypeData
from medtemporal.audit.heuristics import PRIOR, Scores, answers, rules_for, score_table
from medtemporal.audit.question import question_reader_for
from medtemporal.errors import UndefinedMetricWarning, UnknownNameError
from medtemporal.schema import Item
from medtemporal.scoring.ci import cluster_bootstrap

MARGIN = 0.05
"""How far above chance (absolute accuracy) the lower end of a blind reader's interval must lie to flag."""
FOLDS = 5
MIN_ITEMS = 10
"""Subtypes with fewer items, or fewer than two patients, are skipped."""
MIN_PATIENTS = 5
"""Subtypes with fewer patients are measured but never flagged: a bootstrap over two to four patients takes
a handful of values, which is no interval."""
RESAMPLES = 1000
AUDITED = ("choice", "yesno")
READERS = ("heuristic", "classifier", "question")
"""The blind readers, in report order (``classifier``: options one at a time; ``question``: with the question)."""
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


def rule_ties(items: Sequence[Item], table: Table) -> dict[str, list[tuple[str, ...]]]:
    """Each rule's best-scored answers of every item (ties kept, in answer order), computed once per subtype;
    the prior rule's are all of an item's answers."""
    def top(scores: Scores) -> tuple[str, ...]:
        best = max(scores.values())
        return tuple(a for a, v in scores.items() if v == best)

    out = {PRIOR: [answers(it) for it in items]}
    for name in rules_for(items[0].answer_type):
        out[name] = [top(table[it.id][name]) for it in items]
    return out


def _rule_predictions(ties: Mapping[str, list[tuple[str, ...]]], index: Iterable[int],
                      prior: list[str]) -> dict[str, list[str]]:
    """Each rule's pick for the items ``index``: its best answer, ties going to the commonest training answer
    (as `heuristics.pick`); the prior rule's: the commonest training answer the item offers."""
    rank = {a: i for i, a in enumerate(prior)}
    index = list(index)
    return {name: [min(per[i], key=lambda a: rank.get(a, len(rank))) for i in index] for name, per in ties.items()}


def _accuracy(picks: Sequence[str], items: Sequence[Item]) -> float:
    return float(np.mean([p == it.answer for p, it in zip(picks, items)])) if items else 0.0


def heuristic_picks(items: Sequence[Item], folds: int,
                    ties: Mapping[str, list[tuple[str, ...]]]) -> tuple[list[str], Counter[str]]:
    """Held-out picks of the rule chosen on each fold's training patients (``ties``: `rule_ties`), and how often
    each rule was chosen."""
    picks: list[str] = [""] * len(items)
    chosen: Counter[str] = Counter()
    for train, test in _folds(items, folds):
        tr = [items[i] for i in train]
        prior = _prior(tr)
        scores = {name: _accuracy(p, tr) for name, p in _rule_predictions(ties, train, prior).items()}
        best = max(scores, key=lambda k: (scores[k], k == PRIOR))
        chosen[best] += 1
        for i, p in zip(test, _rule_predictions({best: ties[best]}, test, prior)[best]):
            picks[i] = p
    return picks, chosen


def model_picks(data: SubtypeData, folds: int, make: Callable[[SubtypeData], Any]) -> list[str]:
    """Held-out picks of a reader (``make(data)``: a fresh one with ``fit``/``predict`` over item indices)
    fitted on each fold's training patients."""
    picks: list[str] = [""] * len(data.items)
    for train, test in _folds(data.items, folds):
        model = make(data).fit(train)
        for i, p in zip(test, model.predict(test)):
            picks[i] = p
    return picks


def _estimate(picks: Sequence[str], items: Sequence[Item], chance: float) -> dict[str, Any]:
    correct = np.array([p == it.answer for p, it in zip(picks, items)], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        est = cluster_bootstrap(correct, [it.cluster for it in items], resamples=RESAMPLES, rng=0)
    flagged = est.low is not None and est.low > chance + MARGIN
    return {"accuracy": round(est.value, 4), "ci_low": None if est.low is None else round(est.low, 4),
            "ci_high": None if est.high is None else round(est.high, 4), "above_chance": round(est.value - chance, 4),
            "flagged": bool(flagged)}


def audit_subtype(items: Sequence[Item], folds: int = FOLDS) -> dict[str, Any]:
    """The blind-accuracy record of one subtype's items (all of one answer type)."""
    chance = chance_level(items)
    table = score_table(items)
    ties = rule_ties(items, table)
    h_picks, chosen = heuristic_picks(items, folds, ties)
    heuristic = _estimate(h_picks, items, chance)
    heuristic["rule"] = chosen.most_common(1)[0][0]
    prior = _prior(items)
    heuristic["rules_in_sample"] = {k: round(_accuracy(p, items), 4)
                                    for k, p in _rule_predictions(ties, range(len(items)), prior).items()}
    data = SubtypeData(items, table)
    readers = {"heuristic": heuristic,
               "classifier": _estimate(model_picks(data, folds, classifier_for), items, chance),
               "question": _estimate(model_picks(data, folds, question_reader_for), items, chance)}
    best = max(READERS, key=lambda r: (readers[r]["accuracy"], -READERS.index(r)))
    patients = len({it.cluster for it in items})
    return {
        "n": len(items),
        "patients": patients,
        "chance": round(chance, 4),
        **readers,
        "best": best,
        "answerable": patients >= MIN_PATIENTS and any(r["flagged"] for r in readers.values()),
    }


def declared_notes(items: Sequence[Item]) -> dict[str, str]:
    """The ``audit_notes`` of the items' registered benchmark specs (none for an unregistered name)."""
    from medtemporal.benchmark import spec

    notes: dict[str, str] = {}
    for name in sorted({it.benchmark for it in items}):
        try:
            notes.update(spec(name).audit_notes)
        except UnknownNameError:
            continue
    return notes


def note_for(where: str, notes: Mapping[str, str]) -> str | None:
    """The note of the first pattern in ``notes`` that matches ``task/subtype`` ``where``, else None."""
    return next((note for pattern, note in notes.items() if fnmatchcase(where, pattern)), None)


def audit_items(items: Sequence[Item], folds: int = FOLDS, progress: bool = False,
                notes: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The ``audit`` section of a manifest for ``items``.

    Args:
        items: The benchmark's items (any families; grouped by task and subtype).
        folds: Cross-validation folds by patient.
        progress: Show a progress bar.
        notes: ``task/subtype`` pattern → why the paper's design makes it answerable blind (default: the
            benchmark spec's ``audit_notes``).

    Returns:
        ``{"method": ..., "subtypes": [{"task", "subtype", "n", "patients", "chance", "heuristic": {...},
        "classifier": {...}, "question": {...}, "best", "answerable", "by_design", "flagged"}, ...],
        "skipped": {"task/subtype": why}, "flagged": ["task/subtype", ...], "by_design": {"task/subtype": note}}``.
    """
    notes = declared_notes(items) if notes is None else notes
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
        row = {"task": task, "subtype": subtype, **audit_subtype(group, folds)}
        above = any(row[r]["accuracy"] > row["chance"] + MARGIN for r in READERS)  # a point estimate will do here
        row["by_design"] = note_for(where, notes) if row["answerable"] or above else None
        row["flagged"] = row["answerable"] and row["by_design"] is None
        rows.append(row)
    return {
        "method": {
            "folds": f"GroupKFold by patient, {folds} folds",
            "heuristic": "structural rule chosen on the training folds (medtemporal.audit.heuristics)",
            "classifier": "options one at a time: TF-IDF + logistic regression (medtemporal.audit.classifier)",
            "question": "question n-grams crossed with each option's letter, beside the option features "
                        "(medtemporal.audit.question)",
            "ci": f"95% percentile bootstrap over patients, {RESAMPLES} resamples",
            "flag": f"a reader's 95% interval lies above chance + {MARGIN:.0%} (its lower end), with at least "
                    f"{MIN_PATIENTS} patients, unless the benchmark's spec notes that the paper's design makes the "
                    "subtype answerable",
        },
        "subtypes": rows,
        "skipped": skipped,
        "flagged": [f"{r['task']}/{r['subtype']}" for r in rows if r["flagged"]],
        "by_design": {f"{r['task']}/{r['subtype']}": r["by_design"] for r in rows if r["by_design"]},
    }
