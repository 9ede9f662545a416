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
  ``caption_metric``; EKAID's per-type call recomputes them over that type's references, so per-type CIDEr
  here can differ from it (the tables say so). The EKAID variant (`ekaid`) adds ``diffvqa_cider_by_type``,
  whose frequencies come from each type's own references, as EKAID's per-type call computes it.

The answer scored is the extracted one (``Yes``/``No`` for closed questions, the whole output for open
ones; an invalid or missing answer is an empty string), the reference the released answer. Groups are
resampled by patient like every other metric: the per-item statistics are summed per patient.

pycocoevalcap's tokenizer and METEOR run Java, started only for what needs them: closed answers (yes/no) are their
own PTB tokens and their METEOR statistics come from a METEOR started without its paraphrase table, as do the sums
of statistics (`CLOSED_TOKENS`, `light_meteor`), so scoring closed questions takes seconds, not the half minute
the paraphrase table takes to load. Without a working ``java`` (or when the library fails, e.g. its
tokenizer cannot write its temporary file beside itself) the seven metrics are NaN (shown as "–") and
``scores.json`` says why under each metric's ``settings.java``; nothing else stops.
"""

from __future__ import annotations

import atexit
import contextlib
import gzip
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, Callable, Sequence

import numpy as np

from medtemporal.family import Answer, Item, register

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


_LIGHT: Any = None
LIGHT_JVM = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1")
"""The light METEOR's JVM: one garbage-collector and one compiler thread, quick compilation only (about 25% less
CPU for its short work; Java's floating point is the same whatever the flags)."""
CLOSED_TOKENS = frozenset({"yes", "no", ""})
"""The closed questions' answers as PTB tokens ("" for an invalid one). Texts that are all one of them whatever
their case and surrounding space are their own tokenization, and METEOR's statistics of a pair of them need no
paraphrase table (tests check both against the library), so scoring closed questions starts neither the PTB
tokenizer nor the full METEOR, which loads its paraphrase table for half a minute."""


def meteor_scorer() -> Any:
    """The process's pycocoevalcap ``Meteor`` (one Java process, started on first use: it loads its paraphrase
    table for tens of seconds)."""
    global _METEOR
    with _METEOR_LOCK:
        if _METEOR is None:
            from pycocoevalcap.meteor.meteor import Meteor

            _METEOR = Meteor()
        return _METEOR


