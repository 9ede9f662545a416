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

For every subtype of open questions (a free-text answer), two: **heuristic**,
always the commonest answer of the training patients, and **question**, the
commonest answer the same question text (its template: a generator's questions
are template instances, "what is the level of the edema?") had among the
training patients, else the commonest; an answer is right when it equals the
item's, case and spaces folded. Chance is one over the subtype's distinct
answers (a uniform guess among the answers it uses): a question that names
what it asks about ("the edema") and so narrows its answer is what the
question reader detects.

Folds are `sklearn.model_selection.GroupKFold` over patients (`Item.cluster`),
so no patient is both learned from and tested on; accuracy comes with a 95%
percentile bootstrap interval over patients (`medtemporal.scoring.ci`). The
best reader (highest accuracy) is reported per subtype. A subtype is
**answerable blind** when a reader's interval lies wholly more than `MARGIN`
above chance (its lower end above chance + 5 points), not when a point
estimate does, and only with at least `MIN_PATIENTS` patients. A benchmark's spec may declare that its paper's own design
makes some subtypes answerable (`AuditRules.notes`, patterns over
``task/subtype``): those are reported **by design**, with the note, and not
flagged (also where a reader is above chance + 5 points with too few patients
for an interval). Ordering answers are skipped with a note. Where the spec names text-only baselines for open
answers, which have no chance level (`AuditRules.baselines`: e.g. the prior report copied), the section holds
what they score as ``text_floor`` (`medtemporal.audit.floor`).

Readers are fitted on each subtype's items alone (``fit="subtype"``, the
default), or on each task's items across its subtypes (``fit="task"``, a
family's `AuditRules.fit`), for benchmarks whose subtype names the
answer's category: a model never sees the subtype, and a reader fitted within
it would learn the answer from it. Then the task's row over all its subtypes
(`POOLED`) is judged as above, and so is each subtype row of that fit (marked
``breakdown``): a reader that never saw the subtype and still clears chance + 5
on one subtype's items has found wording that gives those answers away.
`run_audit` also returns each item's held-out pick by the best reader of the
row its readers were fitted for.
"""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

import numpy as np
from sklearn.model_selection import GroupKFold

from medtemporal.audit.classifier import classifier_for
from medtemporal.audit.features import SubtypeData
from medtemporal.audit.heuristics import PRIOR, Scores, answers, commonest, rules_for, score_table
from medtemporal.audit.question import question_reader_for
from medtemporal.errors import UndefinedMetricWarning, UnknownNameError
from medtemporal.schema import Item
from medtemporal.scoring.ci import cluster_bootstrap
from medtemporal.scoring.metrics import fold, is_correct
from medtemporal.progress import progress_bar

MARGIN = 0.05
"""How far above chance (absolute accuracy) the lower end of a blind reader's interval must lie to flag."""
FOLDS = 5
MIN_ITEMS = 10
"""Subtypes with fewer items, or fewer than two patients, are skipped."""
MIN_PATIENTS = 5
"""Subtypes with fewer patients are measured but never flagged: a bootstrap over two to four patients takes
a handful of values, which is no interval."""
RESAMPLES = 1000
AUDITED = ("choice", "yesno", "open")
READERS = ("heuristic", "classifier", "question")
"""The blind readers, in report order (``classifier``: options one at a time; ``question``: with the question;
open answers have no ``classifier``)."""
FITS = ("subtype", "task")
"""What the readers are fitted on: one subtype's items, or one task's items across its subtypes."""
POOLED = "(all)"
"""The subtype label of a task's row over all its audited subtypes (``fit="task"``)."""
Table = Mapping[str, Mapping[str, Scores]]


def chance_level(items: Sequence[Item]) -> float:
    """Mean over items of one over the number of answers (for open answers: one over the distinct answers of
    ``items``)."""
    if items and items[0].answer_type == "open":
        return 1.0 / len({fold(it.answer) for it in items})
    return float(np.mean([1.0 / len(answers(it)) for it in items]))


def _folds(items: Sequence[Item], folds: int) -> list[tuple[np.ndarray, np.ndarray]]:
    groups = [it.cluster for it in items]
    n = min(folds, len(set(groups)))
    return list(GroupKFold(n_splits=n).split(np.zeros(len(items)), groups=groups))


