"""Speed of the lexical and temporal report metrics on 2,347 phantom reports (the common MIMIC-CXR test set's size).

Writes 2,347 phantom findings sections (FACTS §6.1: the R2Gen lineage's test studies with a findings section),
each the current visit of a simulated patient (`medtemporal.phantoms.trajectory`, worded by
`medtemporal.phantoms.cxr_text` with comparative language), and scores as output the prior visit's findings (the
copy-prior baseline). Times, in one process with cold caches, every lexical metric on the raw and on the
R2Gen-cleaned texts (14 metrics: BLEU-1–4, METEOR, ROUGE-L, CIDEr ×2) and Temporal Entity F1, as scoring calls them
(`Metric.per_sample`, one call per metric name), and prints each group's wall-clock seconds and the total against
the issue's budget of 60 s, with the CPU seconds spent (this process, plus the METEOR jar's Java process) and the
load average, since the machine is shared: CPU seconds do not grow with other processes' load, wall seconds do.

    .venv/bin/python bench/report_metrics.py [--reports 2347] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from medtemporal.phantoms.cxr_text import describe
from medtemporal.phantoms.trajectory import simulate_patient
from medtemporal.schema import Item
from medtemporal.scoring import metric
from medtemporal.scoring.clinical import LEXICAL_R2GEN, LEXICAL_RAW, TEMPORAL, lexical

BUDGET_S = 60.0


def findings(visit, prior) -> str:  # noqa: ANN001  (trajectory.Visit)
    """The findings section of ``visit`` compared with ``prior`` (None at a first visit)."""
    sentences = [describe(e, None if prior is None else prior.states[e], s).text for e, s in visit.states.items()]
    return " ".join(sentences)


def phantom_pairs(n: int, seed: int) -> tuple[list[Item], list[str]]:
    """``n`` items whose reference is a visit's findings, and the prior visit's findings as outputs."""
    rng = np.random.default_rng(seed)
    items, outputs = [], []
    while len(items) < n:
        patient = simulate_patient(rng, int(rng.integers(2, 6)))
        visits = patient.visits
        for k in range(1, len(visits)):
            if len(items) == n:
                break
            reference = findings(visits[k], visits[k - 1])
            items.append(Item.create(benchmark="bench", task="findings", subtype="findings", images=[],
                                     question=f"Study {len(items)}.", answer_type="open", answer=reference,
                                     reference=reference, meta={"patient_id": f"p{len(items) // 8}"}))
            outputs.append(findings(visits[k - 1], visits[k - 2] if k > 1 else None))
    return items, outputs


def jar_cpu_seconds() -> float:
    """CPU seconds the METEOR jar's Java process has used (0 before it starts; Linux ``/proc``)."""
    if not lexical._JAR:
        return 0.0
    fields = Path(f"/proc/{lexical._JAR[0].meteor_p.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reports", type=int, default=2347)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    items, outputs = phantom_pairs(args.reports, args.seed)
    words = np.mean([len(i.reference.split()) for i in items])
    print(f"{len(items)} phantom findings sections, {words:.0f} words on average; outputs: the prior visit's")
    for cache in (lexical.bleu_counts, lexical.rouge_l, lexical.cider_d, lexical.meteor):
        cache.cache_clear()
    total, cpu_start = 0.0, time.process_time()
    for label, names in (("raw (coco_*)", LEXICAL_RAW), ("R2Gen-cleaned (r2gen_*)", LEXICAL_R2GEN),
                         ("temporal", TEMPORAL)):
        start = time.perf_counter()
        values = {}
        for name in names:
            m = metric(name)
            stats = m.per_sample(items, outputs, [None] * len(items)).reshape(len(items), -1)
            values[name] = float(m.reduce(stats.sum(axis=0), np.float64(len(items))))
        seconds = time.perf_counter() - start
        total += seconds
        shown = ", ".join(f"{n}={v:.3f}" for n, v in values.items())
        print(f"{label:<24} {seconds:6.1f} s   {shown}")
    cpu = time.process_time() - cpu_start + jar_cpu_seconds()
    print(f"total                    {total:6.1f} s   budget {BUDGET_S:.0f} s   ratio {total / BUDGET_S:.2f} "
          f"({'within' if total < BUDGET_S else 'OVER'} budget)")
    print(f"CPU                      {cpu:6.1f} s   (Python {time.process_time() - cpu_start:.1f} s + METEOR jar "
          f"{jar_cpu_seconds():.1f} s); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
