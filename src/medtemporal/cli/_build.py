"""``medtemporal build NAME --out DIR [--seed N] ...``: one sub-command per registered benchmark.

Each `BenchmarkSpec` adds its own options with ``add_arguments``; this module
adds the ones every builder shares (``--out``, ``--seed``, ``--overwrite``),
so a spec must not add those. The build writes into a hidden sibling of ``--out``
(`medtemporal.writes.staging`: its caches, then items and manifest with `medtemporal.benchmark.save`), moved
into ``--out`` when whole (`medtemporal.benchmark.publish_build`): a build stopped at any moment leaves ``--out`` as it
was, and the next one, ``--overwrite`` or not, reuses the caches it left.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from functools import partial
from pathlib import Path

from medtemporal import registry
from medtemporal.benchmark import Manifest, publish_build, read_manifest, save
from medtemporal.contract import BenchmarkSpec
from medtemporal.errors import InvalidInputError
from medtemporal.progress import add_no_progress
from medtemporal.schema import Item
from medtemporal.writes import staging


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("build", help="build a benchmark from raw data (or import a released question file)",
                       description="Build a benchmark folder (items.jsonl + manifest.json).")
    names = p.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")
    for entry in registry.entries("benchmark"):
        spec: BenchmarkSpec = entry.obj
        bp = names.add_parser(spec.name, help=spec.description, description=spec.description)
        common = bp.add_argument_group("output")
        common.add_argument("--out", type=Path, required=True, metavar="DIR", help="benchmark folder to write")
        common.add_argument("--seed", type=int, default=0, metavar="N",
                            help="random seed; the same data and seed give the same items (default 0)")
        common.add_argument("--overwrite", action="store_true", help="replace a benchmark already in --out")
        common.add_argument("--no-audit", action="store_true",
                            help="skip the blind-solvability audit (`medtemporal audit`) written into the manifest")
        add_no_progress(common)
        spec.add_arguments(bp)
        bp.set_defaults(func=partial(run, spec))


def _check_out(out: Path, overwrite: bool) -> None:
    """Refuse an ``--out`` that holds files but no benchmark medtemporal built (nothing of the user's is replaced),
    and one that holds a benchmark, unless ``overwrite``."""
    if not out.is_dir() or not any(out.iterdir()):
        return
    try:
        read_manifest(out)
    except InvalidInputError:
        raise InvalidInputError(f"{out} holds files but no benchmark built by medtemporal (no readable manifest), so a "
                                "build would replace files of yours there; choose a new or empty --out.") from None
    if not overwrite:
        raise InvalidInputError(f"{out} already holds a benchmark; pass --overwrite to replace it, or choose another "
                                "--out.")


def _unique(items: list[Item], manifest: Manifest) -> tuple[list[Item], Manifest]:
    """The items with each id once (an item's id hashes all of its content, so a repeat is the same question
    twice, which scores would count twice), the repeats counted in ``exclusions.repeated_item`` and said."""
    kept = list({item.id: item for item in items}.values())  # in the order of first appearance
    if len(kept) == len(items):
        return items, manifest
    repeated = len(items) - len(kept)
    print(f"medtemporal: note: {repeated} item(s) repeated an earlier one exactly and were left out "
          "(recorded as exclusions.repeated_item).", file=sys.stderr)
    exclusions = {**manifest.exclusions, "repeated_item": manifest.exclusions.get("repeated_item", 0) + repeated}
    return kept, manifest.model_copy(update={"exclusions": dict(sorted(exclusions.items()))})


def run(spec: BenchmarkSpec, args: argparse.Namespace) -> int:
    """Build ``spec`` from ``args`` and save it; refuse to replace a benchmark unless asked."""
    out: Path = args.out
    if out.exists() and not out.is_dir():
        raise InvalidInputError(f"--out {out} is a file; pass a folder for the benchmark.")
    _check_out(out, args.overwrite)
    work = staging(out)
    work.mkdir(parents=True, exist_ok=True)
    try:
        items, manifest = spec.build(argparse.Namespace(**{**vars(args), "out": work}))
    except BaseException:
        if not any(work.iterdir()):  # nothing worth keeping for the next build
            work.rmdir()
        raise
    items, manifest = _unique(items, manifest)
    if not items:
        raise InvalidInputError(
            f"No {spec.name} items could be built from this input (see the exclusion counts: "
            f"{', '.join(f'{k}={v}' for k, v in list(manifest.exclusions.items())[:6]) or 'none'}); check the data folders."
        )
    if spec.audit.at_build and not args.no_audit:
        from medtemporal.audit import audit_items

        manifest = manifest.model_copy(update={"audit": audit_items(items, progress=True,
                                                                    fit=spec.audit.fit)})
    save(work, items, manifest)
    publish_build(work, out)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(Counter(i.task for i in items).items()))
    print(f"Wrote {len(items)} {spec.name} items ({counts}) to {out} [licence: {manifest.licence}].", file=sys.stderr)
    if manifest.audit and manifest.audit["flagged"]:
        print(f"Audit: answerable blind more than 5 points above chance: {', '.join(manifest.audit['flagged'])} "
              f"(see `medtemporal audit {out}`).", file=sys.stderr)
    if manifest.audit and manifest.audit.get("by_design"):
        print(f"Audit: {len(manifest.audit['by_design'])} subtype(s) answerable blind by the paper's own design, "
              f"as the family's notes say (see `medtemporal audit {out}`).", file=sys.stderr)
    return 0