def _prior(items: Iterable[Item]) -> list[str]:
    return commonest(str(it.answer) for it in items)


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
    """Each rule's pick for the items ``index``: its best answer, ties going to the commonest training answer;
    the prior rule's: the commonest training answer the item offers."""
    rank = {a: i for i, a in enumerate(prior)}
    index = list(index)
    return {name: [min(per[i], key=lambda a: rank.get(a, len(rank))) for i in index] for name, per in ties.items()}


def _accuracy(picks: Sequence[str], items: Sequence[Item]) -> float:
    return float(np.mean([is_correct(it, p) for p, it in zip(picks, items)])) if items else 0.0


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
    correct = np.array([is_correct(it, p) for p, it in zip(picks, items)], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        est = cluster_bootstrap(correct, [it.cluster for it in items], resamples=RESAMPLES, rng=0)
    flagged = est.low is not None and est.low > chance + MARGIN
    return {"accuracy": round(est.value, 4), "ci_low": None if est.low is None else round(est.low, 4),
            "ci_high": None if est.high is None else round(est.high, 4), "above_chance": round(est.value - chance, 4),
            "flagged": bool(flagged)}


@dataclass(frozen=True)
class _Fitted:
    """Every reader's held-out picks for a list of items (one subtype's, or one task's), fitted together."""

    ties: Mapping[str, list[tuple[str, ...]]]
    chosen: Counter[str]
    picks: Mapping[str, list[str]]
    """Reader (`READERS`) → its held-out pick of every item."""


def open_picks(items: Sequence[Item], folds: int) -> tuple[list[str], list[str]]:
    """Held-out picks of the two open-answer readers: the training patients' commonest answer, and the commonest
    answer of the item's question text among them (else the commonest)."""
    prior: list[str] = [""] * len(items)
    question: list[str] = [""] * len(items)
    for train, test in _folds(items, folds):
        by_question: dict[str, list[str]] = defaultdict(list)
        for i in train:
            by_question[fold(items[i].question)].append(fold(items[i].answer))
        top = commonest(fold(items[i].answer) for i in train)[0]
        for i in test:
            seen = by_question.get(fold(items[i].question))
            prior[i], question[i] = top, commonest(seen)[0] if seen else top
    return prior, question


def _fit(items: Sequence[Item], folds: int) -> _Fitted:
    if items[0].answer_type == "open":
        prior, question = open_picks(items, folds)
        return _Fitted({}, Counter({PRIOR: 1}), {"heuristic": prior, "question": question})
    table = score_table(items)
    ties = rule_ties(items, table)
    heuristic, chosen = heuristic_picks(items, folds, ties)
    data = SubtypeData(items, table)
    return _Fitted(ties, chosen, {"heuristic": heuristic,
                                  "classifier": model_picks(data, folds, classifier_for),
                                  "question": model_picks(data, folds, question_reader_for)})


def _record(items: Sequence[Item], fitted: _Fitted, index: Sequence[int]) -> dict[str, Any]:
    """The blind-accuracy record of ``items[index]`` from the readers ``fitted`` on ``items``."""
    sub = [items[i] for i in index]
    chance = chance_level(sub)
    readers: dict[str, Any] = {r: _estimate([fitted.picks[r][i] for i in index], sub, chance) if r in fitted.picks
                               else None for r in READERS}
    heuristic = readers["heuristic"]
    heuristic["rule"] = fitted.chosen.most_common(1)[0][0]
    in_sample = (_rule_predictions(fitted.ties, index, _prior(sub)) if fitted.ties else
                 {PRIOR: [commonest(fold(it.answer) for it in sub)[0]] * len(sub)})
    heuristic["rules_in_sample"] = {k: round(_accuracy(p, sub), 4) for k, p in in_sample.items()}
    present = [r for r in READERS if readers[r] is not None]
    best = max(present, key=lambda r: (readers[r]["accuracy"], -READERS.index(r)))
    patients = len({it.cluster for it in sub})
    return {
        "n": len(sub),
        "patients": patients,
        "chance": round(chance, 4),
        **readers,
        "best": best,
        "answerable": patients >= MIN_PATIENTS and any(r["flagged"] for r in readers.values() if r is not None),
    }


def declared_notes(items: Sequence[Item]) -> dict[str, str]:
    """The ``audit_notes`` of the items' registered benchmark specs (none for an unregistered name)."""
    from medtemporal.contract import spec

    notes: dict[str, str] = {}
    for name in sorted({it.benchmark for it in items}):
        try:
            notes.update(spec(name).audit.notes)
        except UnknownNameError:
            continue
    return notes


def declared_floors(items: Sequence[Item]) -> dict[str, Any] | None:
    """The text-only floor of the items' open answers (`medtemporal.audit.floor`) from their benchmark specs'
    `AuditRules.baselines` (rows of every benchmark that names some, the first description), or None."""
    from medtemporal.audit.floor import text_floor
    from medtemporal.backends.session import DataUse
    from medtemporal.contract import spec

    found: dict[str, Any] | None = None
    for name in sorted({it.benchmark for it in items}):
        try:
            family = spec(name)
        except UnknownNameError:
            continue
        part = text_floor([it for it in items if it.benchmark == name], family.audit, DataUse(name, family.licence))
        if part is not None:
            found = part if found is None else {**found, "rows": [*found["rows"], *part["rows"]]}
    return found


def note_for(where: str, notes: Mapping[str, str]) -> str | None:
    """The note of the first pattern in ``notes`` that matches ``task/subtype`` ``where``, else None."""
    return next((note for pattern, note in notes.items() if fnmatchcase(where, pattern)), None)


@dataclass(frozen=True)
class Audit:
    """The manifest's ``audit`` section and every audited item's held-out blind pick."""

    section: dict[str, Any]
    picks: dict[str, str]
    """Item id → the answer its row's best reader gave it, fitted on other patients. The row is the one the
    readers were fitted for: the task's `POOLED` row with ``fit="task"`` (and several subtypes), else the
    item's subtype's row; that row's ``best`` names the reader."""
    readers: dict[str, str]
    """Item id → the reader (`READERS`) whose pick `picks` holds."""


def _judge(row: dict[str, Any], notes: Mapping[str, str]) -> dict[str, Any]:
    """``row`` with ``by_design`` (its note, where a reader is above chance + `MARGIN`) and ``flagged``."""
    where = f"{row['task']}/{row['subtype']}"
    above = any(row[r]["accuracy"] > row["chance"] + MARGIN for r in READERS if row.get(r))  # a point estimate
    row["by_design"] = note_for(where, notes) if row["answerable"] or above else None
    row["flagged"] = row["answerable"] and row["by_design"] is None
    return row


def run_audit(items: Sequence[Item], folds: int = FOLDS, progress: bool = False,
              notes: Mapping[str, str] | None = None, fit: str = "subtype") -> Audit:
    """Audit ``items``: the ``audit`` section of a manifest and every audited item's held-out blind pick.

    Args:
        items: The benchmark's items (any families; grouped by task and subtype).
        folds: Cross-validation folds by patient.
        progress: Show a progress bar.
        notes: ``task/subtype`` pattern → why the paper's design makes it answerable blind (default: the
            benchmark spec's ``audit_notes``).
        fit: ``"subtype"``: readers fitted on each subtype's items; ``"task"``: on each task's items across its
            subtypes (of one answer type), judged by the task's `POOLED` row.

    The section is ``{"method": ..., "subtypes": [{"task", "subtype", "n", "patients", "chance",
    "heuristic": {...}, "classifier": {...}, "question": {...}, "best", "answerable", "by_design", "flagged"},
    ...], "skipped": {"task/subtype": why}, "flagged": ["task/subtype", ...], "by_design": {"task/subtype":
    note}}``. With ``fit="task"`` the method also says ``"fit": "task"``, and a task with several audited
    subtypes has a row over all of them (subtype `POOLED`) after its subtype rows, which are marked
    ``breakdown`` and judged as every row is.

    Raises:
        ValueError: ``fit`` is not one of `FITS`.
    """
    if fit not in FITS:
        raise ValueError(f"fit must be one of {', '.join(FITS)}, not {fit!r}")
    notes = declared_notes(items) if notes is None else notes
    groups: dict[tuple[str, str], list[Item]] = defaultdict(list)
    for it in items:
        groups[(it.task, it.subtype)].append(it)
    pools: dict[tuple[str, str], list[tuple[str, list[Item]]]] = defaultdict(list)
    skipped = {}
    for task, subtype in sorted(groups):
        group = groups[(task, subtype)]
        kinds = {it.answer_type for it in group}
        where = f"{task}/{subtype}"
        if not kinds <= set(AUDITED) or len(kinds) > 1 or any(not isinstance(it.answer, str) for it in group):
            skipped[where] = f"{'/'.join(sorted(kinds))} answers have no blind accuracy to measure"
        elif kinds == {"open"} and len({fold(it.answer) for it in group}) < 2:
            skipped[where] = "one answer for every item: nothing to guess"
        elif len(group) < MIN_ITEMS or len({it.cluster for it in group}) < 2:
            skipped[where] = f"too few items ({len(group)}) or patients to cross-validate"
        else:
            pools[(task, subtype if fit == "subtype" else group[0].answer_type)].append((subtype, group))
    keys: Iterable[tuple[str, str]] = list(pools)
    if progress:
        keys = progress_bar(keys, desc="audit", unit=fit, leave=False)
    rows: list[dict[str, Any]] = []
    picks: dict[str, str] = {}
    readers: dict[str, str] = {}
    for key in keys:
        members = pools[key]
        pool = [it for _, group in members for it in group]
        fitted = _fit(pool, folds)
        start = 0
        for subtype, group in members:
            row = {"task": key[0], "subtype": subtype, **_record(pool, fitted, range(start, start + len(group)))}
            if len(members) > 1:  # readers fitted across the task's subtypes: this row is their breakdown
                row["breakdown"] = True
            rows.append(_judge(row, notes))
            start += len(group)
        if len(members) > 1:
            rows.append(_judge({"task": key[0], "subtype": POOLED, **_record(pool, fitted, range(len(pool)))}, notes))
        best = rows[-1]["best"]
        picks.update((it.id, p) for it, p in zip(pool, fitted.picks[best]))
        readers.update((it.id, best) for it in pool)
    method = {
        "folds": f"GroupKFold by patient, {folds} folds",
        "heuristic": "structural rule chosen on the training folds (medtemporal.audit.heuristics)",
        "classifier": "options one at a time: TF-IDF + logistic regression (medtemporal.audit.classifier)",
        "question": "question n-grams crossed with each option's letter, beside the option features "
                    "(medtemporal.audit.question)",
        "open": "open answers: the commonest training answer (heuristic), and the commonest training answer of the "
                "same question text (question), right when equal case and spaces folded; chance one over the "
                "subtype's distinct answers",
        **({"fit": "task"} if fit == "task" else {}),  # the default fit's method is as it always was
        "ci": f"95% percentile bootstrap over patients, {RESAMPLES} resamples",
        "flag": f"a reader's 95% interval lies above chance + {MARGIN:.0%} (its lower end), with at least "
                f"{MIN_PATIENTS} patients, unless the benchmark's spec notes that the paper's design makes the "
                "subtype answerable",
    }
    section = {
        "method": method,
        "subtypes": rows,
        "skipped": skipped,
        "flagged": [f"{r['task']}/{r['subtype']}" for r in rows if r["flagged"]],
        "by_design": {f"{r['task']}/{r['subtype']}": r["by_design"] for r in rows if r["by_design"]},
    }
    floor = declared_floors(items) if any(it.answer_type == "open" for it in items) else None
    if floor is not None:
        section["text_floor"] = floor
    return Audit(section, picks, readers)


def audit_items(items: Sequence[Item], folds: int = FOLDS, progress: bool = False,
                notes: Mapping[str, str] | None = None, fit: str = "subtype") -> dict[str, Any]:
    """The ``audit`` section of a manifest for ``items`` (see `run_audit`)."""
    return run_audit(items, folds, progress, notes, fit).section
