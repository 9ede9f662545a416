"""``medtemporal build mi-cxr``: its options, and the assembly of a benchmark from raw data or the released file.

Two ways in, one command:

``medtemporal build mi-cxr --mimic-cxr-jpg DIR --qba DIR --out DIR``
    builds the benchmark from raw data (MIMIC-CXR-JPG + MIMIC-Ext-CXR-QBA, or
    a phantom folder in the same layout) with the paper's rules; see
    `pipeline` for the pipeline and `windows`, `tel`, `summaries` and
    `balance` for the rules.

``medtemporal build mi-cxr --official micxr_test.jsonl --mimic-cxr-jpg DIR --out DIR``
    imports the released question file as a benchmark (`release`).

The manifest licence is ``credentialed`` for real data and ``synthetic`` only
for phantoms whose checksum manifest verifies
(`medtemporal.provenance.licence_of`: ``medtemporal phantoms cxr`` writes
``phantom_manifest.json`` beside ``mimic-cxr-jpg/`` and ``mimic-ext-cxr-qba/``).
An imported question file counts too: it is ``credentialed`` unless its sha256
is a reviewed release (`known_releases`), and the benchmark's licence is the most
restrictive of its inputs.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from medtemporal.family import (
    InvalidInputError, Item, Manifest, add_llm_options, add_official_option, imported, sha256_file,
)
from medtemporal.benchmarks.mi_cxr.balance import Caps
from medtemporal.benchmarks.mi_cxr.pipeline import (
    BENCHMARK,
    ICR_VARIANT_ITEMS,
    PAPER_TOTAL,
    QTYPES,
    VERSION,
    MiCxrConfig,
    abnormality_mix,
    build_items,
)
from medtemporal.benchmarks.mi_cxr.release import read_official
from medtemporal.benchmarks.mi_cxr.known_releases import RELEASES
from medtemporal.benchmarks.mi_cxr.windows import WINDOW
from medtemporal.provenance import licence_in_background
from medtemporal.sources.jpg_root import add_jpg_arguments, jpg_root, keep_with_images

SOURCE_FILES = {
    "mimic-cxr-jpg": ("mimic-cxr-2.0.0-metadata.csv.gz",),
    "qba": ("metadata/study_metadata.parquet",),
}
"""Files whose sha256 goes into the manifest, by root (images are not hashed)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``medtemporal build mi-cxr``."""
    src = p.add_argument_group("data")
    add_jpg_arguments(src, "the image root, and the metadata CSV of a build",
                      "a build keeps studies without checking their frontal JPEG; an --official import keeps "
                      "the root as given")
    src.add_argument("--qba", type=Path, metavar="DIR",
                     help="MIMIC-Ext-CXR-QBA root (holds scene_data/ and metadata/study_metadata.parquet)")
    add_official_option(src, "import the released micxr_test.jsonl instead of building (needs only --mimic-cxr-jpg)")
    src.add_argument("--min-quality", default="B", metavar="GRADE",
                     help="lowest QBA observation quality kept, D ... A++ (default %(default)s)")
    rules = p.add_argument_group(
        "construction (quotas and abnormality mix are the paper's, Tables 9-10; appendix A.5.2 names the caps "
        "but gives no values: the cap defaults are ours)")
    rules.add_argument("--max-items", type=int, default=PAPER_TOTAL, metavar="N",
                       help=f"size of the main benchmark; Table 9's per-qtype quotas scale to it (default {PAPER_TOTAL})")
    rules.add_argument("--quota", action="append", default=[], metavar="QTYPE=N",
                       help=f"override one qtype's quota (repeatable); qtypes: {', '.join(QTYPES)}")
    rules.add_argument("--null-cap", type=float, default=Caps.null, metavar="F",
                       help="largest share of a qtype's items answered by the null option E where the answers can "
                       "take all four letters; where only k can, E keeps its ratio to one letter "
                       "(1/(k+1) with our default %(default)s)")
    rules.add_argument("--abnormality-cap", type=float, default=Caps.abnormality, metavar="F",
                       help="largest share of a qtype's items about one abnormality (our default %(default)s)")
    rules.add_argument("--uniform-pattern-cap", type=float, default=Caps.uniform_pattern, metavar="F",
                       help="largest share of a qtype's items whose abnormality is all present or all absent "
                       "over the window, of the items built (our default %(default)s)")
    rules.add_argument("--no-mix", action="store_true",
                       help="do not sample abnormalities to the paper's Table 10 frequencies; only the caps apply")
    rules.add_argument("--icr-variant", action="store_true",
                       help="also build the ICR variant (task ICR-V: the interval is given; appendix D)")
    rules.add_argument("--icr-variant-items", type=int, default=ICR_VARIANT_ITEMS, metavar="N",
                       help="size of the ICR variant (default %(default)s)")
    add_llm_options(p, purpose="reword summary options with this model (the paper's prompts); default: templates",
                    data="annotations", old="text", title="option text")


def config_from_args(args: argparse.Namespace) -> MiCxrConfig:
    """A `MiCxrConfig` from parsed options, with one clear sentence for a bad value."""
    for name in ("null_cap", "abnormality_cap", "uniform_pattern_cap"):
        value = getattr(args, name)
        if not 0.0 <= value <= 1.0:
            raise InvalidInputError(f"--{name.replace('_', '-')} must be a fraction between 0 and 1, not {value}.")
    if args.max_items < 0 or args.icr_variant_items < 0:
        raise InvalidInputError("--max-items and --icr-variant-items must not be negative.")
    overrides = {}
    for spec in args.quota:
        qtype, sep, n = spec.partition("=")
        if not sep or not n.strip().isdigit():
            raise InvalidInputError(f"--quota {spec!r} is not QTYPE=N (e.g. --quota single_emergence=100).")
        overrides[qtype.strip()] = int(n)
    config = MiCxrConfig(
        seed=args.seed,
        max_items=args.max_items,
        quotas=overrides,
        caps=Caps(args.null_cap, args.abnormality_cap, args.uniform_pattern_cap),
        icr_variant=args.icr_variant,
        icr_variant_items=args.icr_variant_items,
        match_mix=not args.no_mix,
    )
    config.resolved_quotas()  # names an unknown qtype now, before any work
    return config


def source_checksums(roots: dict[str, Path]) -> dict[str, str]:
    """sha256 of each metadata file of `SOURCE_FILES` that exists, keyed ``root/relative path``."""
    out = {}
    for name, root in roots.items():
        for rel in SOURCE_FILES.get(name, ()):
            if (root / rel).is_file():
                out[f"{name}/{rel}"] = sha256_file(root / rel)
    return out


def _require_dir(path: Path | None, option: str, what: str) -> Path:
    if path is None:
        raise InvalidInputError(f"{option} is required; pass the {what} folder.")
    if not path.is_dir():
        raise InvalidInputError(f"{option} {path} is not a folder; pass the {what} folder.")
    return path.resolve()


def import_official(path: Path, image_root: Path | None, verify_images: bool = True) -> tuple[list[Item], Manifest]:
    """The released question file as a benchmark whose images resolve against ``image_root``.

    With ``verify_images`` off the root is taken as given (to inspect or export
    the questions without the images); runs still need the images.
    """
    if image_root is None:
        raise InvalidInputError("--official needs --mimic-cxr-jpg, the root the question file's image paths are under.")
    items, repeated = read_official(path)
    exclusions: Counter[str] = Counter()
    if repeated:
        exclusions["repeated_line"] = repeated
        print(f"medtemporal: note: {path} repeats {repeated} line(s) verbatim; each question is kept once "
              "(recorded as exclusions.repeated_line).", file=sys.stderr)
    if verify_images:
        root = jpg_root(Path(image_root), verify_images=True)
        items = keep_with_images(items, lambda item: [ref.path for ref in item.images], root, exclusions)
    else:
        root = Path(image_root).resolve()
    release = imported({Path(path).name: Path(path)}, root, releases=RELEASES)
    manifest = Manifest(
        benchmark=BENCHMARK,
        version=VERSION,
        licence=release.licence,
        image_root=str(root),
        config={"official": Path(path).name},
        sources=release.sources,
        exclusions=dict(sorted(exclusions.items())),
    )
    return items, manifest


def build(args: argparse.Namespace) -> tuple[list[Item], Manifest]:
    """Build MI-CXR from parsed options (`add_arguments`, plus ``--seed``)."""
    if args.official is not None:
        return import_official(args.official, args.mimic_cxr_jpg, args.verify_images)
    config = config_from_args(args)
    if args.mimic_cxr_jpg is None:
        raise InvalidInputError("--mimic-cxr-jpg is required; pass the MIMIC-CXR-JPG root folder.")
    jpg = jpg_root(args.mimic_cxr_jpg, verify_images=True)
    qba = _require_dir(args.qba, "--qba", "MIMIC-Ext-CXR-QBA root")
    from medtemporal.sources.mimic_cxr import read_timelines

    licence_check = licence_in_background(jpg, qba)
    timelines, read_exclusions = read_timelines(
        jpg, qba, min_quality=args.min_quality, verify_images=args.verify_images, min_visits=WINDOW,
        with_reports=False,  # questions and options come from the scene graphs; no report text is used
    )
    licence = licence_check.result()
    text_model = None
    settings: dict[str, Any] = {"text": "template"}
    if args.llm:
        from medtemporal.benchmarks.mi_cxr.llm import open_text_model

        text_model = open_text_model(args.llm, args.llm_cache, args.seed, licence, args.allow_remote_data)
        settings = {"text": "llm", "text_model": text_model.identity()}
    items, exclusions = build_items(timelines, config, text_model)
    exclusions.update(read_exclusions)
    manifest = Manifest(
        benchmark=BENCHMARK,
        version=VERSION,
        seed=config.seed,
        licence=licence,
        image_root=str(jpg),
        config={**config.as_dict(), **settings, "min_quality": args.min_quality, "verify_images": args.verify_images,
                "abnormality_mix": abnormality_mix(items, config.entities)},
        sources=source_checksums({"mimic-cxr-jpg": jpg, "qba": qba}),
        exclusions=dict(sorted((k, v) for k, v in exclusions.items() if v)),
    )
    return items, manifest
