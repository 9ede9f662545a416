"""``medtemporal build longitudinal-rrg --mimic-cxr-jpg ROOT [--reports DIR] --out DIR``: the test split as items.

Reads the MIMIC-CXR-JPG metadata and official split (`medtemporal.sources.mimic_cxr_studies`), the reports
of the studies it uses (`medtemporal.sources.mimic_cxr_reports`), keeps every study of ``--split`` whose
report has a findings section and finds its prior by ``--prior-rule`` (`studies`), makes one item per study and section
(`items`: tasks ``findings`` and ``impression``), and finds each item's nearest training report (`nearest`)
unless ``--no-retrieval``. The manifest counts everything left out (``exclusions``) and what was noted without
leaving anything out (``config.notes``: tied prior times, priors without a report, training images the
retrieval skipped).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

from medtemporal.family import InvalidInputError, Item, Manifest, UnavailableError, sha256_file
from medtemporal.benchmarks.longitudinal_rrg.items import BENCHMARK, SECTIONS, case_meta, make_item
from medtemporal.benchmarks.longitudinal_rrg.nearest import (
    DEFAULT_LIMIT,
    EMBEDDINGS,
    default_embedder,
    nearest_reports,
    training_corpus,
)
from medtemporal.benchmarks.longitudinal_rrg.studies import PRIOR_RULES, cases, usable
from medtemporal.provenance import licence_in_background
from medtemporal.sources.jpg_root import add_jpg_arguments, jpg_root
from medtemporal.sources.mimic_cxr import _check_jpg_root
from medtemporal.sources.mimic_cxr_studies import SPLITS, read_study_table, split_path

VERSION = "1.0"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``medtemporal build longitudinal-rrg``."""
    src = p.add_argument_group("data")
    add_jpg_arguments(src, "the image root, with mimic-cxr-2.0.0-metadata.csv.gz and (by default) "
                      "mimic-cxr-2.0.0-split.csv.gz", "build with the images unchecked")
    src.add_argument("--reports", type=Path, metavar="DIR",
                     help="root of the MIMIC-CXR reports (files/pXX/pSUBJECT/sSTUDY.txt, as mimic-cxr-reports.zip "
                     "unzips); default: --mimic-cxr-jpg")
    src.add_argument("--split-file", type=Path, metavar="FILE",
                     help="the official split file, when it is not in the MIMIC-CXR-JPG root")
    src.add_argument("--split", choices=SPLITS, default="test", help="the split whose studies are items "
                     "(default %(default)s, the common test set)")
    src.add_argument("--prior-rule", choices=tuple(PRIOR_RULES), default="ours",
                     help="which study is each item's prior: ours (CXRMate's: the immediately preceding study), libra "
                     "(the latest study of an earlier day) or longitudinal-mimic (also keeps only the studies with "
                     "an earlier study of the split, the 2,058-study set); default %(default)s")
    src.add_argument("--sections", default=",".join(SECTIONS), metavar="LIST",
                     help=f"tasks to build, comma-separated from {', '.join(SECTIONS)} (default: both)")
    ret = p.add_argument_group("nearest training report (the image-retrieval baseline)")
    ret.add_argument("--retrieval-embedder", metavar="SPEC",
                     help="image embedder (pixel[:SIZE], clip:NAME_OR_PATH, open_clip:PATH); default: pixel for "
                     "phantoms, XrayCLIP for real data")
    ret.add_argument("--retrieval-corpus", type=int, default=DEFAULT_LIMIT, metavar="N",
                     help="training studies in the corpus, a seeded sample (default %(default)s; 0: all)")
    ret.add_argument("--no-retrieval", dest="retrieval", action="store_false",
                     help="do not find nearest training reports (the nearest-report baseline then cannot run)")


def _sections(value: str) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(s.strip() for s in value.split(",") if s.strip()))
    if not chosen or any(s not in SECTIONS for s in chosen):
        raise InvalidInputError(f"--sections {value!r} names unknown sections; use a comma-separated subset of "
                                f"{', '.join(SECTIONS)}.")
    return chosen


def _reports(path: Path) -> Path:
    if not (path / "files").is_dir():
        raise InvalidInputError(f"--reports {path} has no files/ folder; pass the folder mimic-cxr-reports.zip unzips "
                                "to (it holds files/pXX/).")
    return path.resolve()


