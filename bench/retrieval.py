"""Time top-5 pairwise image retrieval of 2,000 query pairs over a 17,144-pair corpus (after embedding).

The corpus size is TemMed-Bench's knowledge corpus; vectors are random unit
vectors of the chosen dimension (1,152 = MedSigLIP; retrieval cost does not
depend on what they encode). In one run, alternating, it times the search and
the bare float32 BLAS product of the same shapes (2,000 x 2d @ 2d x 17,144,
the floor of any exact dense search), and prints: the FLOP count, this
machine's measured GFLOPS, search / bare product (the top-k overhead), search
vs the 1 s target, and the GFLOPS that 1 s would take. Results are checked
against a brute-force search (separate products, stable full sort) on a
sample of queries. Usage: ``python bench/retrieval.py [--dim 1152] [--repeats 3] [--check 200]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from medtemporal.retrieval import PairwiseImageRetriever
from medtemporal.retrieval.embedders import normalise_rows

CORPUS, QUERIES, K, TARGET = 17_144, 2_000, 5, 1.0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dim", type=int, default=1152, help="embedding size (MedSigLIP 1152; pixel:16 gives 256)")
    p.add_argument("--repeats", type=int, default=3, help="timed runs of each; the best is reported")
    p.add_argument("--check", type=int, default=200, help="queries checked against brute force")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    corpus_h, corpus_c = (normalise_rows(rng.standard_normal((CORPUS, args.dim), dtype=np.float32)) for _ in range(2))
    query_h, query_c = (normalise_rows(rng.standard_normal((QUERIES, args.dim), dtype=np.float32)) for _ in range(2))
    retriever = PairwiseImageRetriever(corpus_h, corpus_c)
    queries = np.concatenate([query_h, query_c], axis=1)
    keys_t = np.ascontiguousarray(np.concatenate([corpus_h, corpus_c], axis=1).T)
    search, bare = [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        idx, scores = retriever.search(query_h, query_c, K)
        search.append(time.perf_counter() - start)
        start = time.perf_counter()
        queries @ keys_t
        bare.append(time.perf_counter() - start)
    sample = rng.choice(QUERIES, min(args.check, QUERIES), replace=False)
    brute = query_h[sample] @ corpus_h.T + query_c[sample] @ corpus_c.T
    want = np.argsort(-brute, axis=1, kind="stable")[:, :K]
    agree = bool((want == idx[sample]).all())
    flops = 2.0 * QUERIES * CORPUS * 2 * args.dim
    best, floor = min(search), min(bare)
    print(f"top-{K} pairwise retrieval, {QUERIES} queries x {CORPUS} pairs, dim {args.dim} (concatenated "
          f"{2 * args.dim}); load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(f"search: best {best:.3f} s of {args.repeats}; search / {TARGET:.0f} s target = {best / TARGET:.2f}")
    print(f"bare float32 BLAS product of the same shapes: best {floor:.3f} s = {flops / floor / 1e9:.1f} GFLOPS "
          f"on {flops / 1e9:.1f} GFLOP; search / bare product = {best / floor:.3f} (top-k overhead)")
    print(f"{TARGET:.0f} s would take {flops / TARGET / 1e9:.0f} GFLOPS, {floor / TARGET:.2f} x "
          f"this machine's measured float32 rate")
    print(f"brute-force agreement on {len(sample)} queries: {agree}")
    return 0 if agree else 1


if __name__ == "__main__":
    raise SystemExit(main())
