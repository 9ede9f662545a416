"""``medtemporal build skillqa --frames DIR --out BENCH``: frame sets → shuffled ordering items.

Each instance becomes one ``ordering`` item (task ``ordering``, subtype
``<procedure>_<n frames>``, e.g. ``CPR_4``). Its frames are shown in a
shuffled order drawn with the seed, uniformly over all n! permutations: the
paper says only that frames are "randomly permuted before being presented"
(002 §2.1, line 49), so the identity is not excluded (a 4-frame instance is
shown in its true order with probability 1/24). The shown frames are
labelled A, B, C … by position, or, with ``--rename-identifiers``, by random
tokens (the renaming FBK found to reduce alphabetical-order bias, 002 §6);
``meta.identifiers`` records label → the dataset's identifier. With
``--keep-identifiers`` the frames are shown under the dataset's own
identifiers in their alphabetical order: the organisers' presentation.
Frame mentions in the reference rationale ("Frame D", "Frames A and C") are
relabelled to match. Nothing is written before every instance has been read
and checked (`medtemporal.sources.skill_frames`).
"""

from __future__ import annotations

import argparse
import random
import re
from collections import Counter
from pathlib import Path

from medtemporal.family import ImageRef, Item, Manifest, licence_of, sha256_file
from medtemporal.sources.skill_frames import GOLD, FrameSet, read_frame_sets

BENCHMARK = "skillqa"
VERSION = "1"
TASK = "ordering"
TOKEN_ALPHABET = "bcdfghjkmnpqrstvwxz23456789"
"""Characters of renamed identifiers: no vowels (no words), no 0/o or 1/l look-alikes."""
TOKEN_LENGTH = 4


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``medtemporal build skillqa``."""
    src = p.add_argument_group("data")
    src.add_argument("--frames", type=Path, required=True, metavar="DIR",
                     help="frame-set folder: gold.jsonl and one folder of frames (A.jpg ...) per instance; "
                     "also the image root")
    src.add_argument("--no-verify-images", dest="verify_images", action="store_false", help="do not open every frame to check it is an image")
    rules = p.add_argument_group("presentation (default: a seeded shuffle, frames labelled A, B, C ... as shown)")
    rules.add_argument("--keep-identifiers", action="store_true",
                       help="show frames under the dataset's own identifiers in their alphabetical order "
                       "(the organisers' shuffle) instead of reshuffling")
    rules.add_argument("--rename-identifiers", action="store_true",
                       help="label frames with random 4-character tokens instead of letters (mapping recorded)")


def _tokens(rng: random.Random, n: int) -> list[str]:
    """``n`` distinct random tokens."""
    tokens: list[str] = []
    while len(tokens) < n:
        token = "".join(rng.choice(TOKEN_ALPHABET) for _ in range(TOKEN_LENGTH))
        if token not in tokens:
            tokens.append(token)
    return tokens


def presentation(fs: FrameSet, seed: int, *, keep: bool, rename: bool) -> tuple[list[str], list[str]]:
    """(the dataset identifiers in the order shown, the label each is shown under).

    The draw depends only on the seed and the instance id, so an instance is
    presented the same way whatever else the dataset holds.
    """
    rng = random.Random(f"{seed}:{fs.id}")
    shown = sorted(fs.order) if keep else rng.sample(list(fs.order), len(fs.order))
    if rename:
        labels = _tokens(rng, len(shown))
    elif keep:
        labels = list(shown)
    else:
        labels = [chr(ord("A") + k) for k in range(len(shown))]
    return shown, labels


def relabel(text: str, mapping: dict[str, str]) -> str:
    """``text`` with frame mentions ("Frame D", "Frames A and C", "Image B") renamed by ``mapping``."""
    if not mapping or all(k == v for k, v in mapping.items()):
        return text
    ident = "|".join(re.escape(k) for k in sorted(mapping, key=len, reverse=True))
    mention = re.compile(rf"\b((?:Frames?|Images?|frames?|images?)\s+)((?:{ident})(?:\s*(?:,|and|&|or|to)\s*(?:{ident}))*)\b")
    one = re.compile(rf"\b({ident})\b")

    def rename(m: re.Match[str]) -> str:
        return m.group(1) + one.sub(lambda x: mapping[x.group(1)], m.group(2))

    return mention.sub(rename, text)


def frame_item(fs: FrameSet, seed: int, *, keep: bool, rename: bool) -> Item:
    """The ordering item of one frame set."""
    shown, labels = presentation(fs, seed, keep=keep, rename=rename)
    label_of = dict(zip(shown, labels, strict=True))
    listed = ", ".join(labels[:-1]) + f" and {labels[-1]}"
    return Item.create(
        benchmark=BENCHMARK,
        task=TASK,
        subtype=f"{fs.procedure}_{len(fs.order)}",
        images=[ImageRef(path=fs.frames[x], role="frame", label=f"Frame {label_of[x]}") for x in shown],
        question=f"The frames are labelled {listed}.",
        options={label: f"Frame {label}" for label in labels},
        answer_type="ordering",
        answer=[label_of[x] for x in fs.order],
        reference=relabel(fs.rationale, label_of),
        meta={"instance": fs.id, "procedure": fs.procedure, "n_frames": len(fs.order),
              "patient_id": fs.video or fs.id, "identifiers": {label_of[x]: x for x in shown}},
    )


def build(args: argparse.Namespace) -> tuple[list[Item], Manifest]:
    """Read and check the frame sets, then make one item per instance (see the module doc)."""
    root = Path(args.frames).resolve()
    sets = read_frame_sets(root, verify_images=args.verify_images)
    items = [frame_item(fs, args.seed, keep=args.keep_identifiers, rename=args.rename_identifiers) for fs in sets]
    identity = sum(i.answer == list(i.options) for i in items)
    manifest = Manifest(
        benchmark=BENCHMARK, version=VERSION, seed=args.seed, licence=licence_of(root), image_root=str(root),
        config={
            "source": "frames",
            "presentation": "dataset identifiers" if args.keep_identifiers else "seeded shuffle",
            "shuffle": "uniform over all n! permutations, identity included, as the ClinicalSkillQA paper shuffles",
            "rename_identifiers": args.rename_identifiers,
            "verify_images": args.verify_images,
            "procedures": dict(sorted(Counter(fs.procedure for fs in sets).items())),
            "frames_per_instance": {str(k): v for k, v in sorted(Counter(len(fs.order) for fs in sets).items())},
            "shown_in_true_order": identity,
        },
        sources={GOLD: sha256_file(root / GOLD)},
    )
    return items, manifest
