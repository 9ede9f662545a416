"""``medtemporal build mmxu``: import the released ``MMXU-test.jsonl`` (or its phantom) as a benchmark.

``medtemporal build mmxu --official MMXU-test.jsonl --mimic-cxr-jpg ROOT --out DIR``
    reads every record (`release`) and resolves both images under ROOT by their own paths;
``... --official MMXU-test.jsonl --no-verify-images --out DIR``
    reads the questions alone (to audit or export them; a run needs the images).

MMXU releases questions only (its dev split is withheld and its generation needs the MIMIC-CXR reports and
GPT; FACTS §5.3), so there is no build from raw data. The build audits the items itself
(`medtemporal.audit.run_audit` with readers fitted across content types, since ``content_type`` names the
answer's category and no model sees it), writes the audit into the manifest and stores each item's held-out
pick by the best reader of the task's row (subtype ``(all)``; its name in ``config.blind_reader``) as
``meta["blind_pick"]`` for the blind-adjusted scores (`metrics`); ``--no-audit`` skips both. The licence is `medtemporal.provenance.licence_of` of the question file and the image root:
``synthetic`` for verified phantoms, ``credentialed`` otherwise (the images are PhysioNet-credentialed even
though the released question file is public).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from medtemporal.family import Item, Manifest, add_official_option, imported
from medtemporal.benchmarks.mmxu.metrics import PICK
from medtemporal.benchmarks.mmxu.release import BENCHMARK, read_release
from medtemporal.sources.jpg_root import add_jpg_arguments, jpg_root, keep_with_images

VERSION = "1.0"
AUDIT_FIT = "task"
"""The audit's readers are fitted across content types (`medtemporal.audit.core.FITS`)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``medtemporal build mmxu``."""
    src = p.add_argument_group("data")
    add_official_option(src, "the released MMXU-test.jsonl (or one written by `medtemporal phantoms mmxu`)",
                        required=True)
    add_jpg_arguments(src, "the root the image paths are relative to",
                      "without --mimic-cxr-jpg, load the questions with no image root")


def with_blind_picks(items: list[Item]) -> tuple[list[Item], dict, str | None]:
    """The items with their held-out blind picks in ``meta``, the audit section, and the reader that picked
    (the best of the task's row, `medtemporal.audit.Audit.picks`; None when too few items were audited)."""
    from medtemporal.audit import run_audit

    audit = run_audit(items, progress=sys.stderr.isatty(), fit=AUDIT_FIT)
    picked = [Item.create(**{**item.model_dump(exclude={"id"}), "meta": {**item.meta, PICK: audit.picks[item.id]}})
              if item.id in audit.picks else item for item in items]
    return picked, audit.section, next(iter(set(audit.readers.values())), None)  # one task: one row picks


def build(args: argparse.Namespace) -> tuple[list[Item], Manifest]:
    """Import the release from parsed options (`add_arguments`, plus ``--seed``, ``--no-audit``)."""
    root = jpg_root(args.mimic_cxr_jpg, verify_images=args.verify_images, needed_for="the images of --official")
    items = read_release(args.official)
    exclusions: Counter[str] = Counter()
    if root is not None and args.verify_images:
        items = keep_with_images(items, lambda item: [ref.path for ref in item.images], root, exclusions)
    audit, reader = None, None
    if not args.no_audit:
        items, audit, reader = with_blind_picks(items)
    release = imported({Path(args.official).name: args.official}, root, releases=None)
    manifest = Manifest(
        benchmark=BENCHMARK, version=VERSION, licence=release.licence,
        image_root=str(root) if root is not None else None,
        config={"official": Path(args.official).name, "verify_images": args.verify_images,
                "images_resolved": root is not None, "blind_picks": reader is not None,
                "blind_reader": reader,
                "content_types": dict(sorted(Counter(i.subtype for i in items).items())),
                "patients": len({i.cluster for i in items})},
        sources=release.sources,
        exclusions=dict(exclusions),
        audit=audit,
    )
    return items, manifest
