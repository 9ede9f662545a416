"""``medtemporal phantoms KIND``: every kind of phantom is a registered `PhantomKind`.

The datasets' phantoms (``cxr``, ``chexpert-plus``, ``skillqa``, ``ct-rate``) register here; a family whose
release file is its own (a question file over MIMIC-CXR-JPG, say) registers its kind in its own folder
the same way, so ``medtemporal phantoms`` needs no edit for it (a kind written over a ``phantoms cxr`` cohort
takes its ``--cxr``/``--patients`` options, reads the cohort and prepares its output folder with
`medtemporal.phantoms.cohort`)::

    register("phantom", "mmxu")(PhantomKind(help=..., description=..., add_arguments=..., write=...))

Every kind gets ``--out``, ``--seed`` and ``--overwrite`` from the command (`common_options`); its writer
prepares ``--out`` with `medtemporal.phantoms.out.prepare_out`, which refuses a folder holding anything but
that kind's phantoms. ``write`` gets the parsed options and returns the lines to print: what was written and where
to point ``medtemporal build`` at it. The generators themselves are imported only when a kind runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from medtemporal.errors import InvalidInputError
from medtemporal.registry import register


@dataclass(frozen=True)
class PhantomKind:
    """One ``medtemporal phantoms`` sub-command."""

    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    """Adds the kind's own options; every kind has `common_options` (``--out``, ``--seed``, ``--overwrite``)."""
    write: Callable[[argparse.Namespace], list[str]]
    """Writes the phantoms; returns the lines to print."""


def common_options(p: argparse.ArgumentParser) -> None:
    """``--out``, ``--seed`` and ``--overwrite``, which ``medtemporal phantoms`` adds to every kind; a kind's writer
    prepares its folder with `medtemporal.phantoms.out.prepare_out`."""
    p.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="output folder (must not exist or be empty, unless --overwrite)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="random seed (default 0)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the phantoms of this kind already in --out (never a folder holding anything else)")


def cohort_options(p: argparse.ArgumentParser, *, image_size: int, no_images: str) -> None:
    """The options of the image-cohort kinds (``cxr``, ``chexpert-plus``)."""
    p.add_argument("--patients", type=int, required=True, metavar="N", help="number of patients")
    p.add_argument("--no-images", action="store_true", help=no_images)
    p.add_argument("--image-size", type=int, default=image_size, metavar="PX",
                   help="image width and height (default %(default)s)")


def _cxr_options(p: argparse.ArgumentParser) -> None:
    cohort_options(p, image_size=320, no_images="skip the JPEGs (fast, for MIMIC-scale cohorts)")
    p.add_argument("--profile", choices=("longitudinal", "mimic"), default="longitudinal",
                   help="visits per patient: mostly 5-15 (default) or MIMIC-like, about 3.5 on average")


def _write_cxr(args: argparse.Namespace) -> list[str]:
    from medtemporal.phantoms.cxr import write_cxr_phantoms

    made = write_cxr_phantoms(args.out, patients=args.patients, seed=args.seed, images=not args.no_images,
                              image_size=args.image_size, profile=args.profile, overwrite=args.overwrite)
    images = f"{made.images} images" + (" listed (no JPEGs written)" if args.no_images else "")
    return [f"Wrote {made.patients} patients, {made.studies} studies, {images} to {made.root}",
            f"  MIMIC-CXR-JPG root:     {made.mimic_cxr_jpg}",
            f"  MIMIC-Ext-CXR-QBA root: {made.qba}",
            f"  ground truth:           {made.truth}"]


def _write_chexpert_plus(args: argparse.Namespace) -> list[str]:
    from medtemporal.phantoms.chexpert_plus import write_chexpert_plus

    made = write_chexpert_plus(args.out, patients=args.patients, seed=args.seed, image_size=args.image_size,
                               images=not args.no_images, overwrite=args.overwrite)
    return [f"Wrote {made.patients} patients, {made.studies} studies, {made.images} images to {made.root}",
            f"  CheXpert Plus root: {made.root}  (pass it to `medtemporal build` as --chexpert-plus)",
            f"  ground truth:       {made.truth}"]


