"""The nearest training report by image retrieval: what the ``nearest-report`` baseline answers, found at build
time and stored in each item's ``meta["nearest"]`` (``{"study_id", "score", "text"}``), so a run needs only the
benchmark folder.

The corpus is the training split's studies with a frontal image and a report that has the task's section
(at most ``limit`` of them, a seeded sample when there are more; every one with ``limit`` 0). Each study is
its first frontal image, embedded with ``embedder`` (`medtemporal.retrieval.load_embedder`); an item's query
is its current study's first image (frontal where it has one). The answer of the corpus study whose image is
most similar (cosine, `medtemporal.retrieval.ImageRetriever`, ties to the earlier study), among those of other
patients (never the query's own study or another of its patient's, whatever split the items and the corpus
come from: ``--split train`` would otherwise retrieve each item's own report), is the item's
section of that study's report: the image-retrieval baseline every report-generation paper should print
(how far does "find a similar image and copy its report" go?). Vectors are cached in the benchmark's
``embeddings/`` folder (`medtemporal.retrieval.image_embeddings`).

Embedders: `PHANTOM_EMBEDDER` (the offline pixel thumbnail) for phantoms; `LEARNED_EMBEDDER` (XrayCLIP, a
CLIP ViT-B/16 fine-tuned on chest X-rays by Stanford AIMI, CC-BY-NC-4.0, fetched into the Hugging Face cache
on first use; the encoder TemMed-Bench's build uses) for real data, unless ``--retrieval-embedder`` names
another. Corpus studies whose image is missing or corrupt are skipped and counted
(``retrieval_image_unreadable``).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from medtemporal.benchmarks.longitudinal_rrg.items import SECTIONS
from medtemporal.benchmarks.longitudinal_rrg.studies import Case
from medtemporal.progress import progress_bar
from medtemporal.retrieval import Embedder, ImageRetriever, image_embeddings
from medtemporal.sources.mimic_cxr import _image_state, report_path
from medtemporal.sources.mimic_cxr_reports import read_sections
from medtemporal.sources.mimic_cxr_studies import StudyRecord

LEARNED_EMBEDDER = "clip:StanfordAIMI/XrayCLIP__vit-b-16__laion2b-s34b-b88k"
PHANTOM_EMBEDDER = "pixel"
DEFAULT_LIMIT = 20_000
"""Training studies in the corpus by default: embedding all ~222,000 takes hours on a CPU."""
EMBEDDINGS = "embeddings"


def default_embedder(licence: str) -> str:
    """`PHANTOM_EMBEDDER` for synthetic data, else `LEARNED_EMBEDDER`."""
    return PHANTOM_EMBEDDER if licence == "synthetic" else LEARNED_EMBEDDER


@dataclass(frozen=True)
class Corpus:
    """The retrieval corpus: one frontal image and the report sections of each study."""

    studies: list[str]
    paths: list[str]
    sections: list[dict[str, str]]
    patients: list[str]


def training_corpus(table: dict[int, list[StudyRecord]], reports: Path, root: Path, *, split: str, limit: int,
                    seed: int, notes: Counter[str]) -> Corpus:
    """The corpus (module doc) from the studies of ``split``; what is skipped is counted in ``notes``."""
    pool = [s for studies in table.values() for s in studies if s.split == split and s.frontal is not None]
    if limit and len(pool) > limit:
        chosen = set(random.Random(f"{seed}:retrieval corpus").sample(range(len(pool)), limit))
        pool = [s for k, s in enumerate(pool) if k in chosen]
    corpus = Corpus([], [], [], [])
    with progress_bar(total=len(pool), desc="retrieval corpus", unit="study", leave=False) as bar:
        for record in pool:
            bar.update(1)
            sections = read_sections(reports / report_path(record.subject_id, record.study_id))
            kept = {k: sections[k] for k in SECTIONS if sections.get(k)}
            if not kept:
                continue
            if _image_state(root / str(record.frontal)):
                notes["retrieval_image_unreadable"] += 1
                continue
            corpus.studies.append(record.study)
            corpus.paths.append(str(record.frontal))
            corpus.sections.append(kept)
            corpus.patients.append(record.patient)
    return corpus


def nearest_reports(cases: Sequence[Case], corpus: Corpus, embedder: Embedder, root: Path,
                    folder: Path) -> list[dict[str, dict[str, Any] | None]]:
    """For each case, section → the nearest corpus study's ``{"study_id", "score", "text"}`` (None when the
    corpus has no study with that section)."""
    queries = image_embeddings(embedder, root, [c.current.record.images[0][0] for c in cases], folder)
    keys = image_embeddings(embedder, root, corpus.paths, folder)
    out: list[dict[str, dict[str, Any] | None]] = [dict.fromkeys(SECTIONS) for _ in cases]
    own = [c.current.record.patient for c in cases]
    for section in SECTIONS:
        index = [k for k, s in enumerate(corpus.sections) if section in s]
        if not index or not cases:
            continue
        # enough neighbours that one of another patient is among them: the largest count of one patient's studies
        depth = min(len(index), 1 + max(Counter(corpus.patients[k] for k in index).values()))
        best, scores = ImageRetriever(keys[index]).search(queries, depth)
        for q, found in enumerate(out):
            hit = next(((index[i], score) for i, score in zip(best[q].tolist(), scores[q].tolist())
                        if corpus.patients[index[i]] != own[q]), None)
            if hit is not None:
                k, score = hit
                found[section] = {"study_id": corpus.studies[k], "score": round(float(score), 6),
                                  "text": corpus.sections[k][section]}
    return out
