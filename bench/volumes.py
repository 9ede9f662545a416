"""What feeding a CT volume to a 2D model costs (protocol ``ct``, default 32 slices), against a bare nibabel load.

Writes one phantom chest CT (default 512 × 512 × 300 int16, ``.nii.gz``), then measures in one process:

- ``bare``: ``np.asanyarray(nibabel.load(path).dataobj)`` (decompress and read the whole volume);
- ``first``: `prepare` into an empty cache (read, sample 32 axial slices, window, resize, write PNGs);
- ``cached``: `prepare` again (served from the cache);
- peak memory of ``first`` (tracemalloc; numpy reports its buffers to it) against the volume's in-memory size.

Targets (issue #10): first ≤ 1.3 × bare; bare / cached ≥ 20; peak ≤ 2.5 × the volume.

    .venv/bin/python bench/volumes.py [--shape 512,512,300] [--repeats 3]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from medtemporal.benchmarks.rad3d.volumes import prepare
from medtemporal.phantoms.ct_rate import _measures, _save, draw
from medtemporal.sources.ct_rate import LABELS


def _best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", default="512,512,300")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    shape = tuple(int(v) for v in args.shape.split(","))
    import nibabel as nib

    work = Path(tempfile.mkdtemp(prefix="rad3d-volumes-"))
    try:
        rng = np.random.default_rng(0)
        labels = {label: int(rng.random() < 0.4) for label in LABELS}
        path = work / "valid_1_a_1.nii.gz"
        _save(path, draw(shape, labels, _measures(rng), rng))
        nbytes = int(np.prod(shape)) * 2
        bares, firsts = [], []
        for k in range(args.repeats):  # alternated, so a slow spell of the machine hits both
            bares.append(_best(lambda: np.asanyarray(nib.load(str(path)).dataobj), 1))
            start = time.perf_counter()
            files = prepare(path, cache=work / f"cache{k}")
            firsts.append(time.perf_counter() - start)
        bare, first = min(bares), min(firsts)
        cached = _best(lambda: prepare(path, cache=work / "cache0"), max(args.repeats, 20))
        tracemalloc.start()
        prepare(path, cache=work / "cache-mem")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"volume {shape} int16 = {nbytes / 2**20:.0f} MiB in memory, {path.stat().st_size / 2**20:.0f} MiB on disk; "
              f"{len(files)} slices")
        print(f"bare nibabel load     {bare:8.3f} s")
        print(f"prepare (first)       {first:8.3f} s   ratio to bare {first / bare:6.2f}  (target ≤ 1.3)")
        print(f"prepare (cached)      {cached:8.5f} s   bare / cached {bare / cached:8.1f}  (target ≥ 20)")
        print(f"peak memory (first)   {peak / 2**20:8.0f} MiB  ratio to volume {peak / nbytes:6.2f}  (target ≤ 2.5)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
