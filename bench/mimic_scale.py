"""MI-CXR built from a MIMIC-scale phantom cohort, measured end to end (no extrapolation).

MIMIC-CXR-JPG has about 65,000 patients and 228,000 studies. This writes a
phantom cohort of that size without images (``medtemporal phantoms cxr
--no-images --profile mimic``: the metadata CSV, the QBA study metadata, one
report and one scene graph per study, the checksum manifest) into a cache
folder once and reuses it while its manifest is there; then it times
``medtemporal build mi-cxr --no-verify-images`` on it, start to end in this
process, and prints the seconds, the ratio to the 60 s target (issue 14,
section 5: at most 60 s on 2 cores) and the phases that took the time.

    .venv/bin/python bench/mimic_scale.py [--patients 65000] [--cache DIR] [--audit]

The blind-solvability audit that ``build`` runs by default does not depend on
the cohort's size (it looks at the ~5,300 built items), so it is timed only
with ``--audit``; without it the build runs with ``--no-audit``. Writing the
full cohort took ~50 min on the shared 2-core machine at load average ~8 (3,000
patients take 47 s at lower load, so ~17 min on a quiet machine) and 4.7 GB in
454,000 small files (5.8 GB on disk); timings depend on the file system and on
other load, so the load average is printed beside them. A cohort written before
the phantom marker kept stamps is hashed once, outside the timing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterator

MIMIC_PATIENTS, MIMIC_STUDIES = 65_000, 228_000
TARGET_S = 60.0


def default_cache() -> Path:
    """``$XDG_CACHE_HOME/medtemporal/bench`` (``~/.cache`` by default)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "medtemporal" / "bench"


def _disk(root: Path) -> tuple[int, int]:
    """Files under ``root`` and their bytes."""
    files = size = 0
    stack = [str(root)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    files += 1
                    size += entry.stat().st_size
    return files, size


def cohort(cache: Path, patients: int, seed: int) -> tuple[Path, float | None]:
    """The phantom cohort's folder under ``cache`` (written when absent) and the seconds writing took (None: reused)."""
    from medtemporal.phantoms.cxr import write_cxr_phantoms
    from medtemporal.provenance import PHANTOM_MANIFEST, stamp_path, verify_phantom

    out = cache / f"mimic-cxr-phantoms-{patients}-seed{seed}"
    if (out / PHANTOM_MANIFEST).is_file():
        if not stamp_path(out).is_file():  # written before the stamp existed: hash it once, outside the timing
            t0 = time.perf_counter()
            print(f"verifying the checksums of {out} once (no stamp): {verify_phantom(out)}, "
                  f"{time.perf_counter() - t0:.0f} s")
        return out, None
    if out.exists():  # an interrupted earlier write: start again
        import shutil

        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    write_cxr_phantoms(out, patients=patients, seed=seed, images=False, profile="mimic")
    return out, time.perf_counter() - t0


@contextlib.contextmanager
def timed(spent: dict[str, float], targets: list[tuple[Any, str, str]]) -> Iterator[None]:
    """Wrap each ``(module, attribute, label)`` so that its calls add their wall time to ``spent[label]``."""
    saved = []
    for module, name, label in targets:
        original = getattr(module, name)

        def wrapper(*args: Any, _f: Callable[..., Any] = original, _l: str = label, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return _f(*args, **kwargs)
            finally:
                spent[_l] += time.perf_counter() - t0
                print(f"  [{time.strftime('%H:%M:%S')}] {_l}: {spent[_l]:.1f} s", flush=True)

        saved.append((module, name, original))
        setattr(module, name, wrapper)
    try:
        yield
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


def build(root: Path, out: Path, audit: bool) -> tuple[float, dict[str, float]]:
    """Time ``medtemporal build mi-cxr`` on the cohort at ``root``; return seconds and seconds per phase."""
    import medtemporal.audit
    import medtemporal.cli._build as cli_build
    import medtemporal.sources.mimic_cxr as source
    from medtemporal.benchmarks.mi_cxr import command, pipeline
    from medtemporal.cli import main

    spent: dict[str, float] = defaultdict(float)
    phases = [
        (source, "read_image_metadata", "read: metadata CSV"),
        (source, "read_study_metadata", "read: QBA study metadata"),
        (source, "read_timelines", "read: timelines (all reading)"),
        (pipeline, "plan", "build: windows, candidates, selection"),
        (command, "build_items", "build: items (plan + drafts)"),
        (medtemporal.audit, "audit_items", "audit"),
        (cli_build, "save", "save items + manifest"),
    ]
    argv = ["build", "mi-cxr", "--mimic-cxr-jpg", str(root / "mimic-cxr-jpg"), "--qba", str(root / "mimic-ext-cxr-qba"),
            "--no-verify-images", "--out", str(out), "--overwrite", *([] if audit else ["--no-audit"])]
    with timed(spent, phases):
        t0 = time.perf_counter()
        code = main(argv)
        total = time.perf_counter() - t0
    if code != 0:
        raise SystemExit("medtemporal build mi-cxr failed on the phantom cohort")
    return total, dict(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patients", type=int, default=MIMIC_PATIENTS, help="patients (default: MIMIC's 65,000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=default_cache(), help="folder of the reusable cohort")
    parser.add_argument("--out", type=Path, help="benchmark folder (default: CACHE/mi-cxr-PATIENTS)")
    parser.add_argument("--audit", action="store_true", help="also run the blind-solvability audit (size-independent)")
    args = parser.parse_args()
    os.environ.setdefault("TQDM_DISABLE", "1")
    root, write_s = cohort(args.cache, args.patients, args.seed)
    studies = sum(1 for _ in (root / "phantom_truth.jsonl").open())
    made = "reused" if write_s is None else f"written in {write_s:.0f} s"
    files, size = _disk(root)
    print(f"phantom cohort {root}: {args.patients:,} patients, {studies:,} studies, no images ({made}; "
          f"{files:,} files, {size / 1e9:.2f} GB)")
    load0 = os.getloadavg()
    total, phases = build(root, args.out or args.cache / f"mi-cxr-{args.patients}", args.audit)
    load1 = os.getloadavg()
    from medtemporal.provenance import licence_of

    t0 = time.perf_counter()
    licence = licence_of(root / "mimic-cxr-jpg", root / "mimic-ext-cxr-qba")
    check_s = time.perf_counter() - t0
    items = sum(1 for _ in (args.out or args.cache / f"mi-cxr-{args.patients}").joinpath("items.jsonl").open())
    print(f"build mi-cxr{'' if args.audit else ' --no-audit'}: {total:.1f} s wall for {items:,} items "
          f"({total / TARGET_S:.2f} x the {TARGET_S:.0f} s target; {os.cpu_count()} CPUs)")
    print(f"  load average (1 min) before {load0[0]:.2f}, after {load1[0]:.2f}")
    print("  where the time goes (nested phases overlap; 'all reading' holds the two metadata reads):")
    for label, s in sorted(phases.items(), key=lambda p: -p[1]):
        print(f"    {s:7.1f} s  {100 * s / total:5.1f} %  {label}")
    print(f"  the phantom licence check ({licence}) runs in another process while the build reads; alone it "
          f"takes {check_s:.1f} s")


if __name__ == "__main__":
    main()
