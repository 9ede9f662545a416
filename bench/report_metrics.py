"""Our report metrics against the implementations they follow, on phantom report pairs, and how long they take.

Reads every report metric the registered families list (`BenchmarkSpec.metrics`, `extra_metrics`), writes
``--reports`` phantom findings sections (the current visit of a simulated patient, `medtemporal.phantoms`) with the
prior visit's findings as outputs (the copy-prior baseline), every 10th output empty and every 25th a one-word
"No", and scores each metric as scoring does (`Metric.per_sample`, then its reduce step). Each is set beside the
reference implementation called here, on the same texts: pycocoevalcap's ``Bleu``/``Meteor``/``Rouge``/``Cider``
(the R2Gen lineage's printed corpus values), Libra's formula (TEF1 as released), bert-score (Libra's BERTScore;
only where the weights are on this machine). Prints metric → reference → ours, theirs, difference, seconds; the
"@before" rows are what medtemporal ≤ d3bf247 printed for METEOR (the mean of the jar's segment scores).

    .venv/bin/python bench/report_metrics.py [--reports 2347] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from medtemporal.phantoms.cxr_text import describe
from medtemporal.phantoms.trajectory import simulate_patient
from medtemporal.registry import entries
from medtemporal.schema import Item
from medtemporal.scoring import metric
from medtemporal.scoring.clinical import lexical
from medtemporal.scoring.clinical.temporal import libra_clean
from medtemporal.scoring.metrics import UNAVAILABLE


def findings(visit, prior) -> str:  # noqa: ANN001  (trajectory.Visit)
    """The findings section of ``visit`` compared with ``prior`` (None at a first visit)."""
    sentences = [describe(e, None if prior is None else prior.states[e], s).text for e, s in visit.states.items()]
    return " ".join(sentences)


def phantom_pairs(n: int, seed: int) -> tuple[list[Item], list[str]]:
    """``n`` items whose reference is a visit's findings; outputs the prior visit's, some empty or one word."""
    rng = np.random.default_rng(seed)
    items, outputs = [], []
    while len(items) < n:
        visits = simulate_patient(rng, int(rng.integers(2, 6))).visits
        for k in range(1, len(visits)):
            if len(items) == n:
                break
            reference = findings(visits[k], visits[k - 1])
            items.append(Item.create(benchmark="bench", task="findings", subtype="findings", images=[],
                                     question=f"Study {len(items)}.", answer_type="open", answer=reference,
                                     reference=reference, meta={"patient_id": f"p{len(items) // 8}"}))
            out = findings(visits[k - 1], visits[k - 2] if k > 1 else None)
            outputs.append("" if len(items) % 10 == 0 else "No" if len(items) % 25 == 0 else out)
    return items, outputs


def family_metrics() -> list[str]:
    """Every metric a registered family lists, in first-seen order."""
    seen: dict[str, None] = {}
    for spec in (entry.obj for entry in entries("benchmark")):
        for table in (spec.metrics, getattr(spec, "extra_metrics", None) or {}):
            for names in table.values():
                seen.update(dict.fromkeys(names))
    return list(seen)


def pycoco(scorer, prepare):  # noqa: ANN001, ANN201
    """pycocoevalcap's corpus value of ``scorer`` on texts prepared as the variant prepares them."""
    def compute(refs: list[str], outs: list[str]) -> float:
        gts = {k: [prepare(r)] for k, r in enumerate(refs)}
        return scorer(gts, {k: [prepare(o)] for k, o in enumerate(outs)})
    return compute


def references() -> dict[str, tuple[str, object]]:
    """Metric → (the implementation and setting matched, a function of (refs, outs) giving its value)."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.meteor.meteor import Meteor
    from pycocoevalcap.rouge.rouge import Rouge

    out, jar = {}, Meteor()
    for variant, (prepare, label) in lexical.VARIANTS.items():
        for n in range(1, 5):
            out[f"{variant}_bleu_{n}"] = (f"pycocoevalcap Bleu(4), corpus, {label}", pycoco(
                lambda g, r, n=n: Bleu(4).compute_score(g, r, verbose=0)[0][n - 1], prepare))
        out[f"{variant}_meteor"] = (f"pycocoevalcap Meteor (1.5 jar), printed value, {label}",
                                    pycoco(lambda g, r: jar.compute_score(g, r)[0], prepare))
        out[f"{variant}_meteor@before"] = (out[f"{variant}_meteor"][0] + "; ours: the segment mean of ≤ d3bf247",
                                           pycoco(lambda g, r: float(np.mean(jar.compute_score(g, r)[1])), prepare))
        out[f"{variant}_rouge_l"] = (f"pycocoevalcap Rouge, {label}",
                                     pycoco(lambda g, r: Rouge().compute_score(g, r)[0], prepare))
        out[f"{variant}_cider"] = (f"pycocoevalcap Cider, {label}",
                                   pycoco(lambda g, r: Cider().compute_score(g, r)[0], prepare))
    out["temporal_entity_f1"] = ("Libra temporal_f1.py (1.0 for an empty answer where the reference has no "
                                 "change word; ours 0)", lambda refs, outs: _ours("temporal_entity_f1_libra"))
    out["bertscore_f1_distilbert"] = ("Libra radiology_report.py: bert-score distilbert-base-uncased L5 on "
                                      "Libra-cleaned lowercased text", _bert_score_libra)
    return out


_STATE: dict[str, object] = {}  # the items and outputs scored


def _ours(name: str) -> float:
    m = metric(name)
    items, outputs = _STATE["items"], _STATE["outputs"]
    stats = m.per_sample(items, outputs, [None] * len(items)).reshape(len(items), -1)
    return float(m.reduce(stats.sum(axis=0), np.float64(len(items))))


def _bert_score_libra(refs: list[str], outs: list[str]) -> float:
    from bert_score import BERTScorer
    from medtemporal.scoring.clinical.weights import WEIGHTS
    scorer = BERTScorer(model_type=str(WEIGHTS["bertscore_distilbert"].local()), num_layers=5)
    clean = [(libra_clean(r.lower()), libra_clean(o.lower())) for r, o in zip(refs, outs)]
    f1 = [0.0 if not o else float(scorer.score([o], [r])[2][0]) for r, o in clean]  # bert-score: 0 for empty
    return float(np.mean(f1))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reports", type=int, default=2347)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    items, outputs = phantom_pairs(args.reports, args.seed)
    _STATE.update(items=items, outputs=outputs)
    refs = [i.reference for i in items]
    print(f"{len(items)} phantom findings sections ({sum(not o for o in outputs)} outputs empty, "
          f"{sum(o == 'No' for o in outputs)} 'No'); outputs: the prior visit's findings\n"
          "| metric | implementation and setting we match | ours | theirs | difference | seconds |\n|---|---|---|---|---|---|")
    known = references()
    for name in family_metrics():
        for key in (name, f"{name}@before"):
            if key not in known:
                continue
            (label, compute), start = known[key], time.perf_counter()
            try:
                ours, theirs = _ours(name), known[name][1](refs, outputs)
                if key != name:  # what we printed before, against the same reference
                    ours = compute(refs, outputs)
            except UNAVAILABLE as exc:
                print(f"| `{key}` | {label} | unavailable: {exc} | | | |")
                continue
            seconds = time.perf_counter() - start
            print(f"| `{key}` | {label} | {100 * ours:.4f} | {100 * theirs:.4f} | {100 * (ours - theirs):+.4f} "
                  f"| {seconds:.1f} |")


if __name__ == "__main__":
    main()
