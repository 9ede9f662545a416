"""How long a MIMIC-scale phantom cohort takes to write (without images) and to read back.

MIMIC-CXR-JPG has about 65,000 patients and 228,000 studies. By default this
writes a subset with MIMIC-like visit counts (``--patients 5000``, about
17,500 studies), times ``write_cxr_phantoms(images=False, profile="mimic")``
and ``read_timelines(verify_images=False)``, and extrapolates both linearly
per study to 228,000 studies (the work per study is constant: one report and
one scene graph written or read). ``--full`` writes and reads all 65,000
patients instead (several minutes and about 6 GB of small files).

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
    return {
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
    print(f"MIMIC scale ({MIMIC_STUDIES:,} studies, {kind}):")
    print(f"  write ~{r['write_s'] * scale / 60:.1f} min, read ~{r['read_s'] * scale / 60:.1f} min, disk ~{r['bytes'] * scale / 1e9:.1f} GB")


if __name__ == "__main__":
    main()
