"""Medical-Diff-VQA's text metrics, computed by pycocoevalcap as the paper's code does (FACTS §5.2).

EKAID's ``model/evaluation.py`` tokenises references and answers with pycocoevalcap's PTB tokenizer
(Stanford CoreNLP 3.4.1: lower case, punctuation removed), then scores them with ``Bleu(4)``,
``Meteor()``, ``Rouge()`` and ``Cider()``, one reference per question; ``evaluate_score.py`` does it over
all questions (``caption_metric``) and per ``question_type`` (``caption_metric_by_question_type``).
Registered here, each from the library's own code:

* ``diffvqa_bleu_1`` … ``diffvqa_bleu_4`` — corpus BLEU (``option="closest"``). Each item keeps the counts
  ``BleuScorer`` cooks for it (test and reference length, n-gram guesses and matches); a group's value is
  ``BleuScorer.compute_score`` on the group's summed counts, which is exactly what the library computes
  over that group.
* ``diffvqa_meteor`` — METEOR 1.5 (``-l en -norm``). Each item keeps the statistics line Meteor's
  ``SCORE`` command returns (with the chunks of a whole, one-chunk match set to 0, as Meteor's own
  aggregation leaves them out: `exact_segments`); a group's value is Meteor's ``EVAL`` of their sum,
  which is the corpus score Meteor gives that group.
* ``diffvqa_rouge_l`` — ROUGE-L (β = 1.2) of each item, averaged (``Rouge.compute_score`` averages).
* ``diffvqa_cider`` — CIDEr-D of each item, averaged. Its document frequencies come from the references
  of all the items scored together (the run's items): over all questions this is EKAID's
  ``caption_metric``; EKAID's per-type call recomputes them over that type's references, which per-item
  values cannot do, so per-type CIDEr here can differ from it (the tables say so).

The answer scored is the extracted one (``Yes``/``No`` for closed questions, the whole output for open
ones; an invalid or missing answer is an empty string), the reference the released answer. Groups are
resampled by patient like every other metric: the per-item statistics are summed per patient.

pycocoevalcap's tokenizer and METEOR run Java. Without a working ``java`` (or when the library fails, e.g. its
tokenizer cannot write its temporary file beside itself) the seven metrics are NaN (shown as "–") and
``scores.json`` says why under each metric's ``settings.java``; nothing else stops.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, Callable, Sequence

import numpy as np

from medtemporal.registry import register
from medtemporal.schema import Item
from medtemporal.scoring.metrics import Answer

CHUNKS = 20
"""Column of ``chunks`` in a Meteor 1.5 statistics line (lengths, function words, 4 modules × 4 match
counts, chunks, word matches)."""
BLEU_WIDTH = 10
"""Per-item BLEU counts: test length, reference length, guesses for n = 1..4, matches for n = 1..4."""
LIBRARY = "pycocoevalcap 1.2 (as EKAID's requirements.txt pins)"


@cache
def java_status() -> tuple[bool, str]:
    """(usable, the ``java -version`` line or why Java or pycocoevalcap cannot be used)."""
    try:
        import pycocoevalcap  # noqa: F401
    except ImportError:
        return False, "pycocoevalcap is not installed (pip install pycocoevalcap)"
    java = shutil.which("java")
    if java is None:
        return False, ("no `java` on PATH: pycocoevalcap's PTB tokenizer and METEOR run Java (install a JRE, e.g. "
                       "apt-get install default-jre-headless)")
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=120, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"`java -version` failed ({exc})"
    return True, (done.stderr or done.stdout).strip().splitlines()[0]


_FAILURE: dict[str, str] = {}
"""Why the library failed in this process after Java was found (reported in the metrics' settings)."""
_METEOR: Any = None
_METEOR_LOCK = threading.Lock()


def meteor_scorer() -> Any:
    """The process's pycocoevalcap ``Meteor`` (one Java process, started on first use: it loads for seconds)."""
    global _METEOR
    with _METEOR_LOCK:
        if _METEOR is None:
            from pycocoevalcap.meteor.meteor import Meteor

            _METEOR = Meteor()
        return _METEOR


@dataclass(frozen=True)
class Scored:
    """The per-item statistics of every metric for one list of (reference, answer) texts."""

    bleu: np.ndarray
    meteor: np.ndarray
    rouge_l: np.ndarray
    cider: np.ndarray


def texts(items: Sequence[Item], answers: Sequence[Answer]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(released answers, extracted answers as text; "" where invalid or missing)."""
    refs = tuple(item.reference if item.reference is not None else str(item.answer) for item in items)
    hyps = tuple(a if isinstance(a, str) else "" for a in answers)
    return refs, hyps


def tokenize(texts_: Sequence[str]) -> list[str]:
    """pycocoevalcap's PTB tokenization of each text (one Java call for all)."""
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    out = PTBTokenizer().tokenize({i: [{"caption": t}] for i, t in enumerate(texts_)})
    return [out[i][0] for i in range(len(texts_))]


@lru_cache(maxsize=2)
def score_texts(refs: tuple[str, ...], hyps: tuple[str, ...]) -> Scored:
    """Tokenize, then every metric's per-item statistics (module doc), from the library's own code."""
    from pycocoevalcap.bleu.bleu_scorer import cook_refs, cook_test
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    tokens = tokenize([*refs, *hyps])
    t_refs, t_hyps = tokens[:len(refs)], tokens[len(refs):]
    bleu = np.zeros((len(refs), BLEU_WIDTH))
    for i, (ref, hyp) in enumerate(zip(t_refs, t_hyps)):
        cooked = cook_test(hyp, cook_refs([ref]))
        bleu[i] = [cooked["testlen"], cooked["reflen"][0], *cooked["guess"], *cooked["correct"]]
    scorer = meteor_scorer()
    with scorer.lock:
        lines = [scorer._stat(hyp, [ref]) for ref, hyp in zip(t_refs, t_hyps)]
    meteor = np.array([[float(v) for v in line.split()] for line in lines]) if lines else np.zeros((0, 1))
    if len(meteor):
        meteor[exact_segments(meteor), CHUNKS] = 0.0
    rouge = Rouge()
    rouge_l = np.array([rouge.calc_score([hyp], [ref]) for ref, hyp in zip(t_refs, t_hyps)], dtype=float)
    gts = {i: [r] for i, r in enumerate(t_refs)}
    res = {i: [h] for i, h in enumerate(t_hyps)}
    cider = np.asarray(Cider().compute_score(gts, res)[1], dtype=float) if gts else np.zeros(0)
    return Scored(bleu, meteor, rouge_l, cider)


def exact_segments(stats: np.ndarray) -> np.ndarray:
    """Rows whose answer matched its reference whole, in one chunk: Meteor adds no chunks of theirs to an
    aggregate (``MeteorStats.addStats``: ``if (!(testTotalMatches == testLength && referenceTotalMatches ==
    referenceLength && chunks == 1)) chunks += ss.chunks``), so their chunks are stored as 0."""
    test = stats[:, 4:20:2].sum(axis=1)  # content and function matches of the test, every module
    ref = stats[:, 5:20:2].sum(axis=1)
    return (test == stats[:, 0]) & (ref == stats[:, 1]) & (stats[:, CHUNKS] == 1)


def _stats(items: Sequence[Item], answers: Sequence[Answer], pick: Callable[[Scored], np.ndarray],
           width: int) -> np.ndarray:
    """One metric's per-item statistics, or NaN (``width`` columns; any width for METEOR, whose reduction
    reads none of a NaN row) where Java cannot run."""
    if not java_status()[0]:
        return np.full((len(items), width), np.nan)
    if not items:
        return np.zeros((0, width))
    try:
        return pick(score_texts(*texts(items, answers)))
    except (OSError, ValueError, IndexError, subprocess.SubprocessError) as exc:  # the Java side failed
        _FAILURE["reason"] = f"pycocoevalcap failed ({type(exc).__name__}: {exc})"
        return np.full((len(items), width), np.nan)


def reduce_bleu(n: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """BLEU-``n`` of summed per-item counts, by ``BleuScorer.compute_score`` (any leading batch axes)."""

    def reduce(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
        from pycocoevalcap.bleu.bleu_scorer import BleuScorer

        flat = sums.reshape(-1, BLEU_WIDTH)
        out = np.full(len(flat), np.nan)
        for k, row in enumerate(flat):
            if np.isnan(row).any():
                continue
            scorer = BleuScorer(n=4)
            scorer.crefs = [([row[1]], {})]
            scorer.ctest = [{"testlen": row[0], "reflen": [row[1]], "guess": list(row[2:6]),
                             "correct": list(row[6:10])}]
            out[k] = scorer.compute_score(option="closest", verbose=0)[0][n - 1]
        return out.reshape(sums.shape[:-1])

    reduce.__name__ = f"bleu_{n}_of_summed_counts"
    return reduce


def reduce_meteor(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """METEOR of summed per-item statistics: one Meteor ``EVAL`` line holding every (batch) sum."""
    flat = sums.reshape(-1, sums.shape[-1])
    out = np.full(len(flat), np.nan)
    rows = [k for k, row in enumerate(flat) if not np.isnan(row).any()]
    if rows:
        scorer = meteor_scorer()
        line = "EVAL" + "".join(" ||| " + " ".join(repr(float(v)) for v in flat[k]) for k in rows)
        with scorer.lock:
            scorer.meteor_p.stdin.write(f"{line}\n".encode())
            scorer.meteor_p.stdin.flush()
            values = [float(scorer.meteor_p.stdout.readline().strip()) for _ in rows]
            scorer.meteor_p.stdout.readline()  # the score of all of them together
        out[rows] = values
    return out.reshape(sums.shape[:-1])


def settings() -> dict[str, Any]:
    """The library, tokenizer and Java the text metrics run with (recorded in ``scores.json``)."""
    usable, java = java_status()
    if usable and "reason" in _FAILURE:
        usable, java = False, _FAILURE["reason"]
    return {"library": LIBRARY, "tokenizer": "PTBTokenizer (Stanford CoreNLP 3.4.1, -lowerCase, punctuation removed)",
            "references_per_question": 1, "java": java if usable else f"unavailable: {java}"}


def _cider_settings() -> dict[str, Any]:
    return {**settings(), "document_frequencies": "the references of all items scored together (EKAID's "
            "caption_metric over all questions); per question type they are not recomputed"}


_INFO = dict(higher_is_better=True, percent=True, settings=settings)


def _register_bleu(n: int) -> None:
    def bleu(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
        return _stats(items, answers, lambda s: s.bleu, BLEU_WIDTH)

    bleu.__doc__ = f"Per-item BLEU counts; BLEU-{n} of a group from their sum (`reduce_bleu`)."
    register("metric", f"diffvqa_bleu_{n}", aggregation=reduce_bleu(n),
             description=f"BLEU-{n} (pycocoevalcap Bleu(4), corpus-level over the group, PTB tokens)", **_INFO)(bleu)


for _n in (1, 2, 3, 4):
    _register_bleu(_n)


@register("metric", "diffvqa_meteor", aggregation=reduce_meteor,
          description="METEOR 1.5 (pycocoevalcap Meteor, corpus-level over the group, PTB tokens; Java)", **_INFO)
def meteor(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-item Meteor statistics; a group's METEOR from their sum (`reduce_meteor`)."""
    return _stats(items, answers, lambda s: s.meteor, 1)


@register("metric", "diffvqa_rouge_l", aggregation="mean",
          description="ROUGE-L (pycocoevalcap Rouge, beta 1.2, PTB tokens), averaged over questions", **_INFO)
def rouge_l(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-item ROUGE-L."""
    return _stats(items, answers, lambda s: s.rouge_l[:, None], 1)[:, 0]


@register("metric", "diffvqa_cider", aggregation="mean", higher_is_better=True, percent=True,
          settings=_cider_settings, corpus=True,
          description="CIDEr-D (pycocoevalcap Cider, PTB tokens), averaged; document frequencies over all items "
          "scored together")
def cider(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-item CIDEr-D with the document frequencies of all the items given."""
    return _stats(items, answers, lambda s: s.cider[:, None], 1)[:, 0]