def _skillqa_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--instances", type=int, required=True, metavar="N", help="number of instances")
    p.add_argument("--image-size", type=int, default=224, metavar="PX", help="frame width (default %(default)s)")


def _write_skillqa(args: argparse.Namespace) -> list[str]:
    from medtemporal.phantoms.skill_frames import write_skill_phantoms

    made = write_skill_phantoms(args.out, instances=args.instances, seed=args.seed, image_size=args.image_size,
                                overwrite=args.overwrite)
    return [f"Wrote {made.instances} instances, {made.frames} frames to {made.root}",
            f"  frame-set root: {made.root}  (pass it to `medtemporal build skillqa` as --frames)",
            f"  ground truth:   {made.truth}"]


def _ct_rate_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--patients", type=int, required=True, metavar="N", help="number of patients")
    p.add_argument("--shape", default="96,96,64", metavar="X,Y,Z",
                   help="voxels of every volume (default %(default)s; e.g. 512,512,300 for benches)")
    p.add_argument("--no-volumes", action="store_true", help="skip the NIfTI files (CSVs and truth only)")
    p.add_argument("--profile", choices=("longitudinal", "ct-rate"), default="longitudinal",
                   help="scans per patient: many follow-ups (default) or CT-RATE-like, about 1.2")


def _write_ct_rate(args: argparse.Namespace) -> list[str]:
    from medtemporal.phantoms.ct_rate import write_ct_rate

    try:
        shape = tuple(int(v) for v in args.shape.split(","))
    except ValueError:
        shape = ()
    if len(shape) != 3 or min(shape) < 8:
        raise InvalidInputError(f"--shape {args.shape!r} must be three voxel counts X,Y,Z of at least 8 each.")
    made = write_ct_rate(args.out, patients=args.patients, seed=args.seed, shape=shape, volumes=not args.no_volumes,
                         profile=args.profile, overwrite=args.overwrite)
    return [f"Wrote {made.patients} patients, {made.scans} scans, {made.volumes} volumes to {made.root}",
            f"  CT-RATE root: {made.root}  (pass it to `medtemporal build 3d-rad` as --ct-rate)",
            f"  ground truth: {made.truth}"]


register("phantom", "cxr")(PhantomKind(
    help="MIMIC-CXR-JPG + reports + MIMIC-Ext-CXR-QBA phantoms with exact ground truth",
    description="Write phantom MIMIC-CXR-JPG images and metadata, MIMIC-CXR reports, MIMIC-Ext-CXR-QBA "
    "scene graphs and metadata, and phantom_truth.jsonl under OUT.",
    add_arguments=_cxr_options, write=_write_cxr))
register("phantom", "chexpert-plus")(PhantomKind(
    help="CheXpert Plus phantoms (df_chexpert_plus_240401.csv + PNG/) with exact ground truth",
    description="Write a phantom df_chexpert_plus_240401.csv, PNG images, phantom_truth.jsonl and "
    "phantom_manifest.json under OUT, from the same trajectories and renderer as the cxr phantoms.",
    add_arguments=lambda p: cohort_options(p, image_size=256, no_images="skip the PNGs (CSV and truth only)"),
    write=_write_chexpert_plus))
register("phantom", "skillqa")(PhantomKind(
    help="ClinicalSkillQA phantoms: CPR, AED and BMV key-frame sets (4 or 6 frames) with their gold",
    description="Write one folder of drawn key frames per instance (A.jpg ...), gold.jsonl, phantom_manifest.json "
    "and phantom_truth.jsonl under OUT, in the layout `medtemporal build skillqa --frames` reads.",
    add_arguments=_skillqa_options, write=_write_skillqa))
register("phantom", "ct-rate")(PhantomKind(
    help="CT-RATE phantoms (NIfTI volumes in HU, labels, reports, metadata) with exact ground truth",
    description="Write a phantom CT-RATE validation split (dataset/valid/..., labels, reports and metadata "
    "CSVs), phantom_manifest.json and phantom_truth.jsonl under OUT.",
    add_arguments=_ct_rate_options, write=_write_ct_rate))
