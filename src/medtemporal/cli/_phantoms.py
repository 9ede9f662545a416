"""``medtemporal phantoms``: write synthetic raw datasets in their real on-disk schemas."""

from __future__ import annotations

import argparse


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("phantoms", help="write synthetic raw data (phantoms) in a real dataset's layout")
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    cxr = kinds.add_parser(
        "cxr",
        help="MIMIC-CXR-JPG + reports + MIMIC-Ext-CXR-QBA phantoms with exact ground truth",
        description="Write phantom MIMIC-CXR-JPG images and metadata, MIMIC-CXR reports, MIMIC-Ext-CXR-QBA "
        "scene graphs and metadata, and phantom_truth.jsonl under OUT.",
    )
    _common(cxr, image_size=320, no_images="skip the JPEGs (fast, for MIMIC-scale cohorts)")
    cxr.add_argument(
        "--profile", choices=("longitudinal", "mimic"), default="longitudinal",
        help="visits per patient: mostly 5-15 (default) or MIMIC-like, about 3.5 on average",
    )
    cxr.set_defaults(func=run_cxr)
    cp = kinds.add_parser(
        "chexpert-plus",
        help="CheXpert Plus phantoms (df_chexpert_plus_240401.csv + PNG/) with exact ground truth",
        description="Write a phantom df_chexpert_plus_240401.csv, PNG images, phantom_truth.jsonl and "
        "phantom_manifest.json under OUT, from the same trajectories and renderer as the cxr phantoms.",
    )
    _common(cp, image_size=256, no_images="skip the PNGs (CSV and truth only)")
    cp.set_defaults(func=run_chexpert_plus)


def _common(p: argparse.ArgumentParser, *, image_size: int, no_images: str) -> None:
    """The options every phantom kind takes."""
    p.add_argument("--patients", type=int, required=True, help="number of patients")
    p.add_argument("--out", required=True, help="output folder (must not exist or be empty)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--no-images", action="store_true", help=no_images)
    p.add_argument("--image-size", type=int, default=image_size, metavar="PX",
                   help="image width and height (default %(default)s)")


def run_cxr(args: argparse.Namespace) -> int:
    """Write MIMIC-CXR phantoms and say where the two roots are."""
    from medtemporal.phantoms.cxr import write_cxr_phantoms

    made = write_cxr_phantoms(
        args.out, patients=args.patients, seed=args.seed, images=not args.no_images,
        image_size=args.image_size, profile=args.profile,
    )
    images = f"{made.images} images" + (" listed (no JPEGs written)" if args.no_images else "")
    print(f"Wrote {made.patients} patients, {made.studies} studies, {images} to {made.root}")
    print(f"  MIMIC-CXR-JPG root:     {made.mimic_cxr_jpg}")
    print(f"  MIMIC-Ext-CXR-QBA root: {made.qba}")
    print(f"  ground truth:           {made.truth}")
    return 0


def run_chexpert_plus(args: argparse.Namespace) -> int:
    """Write CheXpert Plus phantoms and say where their root is."""
    from medtemporal.phantoms.chexpert_plus import write_chexpert_plus

    made = write_chexpert_plus(args.out, patients=args.patients, seed=args.seed, image_size=args.image_size,
                               images=not args.no_images)
    print(f"Wrote {made.patients} patients, {made.studies} studies, {made.images} images to {made.root}")
    print(f"  CheXpert Plus root: {made.root}  (pass it to `medtemporal build` as --chexpert-plus)")
    print(f"  ground truth:       {made.truth}")
    return 0
