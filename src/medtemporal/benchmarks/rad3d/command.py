"""``medtemporal build 3d-rad``: build the six tasks from CT-RATE, or import the released test split.

``medtemporal build 3d-rad --ct-rate ROOT --out DIR``
    builds Tasks 1–6 from a CT-RATE root (or a phantom one, ``medtemporal
    phantoms ct-rate``) with the paper's rules (`pipeline`); ``--llm URI`` has a model
    write and quality-filter the open questions (`llm`) instead of the report rules.

``medtemporal build 3d-rad --official DIR/3DRAD/test [--ct-rate ROOT] --out DIR``
    imports the 41 released CSVs (`release`); volumes ``test_N_x_k`` are found
    as CT-RATE ``valid_N_x_k`` under ROOT (``--volume-prefix``), or through a
    ``VolumeName,Path`` CSV (``--volume-map``, e.g. the authors' preprocessed ``.npy``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from medtemporal.backends.uri import shown_uri
from medtemporal.family import (
    InvalidInputError, Item, Manifest, Study, add_llm_options, add_official_option, imported, licence_of,
    sha256_file,
)
from medtemporal.benchmarks.rad3d.labels import BENCHMARK, OPEN_TASKS, TASKS, VERSION
from medtemporal.benchmarks.rad3d.llm import generate_open
from medtemporal.benchmarks.rad3d.release import VolumeMap, read_official, read_volume_map
from medtemporal.benchmarks.rad3d.pipeline import build_items, rule_questions
from medtemporal.benchmarks.rad3d.known_releases import RELEASES
from medtemporal.benchmarks.rad3d.open_questions import OpenQA
from medtemporal.sources.ct_rate import check_root, load_timelines


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``medtemporal build 3d-rad``."""
    src = p.add_argument_group("data")
    src.add_argument("--ct-rate", type=Path, metavar="ROOT",
                     help="CT-RATE root (holds dataset/); also the image root")
    src.add_argument("--split", default="valid", choices=("valid", "train"),
                     help="CT-RATE split to build from (default %(default)s: the paper's 1,304 validation patients)")
    add_official_option(src, "import the released test CSVs (DIR/3DRAD/test)", folder=True)
    src.add_argument("--volume-prefix", default="valid", metavar="PREFIX",
                     help="with --official: CT-RATE prefix replacing test_ in volume names (default %(default)s)")
    src.add_argument("--volume-map", type=Path, metavar="CSV",
                     help="with --official: VolumeName,Path CSV mapping released names to files under the image root "
                     "(the authors' valid_path.csv layout; .npy volumes allowed)")
    src.add_argument("--image-root", type=Path, metavar="DIR",
                     help="with --official and --volume-map: the folder the map's paths are under (default: --ct-rate)")
    rules = p.add_argument_group("construction")
    rules.add_argument("--tasks", default=",".join(TASKS), metavar="LIST",
                       help="tasks to build, comma-separated (default %(default)s)")
    rules.add_argument("--no-volume-check", action="store_true",
                       help="do not look for the volumes of label rows (fast; for label-only benches)")
    add_llm_options(p, purpose="write open questions with this model and filter them on five quality dimensions "
                    "(the paper's approach); default: rules over the report text", data="report text", old="qa",
                    title="open questions (Tasks 1-3)")


def _tasks(value: str) -> tuple[str, ...]:
    tasks = tuple(t.strip() for t in value.split(",") if t.strip())
    unknown = [t for t in tasks if t not in TASKS]
    if unknown or not tasks:
        raise InvalidInputError(f"--tasks {value!r} names unknown tasks; use a comma-separated subset of {', '.join(TASKS)}.")
    return tasks


def build(args: argparse.Namespace) -> tuple[list[Item], Manifest]:
    """Build (or import) 3D-RAD as the parsed options say."""
    tasks = _tasks(args.tasks)
    root = check_root(args.ct_rate) if args.ct_rate is not None else None
    if args.official is not None:
        return _import(args, root, tasks)
    if root is None:
        raise InvalidInputError("Pass --ct-rate ROOT (a CT-RATE root) to build, or --official DIR to import.")
    loaded = load_timelines(root, args.split, check_volumes=not args.no_volume_check)
    licence = loaded.timelines[0].licence if loaded.timelines else licence_of(root)
    questions, qa_config, dropped = rule_questions, {"open_questions": "rules over the report text"}, {}
    open_tasks = [t for t in tasks if t in OPEN_TASKS]
    if getattr(args, "llm", None) and open_tasks:
        studies = [s for t in loaded.timelines for s in t.studies]
        made = generate_open([(s.report.get("findings", ""), s.report.get("impression", "")) for s in studies],
                             open_tasks, args.llm, licence=licence,
                             allow_remote_data=args.allow_remote_data, cache_path=args.llm_cache)
        by_scan = {s.study_id: made.pairs.get(k, []) for k, s in enumerate(studies)}

        def model_questions(study: Study) -> list[OpenQA]:
            return by_scan.get(study.study_id, [])

        questions = model_questions

        qa_config = {"open_questions": f"model:{shown_uri(args.llm)}", "qa_prompts": made.prompt_hashes}
        dropped = dict(made.dropped)
    items, skipped = build_items(loaded.timelines, tasks, args.seed, questions)
    exclusions = {**loaded.exclusions, **skipped, **dropped}
    manifest = Manifest(
        benchmark=BENCHMARK, version=VERSION, seed=args.seed, licence=licence, image_root=str(root),
        config={"source": "ct-rate", "split": args.split, "tasks": list(tasks), "patients": len(loaded.timelines),
                **qa_config, "volume_check": not args.no_volume_check},
        sources={path.relative_to(root).as_posix(): sha256_file(path) for path in loaded.sources.values()},
        exclusions=dict(sorted(exclusions.items())),
    )
    return items, manifest


def _import(args: argparse.Namespace, root: Path | None, tasks: tuple[str, ...]) -> tuple[list[Item], Manifest]:
    image_root = args.image_root.resolve() if args.image_root is not None else root
    paths = read_volume_map(args.volume_map, image_root) if args.volume_map is not None else None
    items, files = read_official(args.official, VolumeMap(args.volume_prefix, paths))
    items = [i for i in items if i.task in tasks]
    # every input that can leave: the released CSVs, the CT-RATE root and the folder the volumes are read from
    release = imported(files, root, image_root, releases=RELEASES)
    manifest = Manifest(
        benchmark=BENCHMARK, version=VERSION, seed=args.seed, licence=release.licence,
        image_root=str(image_root) if image_root is not None else None,
        config={"source": "official", "tasks": list(tasks), "volume_prefix": args.volume_prefix,
                "volume_map": str(args.volume_map) if args.volume_map else None,
                "open_options": "none (the released loader appends 'Choices: A. - ...')"},
        sources=release.sources,
    )
    return items, manifest
