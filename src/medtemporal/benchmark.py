"""A benchmark on disk: ``items.jsonl`` + ``manifest.json``, images by relative path.

Images are not copied: ``manifest.image_root`` points at the dataset root the
builder read (a MIMIC-CXR-JPG folder, a phantom folder), and every
`ImageRef.path` is relative to it. A user whose data lives elsewhere passes
another root at run time. What a family gives the core (`BenchmarkSpec`) is `medtemporal.contract`.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from pydantic import Field, ValidationError

from medtemporal import __version__
from medtemporal.checksums import sha256_file
from medtemporal.errors import InvalidInputError
from medtemporal.schema import Item, Licence, Record, describe_validation_error, dumps, iter_jsonl
from medtemporal.writes import disk_error, publish, replacing, write_atomic

ITEMS = "items.jsonl"
MANIFEST = "manifest.json"
SPREAD = "spread"
"""How ``--limit`` and ``--limit-per-task`` choose items: a sample drawn with a fixed seed, spread evenly over the
tasks and, within each task, over its subtypes (`Benchmark.select`)."""
FIRST = "first"
"""The first ``limit`` items in file order: what ``--limit`` meant before `SPREAD` (run folders that record no
rule)."""
LIMIT_RULES = (SPREAD, FIRST)


class Manifest(Record):
    """What a benchmark folder holds and how it was made."""

    benchmark: str
    version: str
    """Builder version: a change to construction rules bumps it."""
    seed: int | None = None
    licence: Licence
    image_root: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    """Builder options as resolved."""
    sources: dict[str, str] = Field(default_factory=dict)
    """Source file (relative name) → sha256 checksum."""
    counts: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Item counts by task, by subtype and by answer."""
    exclusions: dict[str, int] = Field(default_factory=dict)
    """Why records were left out, with how many."""
    created_with: str = __version__
    items_sha256: str | None = None
    audit: dict[str, Any] | None = None
    """Blind accuracy per task and subtype against chance (`medtemporal.audit`); None when not audited."""


def count_items(items: Iterable[Item]) -> dict[str, dict[str, int]]:
    """Counts by task, subtype and answer, each sorted by key; answers of closed questions only (an open
    question's answer is a reference text, and a benchmark of reports would copy every one into its manifest)."""
    by: dict[str, Counter[str]] = {"task": Counter(), "subtype": Counter(), "answer": Counter()}
    for item in items:
        by["task"][item.task] += 1
        by["subtype"][item.subtype] += 1
        if isinstance(item.answer, str) and item.answer_type != "open":
            by["answer"][item.answer] += 1
    return {k: dict(sorted(v.items())) for k, v in by.items()}


@dataclass(frozen=True)
class Benchmark:
    """A loaded benchmark folder."""

    path: Path
    manifest: Manifest
    items: list[Item]

    @property
    def image_root(self) -> Path:
        """Absolute image root (relative roots are taken from the benchmark folder)."""
        return image_root_of(self.path, self.manifest)

    def select(self, tasks: Sequence[str] | None = None, limit: int | None = None, *,
               per_task: int | None = None, rule: str = SPREAD) -> list[Item]:
        """The items of ``tasks`` (all when None or empty), at most ``per_task`` of each task, then at most
        ``limit`` in all, in the benchmark's order.

        This is the selection a run's ``--tasks``, ``--limit-per-task`` and ``--limit`` make; scoring applies
        the same one (with the rule its run recorded), so unselected items are not counted as missing. With
        ``rule`` `SPREAD` the limited items are a seeded sample spread evenly over tasks and subtypes (each
        subtype shuffled with its own seed, then taken in turn); with `FIRST`, the first ones in file order.
        """
        items = self.items
        if tasks:
            known = sorted({item.task for item in items})
            unknown = [t for t in tasks if t not in known]
            if unknown:
                raise InvalidInputError(
                    f"The benchmark has no task {', '.join(map(repr, unknown))}; choose --tasks from {', '.join(known)}."
                )
            items = [item for item in items if item.task in tasks]
        for flag, value in (("--limit", limit), ("--limit-per-task", per_task)):
            if value is not None and value < 0:
                raise InvalidInputError(f"{flag} must be zero or more, not {value}.")
        if rule not in LIMIT_RULES:
            raise InvalidInputError(f"Unknown limit rule {rule!r}; use one of {', '.join(LIMIT_RULES)}.")
        take = _spread if rule == SPREAD else _first
        if per_task is not None:
            by_task: dict[str, list[Item]] = {}
            for item in items:
                by_task.setdefault(item.task, []).append(item)
            kept = {id(item) for group in by_task.values() for item in take(group, per_task)}
            items = [item for item in items if id(item) in kept]
        return items if limit is None else take(items, limit)

    @property
    def manifest_hash(self) -> str:
        """sha256 of the manifest file's bytes."""
        return sha256_file(self.path / MANIFEST)


