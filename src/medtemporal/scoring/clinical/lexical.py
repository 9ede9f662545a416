"""BLEU-1–4, METEOR, ROUGE-L and CIDEr as the R2Gen lineage computes them, through pycocoevalcap.

R2Gen, Longitudinal-MIMIC, MLRG and DDaTR score reports with pycocoevalcap's ``Bleu(4)``, ``Meteor()``
(the METEOR 1.5 jar, ``-l en -norm``), ``Rouge()`` and ``Cider()`` on whitespace tokens, without the PTB
tokenizer (Longitudinal@3171895:modules/metrics.py; MLRG@03f63d1:tools/metrics/metrics.py:12-43). Two
labelled variants of each:

- ``coco_*``: the texts as written (runs of white space made one space);
- ``r2gen_*``: both texts cleaned first as R2Gen cleans MIMIC-CXR reports (`texts.r2gen_clean`), the texts
  these papers' numbers come from.

Per sample, so that intervals resample patients and runs compare item by item:

- BLEU-n: pycocoevalcap's counts of each sample (``cook_refs``/``cook_test``: test and reference length,
  n-gram guesses and matches), summed over the items of a group and reduced with pycocoevalcap's corpus
  formula (``BleuScorer.compute_score(option="closest")``), so the value is the corpus BLEU the papers print;
- ROUGE-L: pycocoevalcap's per-sample F (β = 1.2), averaged, as its ``compute_score`` does;
- CIDEr-D: pycocoevalcap's per-sample scores with document frequencies from the references scored together
  (its corpus value is their mean); an interval's replicates keep those frequencies;
- METEOR: the jar's match statistics of each sample (its ``SCORE`` line), summed over a group and scored by the
  jar (``EVAL``), so the value is the pooled corpus METEOR pycocoevalcap prints (not the mean of segment
  scores, which is 1–2 points lower on reports: docs/report-metrics.md); an empty output scores 0, as there.

METEOR needs a Java runtime (``java`` on ``PATH``); without one it is reported unavailable and the rest is scored.
One jar process serves a Python process; it starts in the background at the first lexical metric, since loading
its paraphrase table takes seconds.

>>> from medtemporal.schema import Item
>>> item = Item.create(benchmark="x", task="t", subtype="s", images=[], question="?", answer_type="open",
...                    answer="", reference="The heart is normal. No effusion.")
>>> bleu_4 = metric("coco_bleu_4")
>>> stats = bleu_4.per_sample([item], ["The heart is normal. No effusion."], [None])
>>> stats[0, :3].tolist(), round(float(bleu_4.reduce(stats.sum(axis=0), 1.0)), 6)  # lengths, 1-gram guesses
([6.0, 6.0, 6.0], 1.0)
"""

from __future__ import annotations

import shutil
import threading
from functools import lru_cache
from typing import Any, Callable, Sequence

import numpy as np

from medtemporal.errors import UnavailableError
from medtemporal.registry import register
from medtemporal.schema import Item
from medtemporal.scoring.clinical.texts import r2gen_clean, report_pairs
from medtemporal.scoring.metrics import Answer, metric  # noqa: F401  (metric: the doctest)

VARIANTS: dict[str, tuple[Callable[[str], str], str]] = {
    "coco": (lambda text: " ".join(text.split()), "texts as written"),
    "r2gen": (r2gen_clean, "texts cleaned as R2Gen's clean_report_mimic_cxr"),
}
"""Variant prefix → how both texts are prepared, and its label."""
BLEU_ORDER = 4
_TINY, _SMALL = 1e-15, 1e-9
"""pycocoevalcap's guards in ``BleuScorer.compute_score``."""