def light_meteor() -> Any:
    """pycocoevalcap's ``Meteor`` as EKAID runs it (``-l en -norm``, the same jar and module weights) but given an
    empty paraphrase table (``-a``), which starts in about a second. It sums statistics (``EVAL``) exactly as the
    full one does, which reads no paraphrase table for that, and scores pairs of `CLOSED_TOKENS` as it does."""
    global _LIGHT
    with _METEOR_LOCK:
        if _LIGHT is None:
            from pycocoevalcap.meteor import meteor

            class LightMeteor(meteor.Meteor):
                def __init__(self) -> None:  # the library's constructor, with the paraphrase table named
                    self.meteor_cmd = ["java", *LIGHT_JVM, "-jar", "-Xmx2G", meteor.METEOR_JAR, "-", "-", "-stdio",
                                       "-l", "en", "-norm", "-a", _empty_paraphrases()]
                    here = os.path.dirname(os.path.abspath(meteor.__file__))
                    self.meteor_p = subprocess.Popen(self.meteor_cmd, cwd=here, stdin=subprocess.PIPE,
                                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                    self.lock = threading.Lock()

            _LIGHT = LightMeteor()
        return _LIGHT


@cache
def _empty_paraphrases() -> str:
    """An empty gzip file, for this process (removed at exit)."""
    fd, path = tempfile.mkstemp(prefix="medtemporal-meteor-paraphrases-", suffix=".gz")
    with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb"):
        pass
    atexit.register(_remove, path)
    return path


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def meteor_stats(t_refs: Sequence[str], t_hyps: Sequence[str]) -> list[str]:
    """Meteor's statistics line (``SCORE``) of each (reference, answer) pair of PTB tokens, each distinct pair asked
    once: pairs of `CLOSED_TOKENS` of the light process (`light_meteor`), the others of the full one."""
    lines: dict[tuple[str, str], str] = {}
    for ref, hyp in dict.fromkeys(zip(t_refs, t_hyps)):
        scorer = light_meteor() if ref in CLOSED_TOKENS and hyp in CLOSED_TOKENS else meteor_scorer()
        with scorer.lock:
            lines[ref, hyp] = scorer._stat(hyp, [ref])
    return [lines[pair] for pair in zip(t_refs, t_hyps)]


def meteor_evaluator() -> Any:
    """The Meteor process that sums statistics (``EVAL``): the full one when it is running, else the light one."""
    with _METEOR_LOCK:
        running = _METEOR
    return running if running is not None else light_meteor()


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
    """pycocoevalcap's PTB tokenization of each text: their own lower case when every text is a closed answer
    (`CLOSED_TOKENS`), else one Java call for all of them, in order (the tokenizer reads a line with the next:
    whether "A." ends a sentence depends on it, so no text is left out of the call). The tokenizer's stderr is
    captured, never shown (`_Captured`)."""
    closed = [t.strip().lower() for t in texts_]
    if all(t in CLOSED_TOKENS for t in closed):
        return closed
    from pycocoevalcap.tokenizer import ptbtokenizer

    captured = _Captured()
    with _TOKENIZER_LOCK:
        ptbtokenizer.subprocess, ptbtokenizer.tempfile = captured, _TempFiles(captured)  # type: ignore[assignment]
        try:
            out = ptbtokenizer.PTBTokenizer().tokenize({i: [{"caption": t}] for i, t in enumerate(texts_)})
        finally:
            ptbtokenizer.subprocess, ptbtokenizer.tempfile = subprocess, tempfile
    for child in captured.children:
        if child.returncode:
            raise subprocess.CalledProcessError(child.returncode, child.args)
    return [out[i][0] for i in range(len(texts_))]


_TOKENIZER_LOCK = threading.Lock()


class _Captured:
    """The `subprocess` module as pycocoevalcap's PTB tokenizer sees it during `tokenize`: its Java child's stderr
    ("PTBTokenizer tokenized N tokens at …" on every call, and any complaint) is captured rather than written to
    the user's terminal, and the child is kept, so that a failed one is an error instead of empty tokens. The
    input file it names by its base name (in the package folder) is named by its path in the temporary folder
    (`_TempFiles`)."""

    def __init__(self) -> None:
        self.children: list[subprocess.Popen[bytes]] = []
        self.files: dict[str, str] = {}
        """Base name → path of each temporary file the tokenizer made."""

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)

    def Popen(self, args: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:  # noqa: N802 (the module's name)
        child = subprocess.Popen([self.files.get(a, a) for a in args], **{**kwargs, "stderr": subprocess.PIPE})
        self.children.append(child)
        return child


class _TempFiles:
    """The `tempfile` module as pycocoevalcap's PTB tokenizer sees it during `tokenize`: its input file goes to the
    temporary folder, not into its own package folder (``dir=``), which may be read-only (a system install)."""

    def __init__(self, captured: _Captured) -> None:
        self.captured = captured

    def __getattr__(self, name: str) -> Any:
        return getattr(tempfile, name)

    def NamedTemporaryFile(self, *args: Any, dir: str | None = None, **kwargs: Any) -> Any:  # noqa: A002, N802
        made = tempfile.NamedTemporaryFile(*args, **kwargs)
        self.captured.files[os.path.basename(made.name)] = made.name
        return made


@lru_cache(maxsize=4)
def tokenized(refs: tuple[str, ...], hyps: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(references, answers) in PTB tokens (one Java call for both)."""
    tokens = tokenize([*refs, *hyps])
    return tokens[:len(refs)], tokens[len(refs):]


def cider_values(t_refs: Sequence[str], t_hyps: Sequence[str]) -> np.ndarray:
    """Per-item CIDEr-D of tokenized pairs, with the document frequencies of these references (``Cider``)."""
    from pycocoevalcap.cider.cider import Cider

    if not t_refs:
        return np.zeros(0)
    gts = {i: [r] for i, r in enumerate(t_refs)}
    res = {i: [h] for i, h in enumerate(t_hyps)}
    return np.asarray(Cider().compute_score(gts, res)[1], dtype=float)


@lru_cache(maxsize=2)
def score_texts(refs: tuple[str, ...], hyps: tuple[str, ...]) -> Scored:
    """Tokenize, then every metric's per-item statistics (module doc), from the library's own code."""
    from pycocoevalcap.bleu.bleu_scorer import cook_refs, cook_test
    from pycocoevalcap.rouge.rouge import Rouge

    t_refs, t_hyps = tokenized(refs, hyps)
    bleu = np.zeros((len(refs), BLEU_WIDTH))
    for i, (ref, hyp) in enumerate(zip(t_refs, t_hyps)):
        cooked = cook_test(hyp, cook_refs([ref]))
        bleu[i] = [cooked["testlen"], cooked["reflen"][0], *cooked["guess"], *cooked["correct"]]
    lines = meteor_stats(t_refs, t_hyps)
    meteor = np.array([[float(v) for v in line.split()] for line in lines]) if lines else np.zeros((0, 1))
    if len(meteor):
        meteor[exact_segments(meteor), CHUNKS] = 0.0
    rouge = Rouge()
    rouge_l = np.array([rouge.calc_score([hyp], [ref]) for ref, hyp in zip(t_refs, t_hyps)], dtype=float)
    return Scored(bleu, meteor, rouge_l, cider_values(t_refs, t_hyps))


def exact_segments(stats: np.ndarray) -> np.ndarray:
    """Rows whose answer matched its reference whole, in one chunk: Meteor adds no chunks of theirs to an
    aggregate (``MeteorStats.addStats``: ``if (!(testTotalMatches == testLength && referenceTotalMatches ==
    referenceLength && chunks == 1)) chunks += ss.chunks``), so their chunks are stored as 0."""
    test = stats[:, 4:20:2].sum(axis=1)  # content and function matches of the test, every module
    ref = stats[:, 5:20:2].sum(axis=1)
    return (test == stats[:, 0]) & (ref == stats[:, 1]) & (stats[:, CHUNKS] == 1)


def stats(items: Sequence[Item], answers: Sequence[Answer], pick: Callable[[tuple[str, ...], tuple[str, ...]],
           np.ndarray], width: int) -> np.ndarray:
    """One metric's per-item statistics, ``pick(refs, hyps)``, or NaN (``width`` columns; any width for METEOR,
    whose reduction reads none of a NaN row) where Java cannot run."""
    if not java_status()[0]:
        return np.full((len(items), width), np.nan)
    if not items:
        return np.zeros((0, width))
    try:
        return pick(*texts(items, answers))
    except (OSError, ValueError, IndexError, subprocess.SubprocessError) as exc:  # the Java side failed
        _FAILURE["reason"] = f"pycocoevalcap failed ({type(exc).__name__}: {exc})"
        return np.full((len(items), width), np.nan)


@lru_cache(maxsize=8)
def _bleu_rows(data: bytes, rows: int) -> np.ndarray:
    """BLEU-1…4 of each of ``rows`` rows of summed counts (``data``: float64 bytes, `BLEU_WIDTH` per row), NaN for
    a row holding NaN: one ``BleuScorer`` whose entries are the rows, so that its per-entry scores (the loop over
    ``ctest`` in ``compute_score``) are each row's corpus BLEU, as a scorer holding that row alone computes it.
    Cached: BLEU-1 … BLEU-4 reduce the same sums."""
    from pycocoevalcap.bleu.bleu_scorer import BleuScorer

    flat = np.frombuffer(data, dtype=np.float64).reshape(rows, BLEU_WIDTH)
    out = np.full((rows, 4), np.nan)
    keep = np.flatnonzero(~np.isnan(flat).any(axis=1))
    if len(keep):
        scorer = BleuScorer(n=4)
        values = flat[keep].tolist()  # Python floats: the library's arithmetic on them is the same, and faster
        scorer.crefs = [([row[1]], {}) for row in values]
        scorer.ctest = [{"testlen": row[0], "reflen": [row[1]], "guess": row[2:6], "correct": row[6:10]}
                        for row in values]
        out[keep] = np.asarray(scorer.compute_score(option="closest", verbose=0)[1]).T
    return out


def reduce_bleu(n: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """BLEU-``n`` of summed per-item counts, by ``BleuScorer.compute_score`` (any leading batch axes; every
    bootstrap replicate in one call, `_bleu_rows`)."""

    def reduce(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
        flat = np.ascontiguousarray(sums, dtype=np.float64).reshape(-1, BLEU_WIDTH)
        return _bleu_rows(flat.tobytes(), len(flat))[:, n - 1].reshape(sums.shape[:-1])

    reduce.__name__ = f"bleu_{n}_of_summed_counts"
    return reduce


def reduce_meteor(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """METEOR of summed per-item statistics: one Meteor ``EVAL`` line holding every (batch) sum."""
    flat = np.ascontiguousarray(sums, dtype=np.float64).reshape(-1, sums.shape[-1])
    return _meteor_rows(flat.tobytes(), flat.shape[1]).reshape(sums.shape[:-1])


@lru_cache(maxsize=8)
def _meteor_rows(data: bytes, width: int) -> np.ndarray:
    """`reduce_meteor` of rows of ``width`` statistics (``data``: float64 bytes), cached: groups holding the same
    items (a run's ``overall`` and its only task) draw the same replicates. Whole numbers are written without
    ``.0``: Meteor parses the same values from less text."""
    flat = np.frombuffer(data, dtype=np.float64).reshape(-1, width)
    out = np.full(len(flat), np.nan)
    rows = [k for k, row in enumerate(flat) if not np.isnan(row).any()]
    if rows:
        scorer = meteor_evaluator()
        line = "EVAL" + "".join(" ||| " + " ".join(map(_number, flat[k].tolist())) for k in rows)
        with scorer.lock:
            scorer.meteor_p.stdin.write(f"{line}\n".encode())
            scorer.meteor_p.stdin.flush()
            values = [float(scorer.meteor_p.stdout.readline().strip()) for _ in rows]
            scorer.meteor_p.stdout.readline()  # the score of all of them together
        out[rows] = values
    return out


def _number(value: float) -> str:
    """``value`` as Meteor reads it back exactly: ``17`` for 17.0, else its shortest repr."""
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


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


TEXT_INFO = dict(higher_is_better=True, percent=True, settings=settings)
"""The registration metadata every text metric shares."""


def _register_bleu(n: int) -> None:
    def bleu(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
        return stats(items, answers, lambda r, h: score_texts(r, h).bleu, BLEU_WIDTH)

    bleu.__doc__ = f"Per-item BLEU counts; BLEU-{n} of a group from their sum (`reduce_bleu`)."
    register("metric", f"diffvqa_bleu_{n}", aggregation=reduce_bleu(n),
             description=f"BLEU-{n} (pycocoevalcap Bleu(4), corpus-level over the group, PTB tokens)", **TEXT_INFO)(bleu)


for _n in (1, 2, 3, 4):
    _register_bleu(_n)


@register("metric", "diffvqa_meteor", aggregation=reduce_meteor,
          description="METEOR 1.5 (pycocoevalcap Meteor, corpus-level over the group, PTB tokens; Java)", **TEXT_INFO)
def meteor(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-item Meteor statistics; a group's METEOR from their sum (`reduce_meteor`)."""
    return stats(items, answers, lambda r, h: score_texts(r, h).meteor, 1)


@register("metric", "diffvqa_rouge_l", aggregation="mean",
          description="ROUGE-L (pycocoevalcap Rouge, beta 1.2, PTB tokens), averaged over questions", **TEXT_INFO)
def rouge_l(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-item ROUGE-L."""
    return stats(items, answers, lambda r, h: score_texts(r, h).rouge_l[:, None], 1)[:, 0]


@register("metric", "diffvqa_cider", aggregation="mean", higher_is_better=True, percent=True,
          settings=_cider_settings, corpus=True,
          description="CIDEr-D (pycocoevalcap Cider, PTB tokens), averaged; document frequencies over all items "
          "scored together")
def cider(items: Sequence[Item], answers: Sequence[Answer]) -> np.ndarray:
    """Per-item CIDEr-D with the document frequencies of all the items given."""
    return stats(items, answers, lambda r, h: score_texts(r, h).cider[:, None], 1)[:, 0]
