"""``medtemporal build eltlm``: import the released ``test.json``, or build from MIMIC-CXR / phantoms.

``medtemporal build eltlm --official test.json [--mimic-cxr-jpg ROOT | --no-verify-images] [--order date|file] --out DIR``
    reads the released file (`release`); with a root, images resolve and
    studies are put in time order (``--order file``: as the file lists them).
``medtemporal build eltlm --mimic-cxr-jpg ROOT --qba QBA [--reports DIR] --out DIR``
    builds items by rule (`build`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from medtemporal.backends.uri import shown_uri
from medtemporal.family import (
    InvalidInputError, Item, Manifest, add_llm_options, add_official_option, imported, sha256_file,
)
from medtemporal.benchmarks.eltlm.build import LENGTHS, MIN_REPORT_WORDS, build_items
from medtemporal.benchmarks.eltlm.release import BENCHMARK, ORDERS, read_official
from medtemporal.benchmarks.eltlm.known_releases import RELEASES
from medtemporal.benchmarks.eltlm.studies import read_studies
from medtemporal.provenance import licence_in_background
from medtemporal.sources.jpg_root import add_jpg_arguments
from medtemporal.sources.mimic_cxr import METADATA_CSV, read_timelines

VERSION = "1.1"
"""1.1: each item records ``date_order_differs`` (and ``order``); ``--order file|date``."""


def source_checksums(jpg: Path, qba: Path | None = None) -> dict[str, str]:
    """sha256 of the metadata files read."""
    files = {"mimic-cxr-jpg/" + METADATA_CSV: jpg / METADATA_CSV}
    if qba is not None:
        files["qba/metadata/study_metadata.parquet"] = qba / "metadata" / "study_metadata.parquet"
    return {name: sha256_file(path) for name, path in files.items() if path.is_file()}


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``medtemporal build eltlm``."""
    src = p.add_argument_group("data")
    add_official_option(src, "import the released test.json instead of building")
    add_jpg_arguments(src, "the image root, and the metadata CSV that dates the studies",
                      "with --official and no --mimic-cxr-jpg, load and validate the file with images left "
                      "unresolved")
    src.add_argument("--qba", type=Path, metavar="DIR",
                     help="MIMIC-Ext-CXR-QBA root, whose findings decide the reasoning answers (building only)")
    src.add_argument("--reports", type=Path, metavar="DIR",
                     help="root of the MIMIC-CXR reports (files/.../sSTUDY.txt); default: --mimic-cxr-jpg")
    src.add_argument("--min-quality", default="B", metavar="GRADE",
                     help="lowest QBA observation quality kept, D ... A++ (default %(default)s)")
    src.add_argument("--order", choices=ORDERS, default="date",
                     help="order of each item's images: date (StudyDate/StudyTime, default: the paper shows images "
                     "in time order) or file (as test.json lists them, ascending by study id; --official only)")
    add_llm_options(p, purpose="word the questions with this model (appendix C); answers stay rule-decided",
                    data="report text", old="question", title="question wording (building only)")


def import_official(path: Path, root: Path | None, verify_images: bool,
                    order: str = "date") -> tuple[list[Item], Manifest]:
    """The released file as a benchmark (rules in `release`), images in ``order`` (``date`` or ``file``)."""
    if root is None and verify_images:
        raise InvalidInputError(
            "--official needs --mimic-cxr-jpg to resolve and order the studies; "
            "pass --no-verify-images to load the questions with images left unresolved."
        )
    root = root.resolve() if root is not None else None
    studies = read_studies(root) if root is not None else None
    items, counts = read_official(path, studies, verify_images=verify_images, image_root=root, order=order)
    release = imported({Path(path).name: Path(path)}, root, releases=RELEASES)
    sources = {**release.sources, **(source_checksums(root) if root is not None else {})}
    manifest = Manifest(
        benchmark=BENCHMARK, version=VERSION, licence=release.licence,
        image_root=str(root) if root else None,
        config={"official": Path(path).name, "verify_images": verify_images, "images_resolved": root is not None,
                "order": order if root is not None else "file", "date_order_differs": counts.date_order_differs,
                "release": counts.as_dict()},
        sources=sources, exclusions=dict(counts.excluded),
    )
    return items, manifest


def build(args: argparse.Namespace) -> tuple[list[Item], Manifest]:
    """Build ELTLM from parsed options (`add_arguments`, plus ``--seed``)."""
    order = getattr(args, "order", "date")
    if args.official is not None:
        return import_official(args.official, args.mimic_cxr_jpg, args.verify_images, order)
    if order != "date":
        raise InvalidInputError(
            "--order file applies to --official imports: a build by rule writes its reference answers "
            "against the date order, so its images must stay in date order."
        )
    if args.mimic_cxr_jpg is None or args.qba is None:
        raise InvalidInputError(
            "Building ELTLM needs --mimic-cxr-jpg and --qba (or --official test.json to import the release)."
        )
    jpg, qba = args.mimic_cxr_jpg.resolve(), args.qba.resolve()
    licence_check = licence_in_background(jpg, qba, *([args.reports.resolve()] if args.reports else []))
    timelines, excluded = read_timelines(jpg, qba, reports=args.reports, min_quality=args.min_quality,
                                         verify_images=args.verify_images, min_visits=2)
    items, more = build_items(timelines, args.seed)
    excluded.update(more)
    licence = licence_check.result()
    questions: dict[str, object] = {"questions": "templates"}
    if args.llm:
        from medtemporal.benchmarks.eltlm.llm import PROMPT, prompt_sha256, word_questions

        items, worded = word_questions(items, args.llm, licence=licence, seed=args.seed,
                                       allow_remote_data=args.allow_remote_data, cache_path=args.llm_cache)
        questions = {"questions": "model-worded", "question_model": shown_uri(args.llm),
                     "question_prompt": PROMPT,
                     "question_prompt_sha256": prompt_sha256(), **worded}
    manifest = Manifest(
        benchmark=BENCHMARK, version=VERSION, seed=args.seed, licence=licence,
        image_root=str(jpg),
        config={"min_report_words": MIN_REPORT_WORDS, "lengths": list(LENGTHS), "min_quality": args.min_quality,
                "verify_images": args.verify_images, "order": "date",
                "date_order_differs": sum(bool(i.meta["date_order_differs"]) for i in items), **questions},
        sources=source_checksums(jpg, qba),
        exclusions=dict(sorted(excluded.items())),
    )
    return items, manifest