def _prepared(variant: str, items: Sequence[Item], answers: Sequence[Answer]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    _start_meteor_jar()
    prepare = VARIANTS[variant][0]
    refs, outs = report_pairs(items, answers)
    return tuple(map(prepare, refs)), tuple(map(prepare, outs))


@lru_cache(maxsize=4)
def bleu_counts(refs: tuple[str, ...], outs: tuple[str, ...]) -> np.ndarray:
    """``(n, 2 + 2·4)`` counts per sample: test length, closest reference length, then the 1–4-gram guesses,
    then the 1–4-gram matches (pycocoevalcap's ``cook_test`` of each pair)."""
    from pycocoevalcap.bleu.bleu_scorer import cook_refs, cook_test

    rows = np.zeros((len(refs), 2 + 2 * BLEU_ORDER))
    for k, (ref, out) in enumerate(zip(refs, outs, strict=True)):
        comps = cook_test(out, cook_refs([ref], n=BLEU_ORDER), eff="closest", n=BLEU_ORDER)
        rows[k] = [comps["testlen"], comps["reflen"], *comps["guess"], *comps["correct"]]
    return rows


def reduce_bleu(n: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Corpus BLEU-``n`` from summed `bleu_counts` (pycocoevalcap's formula; works on leading batch axes)."""

    def corpus_bleu(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
        testlen, reflen = sums[..., 0], sums[..., 1]
        guess, correct = sums[..., 2:2 + BLEU_ORDER], sums[..., 2 + BLEU_ORDER:]
        ratios = (correct[..., :n] + _TINY) / (guess[..., :n] + _SMALL)
        value = np.prod(ratios, axis=-1) ** (1.0 / n)
        ratio = (testlen + _TINY) / (reflen + _SMALL)
        return np.where(ratio < 1, value * np.exp(1 - 1 / np.minimum(ratio, 1)), value)

    corpus_bleu.__name__ = f"corpus_bleu_{n}"
    return corpus_bleu


@lru_cache(maxsize=4)
def rouge_l(refs: tuple[str, ...], outs: tuple[str, ...]) -> np.ndarray:
    """pycocoevalcap's per-sample ROUGE-L F (β = 1.2)."""
    from pycocoevalcap.rouge.rouge import Rouge

    scorer = Rouge()
    return np.array([scorer.calc_score([out], [ref]) for ref, out in zip(refs, outs, strict=True)], dtype=float)


@lru_cache(maxsize=4)
def cider_d(refs: tuple[str, ...], outs: tuple[str, ...]) -> np.ndarray:
    """pycocoevalcap's per-sample CIDEr-D (n = 4, σ = 6), document frequencies from these references."""
    from pycocoevalcap.cider.cider import Cider

    if len(refs) == 0:
        return np.zeros(0)
    _, scores = Cider().compute_score({k: [r] for k, r in enumerate(refs)}, {k: [o] for k, o in enumerate(outs)})
    return np.asarray(scores, dtype=float)


def cider_by_task(variant: str, items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """`cider_d` with each task's document frequencies from that task's references alone: a paper's test set is
    one task (findings), so a benchmark that also asks for the impression must not mix its references in, and a
    group's value is then what lmms-eval's per-task aggregation computes too."""
    refs, outs = _prepared(variant, items, answers)
    scores = np.zeros(len(items))
    tasks: dict[str, list[int]] = {}
    for k, item in enumerate(items):
        tasks.setdefault(item.task, []).append(k)
    for index in tasks.values():
        scores[index] = cider_d(tuple(refs[k] for k in index), tuple(outs[k] for k in index))
    return scores


_JAR_LOCK = threading.Lock()
_JAR: list[Any] = []


def _meteor_jar() -> Any:
    """One METEOR 1.5 process (pycocoevalcap's ``Meteor``) for this Python process: its start loads the
    paraphrase table, which takes seconds."""
    with _JAR_LOCK:
        if not _JAR:
            from pycocoevalcap.meteor.meteor import Meteor

            _JAR.append(Meteor())
        return _JAR[0]


def _start_meteor_jar() -> None:
    """Start the METEOR process in the background (once): the first lexical metric a process scores calls this,
    so that the jar loads while BLEU, ROUGE-L and CIDEr are computed (a process that never asks METEOR only
    pays the idle jar)."""
    if not _JAR and shutil.which("java") is not None and not _JAR_LOCK.locked():
        threading.Thread(target=_meteor_jar, name="meteor-jar", daemon=True).start()


def _jar_call(line: str, replies: int) -> list[str]:
    """Send one line to the METEOR jar and read ``replies`` lines back (under pycocoevalcap's lock); a jar whose
    process ended (killed) is started again once."""
    for attempt in (0, 1):
        jar = _meteor_jar()
        try:
            with jar.lock:
                jar.meteor_p.stdin.write(f"{line}\n".encode())
                jar.meteor_p.stdin.flush()
                return [jar.meteor_p.stdout.readline().decode().strip() for _ in range(replies)]
        except (BrokenPipeError, ValueError):
            if attempt:
                raise
            with _JAR_LOCK:
                _JAR.clear()
    raise AssertionError("unreachable")


def _require_java() -> None:
    if shutil.which("java") is None:
        raise UnavailableError("METEOR runs pycocoevalcap's METEOR 1.5 jar, which needs a Java runtime; install one "
                               "(e.g. `apt install default-jre-headless`) so that `java` is on PATH.")


@lru_cache(maxsize=4)
def meteor(refs: tuple[str, ...], outs: tuple[str, ...]) -> np.ndarray:
    """``(n, k)`` the METEOR 1.5 jar's match statistics of each segment: its ``SCORE`` line, exactly the one
    pycocoevalcap's ``Meteor._stat`` sends on to ``EVAL`` (``-l en -norm``), with the chunk of a segment that
    matches its reference exactly (one chunk, every word matched) set to 0, as the jar counts it when it pools
    segments (found by comparing its ``EVAL`` aggregate with the sum); an empty text is sent as it is, as
    pycocoevalcap does (the jar scores it 0).

    Raises:
        UnavailableError: no Java runtime on ``PATH``.
    """
    _require_java()
    rows = []
    for ref, out in zip(refs, outs, strict=True):
        # pycocoevalcap's _stat removes "|||" from the output only; one in a reference would split its line
        line = " ||| ".join(("SCORE", ref.replace("|||", ""), out.replace("|||", "").replace("  ", " ")))
        rows.append([float(x) for x in _jar_call(line, 1)[0].split()])
    stats = np.asarray(rows, dtype=float).reshape(len(refs), -1)
    if len(stats):  # the last three are chunks, test and reference word matches
        exact = (stats[:, -3] == 1) & (stats[:, -2] == stats[:, 0]) & (stats[:, -1] == stats[:, 1])
        stats[exact, -3] = 0  # the jar adds no chunk for a segment equal to its reference when it pools them
    return stats


def reduce_meteor(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The jar's METEOR of pooled statistics: its ``EVAL`` of each group's summed `meteor` rows, which is the
    corpus value pycocoevalcap's ``compute_score`` prints (the jar sums the segments' statistics the same way);
    works on leading batch axes (one ``EVAL`` line for all of them)."""
    _require_java()
    flat = np.atleast_2d(sums).reshape(-1, sums.shape[-1])
    line = "EVAL ||| " + " ||| ".join(" ".join(repr(float(x)) for x in row) for row in flat)
    values = np.asarray(_jar_call(line, len(flat) + 1)[:-1], dtype=float)
    return values.reshape(sums.shape[:-1])


def _settings(variant: str, detail: str) -> Callable[[], dict[str, Any]]:
    return lambda: {"library": "pycocoevalcap", "text": VARIANTS[variant][1], "tokens": "whitespace", **(
        {"aggregate": detail} if detail else {})}


def _register_variant(variant: str) -> None:
    label = VARIANTS[variant][1]
    info = dict(higher_is_better=True, percent=True, source="pycocoevalcap (R2Gen lineage)",
                needs="nothing (CPU)")
    for n in range(1, BLEU_ORDER + 1):
        def bleu(items: Sequence[Item], answers: Sequence[Answer], _v: str = variant) -> np.ndarray:
            return bleu_counts(*_prepared(_v, items, answers))

        bleu.__doc__ = f"Per-sample BLEU counts ({label}); reduced to corpus BLEU-{n}."
        register("metric", f"{variant}_bleu_{n}", aggregation=reduce_bleu(n), settings=_settings(variant, "corpus"),
                 description=f"BLEU-{n}, corpus (pycocoevalcap), {label}", **info)(bleu)
    columns = (("rouge_l", rouge_l, "ROUGE-L F, β 1.2, mean (pycocoevalcap)"),
               ("cider", None, "CIDEr-D, mean; df from the references of the task scored together (pycocoevalcap)"))
    for name, compute, text in columns:
        def column(items: Sequence[Item], answers: Sequence[Answer], _v: str = variant,
                   _c: Callable[..., np.ndarray] | None = compute) -> np.ndarray:
            return cider_by_task(_v, items, answers) if _c is None else _c(*_prepared(_v, items, answers))

        column.__doc__ = f"Per-sample {text}, {label}."
        register("metric", f"{variant}_{name}", aggregation="mean", settings=_settings(variant, ""),
                 description=f"{text}, {label}", **info)(column)

    def meteor_column(items: Sequence[Item], answers: Sequence[Answer], _v: str = variant) -> np.ndarray:
        return meteor(*_prepared(_v, items, answers))

    meteor_column.__doc__ = f"Per-sample METEOR match statistics ({label}); reduced to the jar's pooled METEOR."
    register("metric", f"{variant}_meteor", aggregation=reduce_meteor, settings=_settings(variant, "corpus (pooled)"),
             description=f"METEOR 1.5 jar, pooled corpus value as pycocoevalcap prints it, {label}",
             **{**info, "needs": "Java runtime (CPU)"})(meteor_column)


for _variant in VARIANTS:
    _register_variant(_variant)

LEXICAL_RAW = tuple(f"coco_{m}" for m in ("bleu_1", "bleu_2", "bleu_3", "bleu_4", "meteor", "rouge_l", "cider"))
"""The lexical metrics on the texts as written, in the papers' column order."""
LEXICAL_R2GEN = tuple(name.replace("coco_", "r2gen_") for name in LEXICAL_RAW)
"""The lexical metrics on R2Gen-cleaned texts, in the papers' column order."""
