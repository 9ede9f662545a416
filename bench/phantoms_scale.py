"""How long a MIMIC-scale phantom cohort takes to write (without images), to read back, and to build MI-CXR from.

MIMIC-CXR-JPG has about 65,000 patients and 228,000 studies. By default this
writes a subset with MIMIC-like visit counts (``--patients 5000``, about
17,500 studies), times ``write_cxr_phantoms(images=False, profile="mimic")``
and ``read_timelines(verify_images=False)``, and extrapolates both linearly
per study to 228,000 studies (the work per study is constant: one report and
one scene graph written or read). ``--full`` writes and reads all 65,000
patients instead (several minutes and about 6 GB of small files): measured, not
extrapolated. Then it times ``medtemporal build mi-cxr`` on the cohort
(``--no-verify-images``, the paper's defaults), start to end in this process
(target at MIMIC scale: <= 60 s on 2 cores).

    .venv/bin/python bench/phantoms_scale.py [--patients N | --full] [--keep DIR]

Timings depend on the file system: most of the time goes to creating and
reading small files.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from medtemporal.phantoms.cxr import write_cxr_phantoms
from medtemporal.sources.mimic_cxr import read_timelines

MIMIC_PATIENTS, MIMIC_STUDIES = 65_000, 228_000


def _size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def run(patients: int, out: Path) -> dict[str, float]:
    """Write and read ``patients`` phantom patients under ``out``; return timings and sizes."""
    t0, c0 = time.perf_counter(), time.process_time()
    made = write_cxr_phantoms(out, patients=patients, seed=0, images=False, profile="mimic")
    write_s, write_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0 = time.perf_counter()
    timelines, excluded = read_timelines(made.mimic_cxr_jpg, made.qba, verify_images=False)
    read_s = time.perf_counter() - t0
    from medtemporal.cli import main

    t0 = time.perf_counter()
    code = main(["build", "mi-cxr", "--mimic-cxr-jpg", str(made.mimic_cxr_jpg), "--qba", str(made.qba),
                 "--no-verify-images", "--out", str(out / "bench"), "--overwrite"])
    build_s = time.perf_counter() - t0
    if code != 0:
        raise SystemExit("medtemporal build mi-cxr failed on the phantom cohort")
    items = sum(1 for _ in (out / "bench" / "items.jsonl").open())
    return {"build_s": build_s, "items": items,
        "patients": made.patients, "studies": made.studies, "write_s": write_s, "write_cpu_s": write_cpu,
        "read_s": read_s, "bytes": _size(out), "timelines": len(timelines),
        "read_studies": sum(len(t.studies) for t in timelines), "excluded": sum(excluded.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patients", type=int, default=5000, help="patients in the measured subset (default 5000)")
    parser.add_argument("--full", action="store_true", help=f"write all {MIMIC_PATIENTS:,} patients (no extrapolation)")
    parser.add_argument("--keep", type=Path, help="write here and keep the cohort (default: a temporary folder)")
    args = parser.parse_args()
    patients = MIMIC_PATIENTS if args.full else args.patients
    tmp = None if args.keep else tempfile.mkdtemp(prefix="phantoms-scale-")
    out = args.keep or Path(tmp) / "cohort"
    try:
        r = run(patients, out)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    scale = MIMIC_STUDIES / r["studies"]
    kind = "measured" if args.full else f"extrapolated x{scale:.1f} from {r['studies']:,} studies"
    print(f"phantom cohort, no images, MIMIC-like visit counts: {r['patients']:,} patients, {r['studies']:,} studies")
    print(f"  write: {r['write_s']:.1f} s wall ({r['write_cpu_s']:.1f} s CPU), {r['studies'] / r['write_s']:,.0f} studies/s, {r['bytes'] / 1e6:,.0f} MB")
    print(f"  read:  {r['read_s']:.1f} s wall, {r['read_studies']:,} studies in {r['timelines']:,} timelines, {r['excluded']:,} exclusions")
    print(f"  build mi-cxr: {r['build_s']:.1f} s wall for {r['items']:,} items (reading included)")
    print(f"MIMIC scale ({MIMIC_STUDIES:,} studies, {kind}):")
    print(f"  write ~{r['write_s'] * scale / 60:.1f} min, read ~{r['read_s'] * scale / 60:.1f} min, disk ~{r['bytes'] * scale / 1e9:.1f} GB")
    print(f"  build ~{r['build_s'] * scale:.0f} s (target <= 60 s), {r['build_s'] * scale / 60:.2f} of the target")


if __name__ == "__main__":
    main()
