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
    sk = kinds.add_parser(
        "skillqa",
        help="ClinicalSkillQA phantoms: CPR, AED and BMV key-frame sets (4 or 6 frames) with their gold",
        description="Write one folder of drawn key frames per instance (A.jpg ...), gold.jsonl, phantom_manifest.json "
        "and phantom_truth.jsonl under OUT, in the layout `medtemporal build skillqa --frames` reads.",
    )
    sk.add_argument("--instances", type=int, required=True, help="number of instances")
    sk.add_argument("--out", required=True, help="output folder (must not exist or be empty)")
    sk.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    sk.add_argument("--image-size", type=int, default=224, metavar="PX", help="frame width (default %(default)s)")
    sk.set_defaults(func=run_skillqa)
    ct = kinds.add_parser(
        "ct-rate",
        help="CT-RATE phantoms (NIfTI volumes in HU, labels, reports, metadata) with exact ground truth",
        description="Write a phantom CT-RATE validation split (dataset/valid/..., labels, reports and metadata "
        "CSVs), phantom_manifest.json and phantom_truth.jsonl under OUT.",
    )
    ct.add_argument("--patients", type=int, required=True, help="number of patients")
    ct.add_argument("--out", required=True, help="output folder (must not exist or be empty)")
    ct.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ct.add_argument("--shape", default="96,96,64", metavar="X,Y,Z",
                    help="voxels of every volume (default %(default)s; e.g. 512,512,300 for benches)")
    ct.add_argument("--no-volumes", action="store_true", help="skip the NIfTI files (CSVs and truth only)")
    ct.add_argument("--profile", choices=("longitudinal", "ct-rate"), default="longitudinal",
                    help="scans per patient: many follow-ups (default) or CT-RATE-like, about 1.2")
    ct.set_defaults(func=run_ct_rate)


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


def run_skillqa(args: argparse.Namespace) -> int:
    """Write ClinicalSkillQA phantoms and say where they are."""
    from medtemporal.phantoms.skill_frames import write_skill_phantoms

    made = write_skill_phantoms(args.out, instances=args.instances, seed=args.seed, image_size=args.image_size)
    print(f"Wrote {made.instances} instances, {made.frames} frames to {made.root}")
    print(f"  frame-set root: {made.root}  (pass it to `medtemporal build skillqa` as --frames)")
    print(f"  ground truth:   {made.truth}")
    return 0


def run_ct_rate(args: argparse.Namespace) -> int:
    """Write CT-RATE phantoms and say where their root is."""
    from medtemporal.errors import InvalidInputError
    from medtemporal.phantoms.ct_rate import write_ct_rate

    try:
        shape = tuple(int(v) for v in args.shape.split(","))
    except ValueError:
        shape = ()
    if len(shape) != 3 or min(shape) < 8:
        raise InvalidInputError(f"--shape {args.shape!r} must be three voxel counts X,Y,Z of at least 8 each.")
    made = write_ct_rate(args.out, patients=args.patients, seed=args.seed, shape=shape, volumes=not args.no_volumes,
                         profile=args.profile)
    print(f"Wrote {made.patients} patients, {made.scans} scans, {made.volumes} volumes to {made.root}")
    print(f"  CT-RATE root: {made.root}  (pass it to `medtemporal build 3d-rad` as --ct-rate)")
    print(f"  ground truth: {made.truth}")
    return 0