_END = object()


def _interleave(groups: Sequence[Sequence[Any]]) -> Iterable[Any]:
    """The first of each group, then the second of each, and so on."""
    return (x for x in itertools.chain.from_iterable(itertools.zip_longest(*groups, fillvalue=_END)) if x is not _END)


def _first(items: list[Item], n: int) -> list[Item]:
    """The first ``n`` of ``items``."""
    return items[:n]


def _spread(items: list[Item], n: int) -> list[Item]:
    """``n`` of ``items`` spread evenly over their tasks and, within each task, its subtypes, in the items' order.

    Each (task, subtype) is shuffled with a seed of its own name, so a task's sample does not depend on the
    other tasks chosen; tasks then take turns, and within a task its subtypes do.
    """
    if n >= len(items):
        return items
    strata: dict[str, dict[str, list[int]]] = {}
    for k, item in enumerate(items):
        strata.setdefault(item.task, {}).setdefault(item.subtype, []).append(k)
    for task, subtypes in strata.items():
        for subtype, indices in subtypes.items():
            random.Random(f"{task}\x00{subtype}").shuffle(indices)
    by_task = [list(_interleave(list(subtypes.values()))) for subtypes in strata.values()]
    chosen = sorted(itertools.islice(_interleave(by_task), n))
    return [items[k] for k in chosen]


def save(out: str | Path, items: list[Item], manifest: Manifest) -> Path:
    """Write ``items`` and ``manifest`` (with counts and the items checksum) to folder ``out``.

    Both files are written in full beside the old ones before either replaces its old one (a full disk
    leaves the old pair as it was), then renamed, the manifest first; a build killed between the two
    renames leaves items that do not match the manifest's ``items_sha256``, which `load` refuses.
    """
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise disk_error(exc, out) or exc from None
    with replacing(out / ITEMS) as items_tmp:
        with items_tmp.open("w", encoding="utf-8", newline="\n") as fh:
            fh.writelines(dumps(item) + "\n" for item in items)
        manifest = manifest.model_copy(update={"counts": count_items(items), "items_sha256": sha256_file(items_tmp)})
        write_atomic(out / MANIFEST, json.dumps(manifest.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n")
    return out


def publish_build(work: Path, out: Path) -> None:
    """Move a build written whole into ``work`` (by `save` and the builder) into ``out``, its manifest and items
    first (`medtemporal.writes.publish`), so a stop between two moves leaves a folder ``--overwrite`` recognises."""
    publish(work, out, first=(MANIFEST, ITEMS))


def is_benchmark(path: str | Path) -> bool:
    """Whether ``path`` holds a benchmark's manifest (a build there would replace it)."""
    return (Path(path) / MANIFEST).is_file()


def image_root_of(folder: str | Path, manifest: Manifest) -> Path:
    """The absolute image root of the benchmark in ``folder`` (a relative one is taken from the folder)."""
    root = Path(manifest.image_root or ".")
    return root if root.is_absolute() else (Path(folder) / root).resolve()


def read_manifest(path: str | Path) -> Manifest:
    """The manifest of the benchmark folder ``path``, without reading its items.

    Raises:
        InvalidInputError: ``path`` is not a benchmark folder, or its manifest is malformed.
    """
    path = Path(path)
    if not (path / MANIFEST).is_file() or not (path / ITEMS).is_file():
        raise InvalidInputError(
            f"{path} is not a benchmark folder (it needs {ITEMS} and {MANIFEST}); "
            "build one with `medtemporal build`."
        )
    try:
        return Manifest.model_validate_json((path / MANIFEST).read_bytes())
    except ValidationError as exc:
        raise InvalidInputError(f"{path / MANIFEST}: {describe_validation_error(exc)}; rebuild the benchmark.") from None


def load(path: str | Path) -> Benchmark:
    """Load a benchmark folder, with one clear sentence for what is missing or wrong.

    The items must match the manifest's ``items_sha256`` (when it has one) and there must be at least one.
    """
    path = Path(path)
    manifest = read_manifest(path)
    if manifest.items_sha256 is not None and sha256_file(path / ITEMS) != manifest.items_sha256:
        raise InvalidInputError(
            f"{path / ITEMS} does not match the items_sha256 of {path / MANIFEST} (a build was interrupted, or "
            "the file was edited); rebuild the benchmark with `medtemporal build ... --overwrite`."
        )
    items = list(iter_jsonl(path / ITEMS, Item))
    if not items:
        raise InvalidInputError(
            f"The benchmark {path} is empty ({ITEMS} holds no items); rebuild it with `medtemporal build`."
        )
    return Benchmark(path.resolve(), manifest, items)

