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
    cxr.add_argument("--patients", type=int, required=True, help="number of patients")
    cxr.add_argument("--out", required=True, help="output folder (must not exist or be empty)")
    cxr.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    cxr.add_argument("--no-images", action="store_true", help="skip the JPEGs (fast, for MIMIC-scale cohorts)")
    cxr.add_argument("--image-size", type=int, default=320, metavar="PX", help="image width and height (default 320)")
    cxr.add_argument(
        "--profile", choices=("longitudinal", "mimic"), default="longitudinal",
        help="visits per patient: mostly 5-15 (default) or MIMIC-like, about 3.5 on average",
    )
    cxr.set_defaults(func=run_cxr)
    # --- chexpert-plus (TemMed-Bench's source) ---
    cp = kinds.add_parser(
        "chexpert-plus",
        help="CheXpert Plus phantoms (df_chexpert_plus_240401.csv + PNG/) with exact ground truth",
        description="Write a phantom df_chexpert_plus_240401.csv, PNG images, phantom.json and "
        "phantom_truth.jsonl under OUT, from the same trajectories and renderer as the cxr phantoms.",
    )
    cp.add_argument("--patients", type=int, required=True, help="number of patients")
    cp.add_argument("--out", required=True, help="output folder (must not exist or be empty)")
    cp.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    cp.add_argument("--no-images", action="store_true", help="skip the PNGs (CSV and truth only)")
    cp.add_argument("--image-size", type=int, default=256, metavar="PX", help="image width and height (default 256)")
    cp.set_defaults(func=run_chexpert_plus)


def run_cxr(args: argparse.Namespace) -> int:
    from medtemporal.phantoms.cxr import write_cxr_phantoms

    made = write_cxr_phantoms(
        args.out, patients=args.patients, seed=args.seed, images=not args.no_images,
        image_size=args.image_size, profile=args.profile,
    )
    images = f"{made.images} images" + ("" if not args.no_images else " listed (no JPEGs written)")
    print(f"Wrote {made.patients} patients, {made.studies} studies, {images} to {made.root}")
    print(f"  MIMIC-CXR-JPG root:     {made.mimic_cxr_jpg}")
    print(f"  MIMIC-Ext-CXR-QBA root: {made.qba}")
    print(f"  ground truth:           {made.truth}")
    return 0


def run_chexpert_plus(args: argparse.Namespace) -> int:
    from medtemporal.phantoms.chexpert_plus import write_chexpert_plus

    made = write_chexpert_plus(args.out, patients=args.patients, seed=args.seed, image_size=args.image_size,
                               images=not args.no_images)
    print(f"Wrote {made.patients} patients, {made.studies} studies, {made.images} images to {made.root}")
    print(f"  CheXpert Plus root: {made.root}  (medtemporal build temmed --chexpert-plus {made.root} ...)")
    print(f"  ground truth:       {made.truth}")
    return 0