def build(args: argparse.Namespace) -> tuple[list[Item], Manifest]:
    """Read the data the options name and make the items (module doc)."""
    sections = _sections(args.sections)
    if args.retrieval_corpus < 0:
        raise InvalidInputError(f"--retrieval-corpus must be 0 (all) or more, not {args.retrieval_corpus}.")
    if args.mimic_cxr_jpg is None:
        raise InvalidInputError("The build reads the metadata and split file of a MIMIC-CXR-JPG root; pass it with "
                                "--mimic-cxr-jpg (the folder that holds files/).")
    jpg = jpg_root(args.mimic_cxr_jpg, verify_images=args.verify_images)
    reports = _reports(args.reports) if args.reports is not None else jpg
    licence_check = licence_in_background(*dict.fromkeys([jpg, reports]))
    table, excluded = read_study_table(jpg, args.split_file)
    notes: Counter[str] = Counter()
    found = cases(table, reports, args.split, excluded, notes, args.prior_rule)
    if args.verify_images:
        found = usable(found, jpg, excluded, notes)
    if not found:
        raise InvalidInputError(f"No study of the {args.split} split in {jpg} has a report with a findings section "
                                f"(left out: {dict(excluded)}); check --mimic-cxr-jpg, --reports and the split file.")
    licence = licence_check.result()
    metas = [case_meta(c) for c in found]
    retrieval: dict[str, Any] = {"retrieval": None}
    if args.retrieval:
        from medtemporal.retrieval import load_embedder

        spec = args.retrieval_embedder or default_embedder(licence)
        try:
            embedder = load_embedder(spec)
        except UnavailableError as exc:
            raise UnavailableError(f"{str(exc).rstrip('.')}; or build with --retrieval-embedder pixel (offline, "
                                   "a weaker baseline) or --no-retrieval (no nearest-report baseline).") from None
        corpus = training_corpus(table, reports, jpg, split="train", limit=args.retrieval_corpus, seed=args.seed,
                                 notes=notes)
        if not corpus.studies:
            raise InvalidInputError(
                f"The nearest-report corpus is empty: no study of the train split in {jpg} has a readable frontal "
                f"image and a report with a findings or impression section under {reports} "
                f"({notes['retrieval_image_unreadable']} unreadable images); check --reports and the split file, "
                "or build with --no-retrieval.")
        for meta, near in zip(metas, nearest_reports(found, corpus, embedder, jpg, Path(args.out) / EMBEDDINGS)):
            meta["nearest"] = near
        retrieval = {"retrieval": {"embedder": spec, "embedder_identity": embedder.identity(), "split": "train",
                                   "corpus_studies": len(corpus.studies), "limit": args.retrieval_corpus,
                                   "query": "the current study's first image (frontal where it has one)"}}
    items: list[Item] = []
    for section in sections:
        for case, meta in zip(found, metas):
            if case.current.sections.get(section):
                near = meta.get("nearest")
                items.append(make_item(case, section, {**meta, "nearest": near[section] if near else None}))
            else:
                excluded[f"{section}_no_section"] += 1
    with_prior = sum(c.prior is not None for c in found)
    config = {
        "split": args.split, "sections": list(sections), "verify_images": args.verify_images,
        "prior_rule": args.prior_rule, "prior_rule_text": PRIOR_RULES[args.prior_rule], "studies": len(found), "patients": len({c.current.record.subject_id for c in found}),
        "images": sum(len(c.current.record.images) for c in found), "with_prior": with_prior,
        "no_prior": len(found) - with_prior, "notes": dict(sorted(notes.items())), **retrieval,
    }
    metadata, split_file = _check_jpg_root(jpg), split_path(jpg, args.split_file)
    sources = {f"mimic-cxr-jpg/{metadata.name}": sha256_file(metadata), split_file.name: sha256_file(split_file)}
    manifest = Manifest(benchmark=BENCHMARK, version=VERSION, seed=args.seed, licence=licence, image_root=str(jpg),
                        config=config, sources=sources, exclusions=dict(sorted(excluded.items())))
    return items, manifest
