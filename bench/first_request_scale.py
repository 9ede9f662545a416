"""The first request when the benchmark's images lie in a phantom folder of MIMIC-CXR's size.

A run checks that the images it sends come from the verified phantom its benchmark was built from
(`medtemporal.provenance.run_licence`, the data-use guard's input), but waits for the check only where the
verdict can change where the data goes (a remote endpoint). This writes once, into a cache, a phantom folder of
the runner benches' 1,500 five-image items (``_synthetic``: 2,700 PNGs) beside ``--filler`` small files (default
454,000, the file count of ``bench/mimic_scale.py``'s MIMIC-sized cohort), all in its checksum manifest; then
prints the median seconds from process start to the first request at the loopback server of ``--repeats`` cold
``medtemporal run`` processes, and the check alone, ``warm`` (its stamp cached by an earlier check: every run
after the first) and ``cold`` (an empty stamp cache: a phantom copied from elsewhere).

    .venv/bin/python bench/first_request_scale.py [--filler 454000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from _synthetic import make_benchmark  # noqa: E402
from helpers.fake_openai import FakeOpenAI  # noqa: E402

from medtemporal.benchmark import load  # noqa: E402
from medtemporal.provenance import PHANTOM_MANIFEST, run_licence, write_phantom_manifest  # noqa: E402

ITEMS = 1500
CHILD = f"import sys; sys.path.insert(0, {str(HERE)!r}); import _synthetic; from medtemporal.cli import main; sys.exit(main())"


def phantom(cache: Path, filler: int) -> Path:
    """The phantom folder's benchmark under ``cache`` (written when absent)."""
    root = cache / f"first-request-{filler}"
    if (root / "data" / PHANTOM_MANIFEST).is_file():
        return root / "bench"
    shutil.rmtree(root, ignore_errors=True)
    bench = make_benchmark(root, ITEMS)
    per_folder = 7  # MIMIC-CXR: about 3.5 studies per patient, a report and a scene graph each
    for k in range(filler):
        folder = root / "data" / "other" / f"p{k // per_folder // 1000:02d}" / f"p{k // per_folder:08d}"
        if k % per_folder == 0:
            folder.mkdir(parents=True)
        (folder / f"s{k:08d}.txt").write_bytes(b"FINDINGS: No focal consolidation.\n")
    write_phantom_manifest(root / "data", "bench/first_request_scale.py", filler=filler)
    return bench


def first_request(bench: Path, server: FakeOpenAI, out: Path, stamps: str | None) -> float:
    """Seconds from the start of a ``medtemporal run`` process to its first request at ``server``."""
    server.reset()
    env = dict(os.environ, OPENAI_API_KEY="sk-bench", TQDM_DISABLE="1")
    if stamps is not None:
        env["MEDTEMPORAL_PHANTOM_STAMPS"] = stamps
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", CHILD, "run", str(bench), "--model", server.uri(), "--out", str(out),
                    "--concurrency", "32", "--no-cache", "--no-progress", "--no-score"], check=True, env=env,
                   capture_output=True)
    return server.stats()["first_at"] - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--filler", type=int, default=454_000, help="files beside the images (default: MIMIC's count)")
    p.add_argument("--repeats", type=int, default=3, help="warm processes (the median is printed)")
    p.add_argument("--cache", type=Path, default=Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                   / "medtemporal" / "bench")
    args = p.parse_args()
    bench = phantom(args.cache, args.filler)
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI.spawn(latency=0.0, record_images=False) as server:
        first_request(bench, server, Path(tmp) / "prime", None)  # leaves the check's stamp in the user's cache
        warm = [first_request(bench, server, Path(tmp) / f"w{k}", None) for k in range(args.repeats)]
        with tempfile.TemporaryDirectory() as stamps:
            cold = first_request(bench, server, Path(tmp) / "cold", stamps)
    print(f"{ITEMS} items x 5 images among {args.filler + 2700:,} phantom files: first request at the server warm "
          f"{statistics.median(warm):.2f} s (median of {args.repeats}), cold {cold:.2f} s; load average {load0:.2f} "
          f"before, {os.getloadavg()[0]:.2f} after, {os.cpu_count()} CPUs")
    loaded = load(bench)
    for case in ("warm", "cold"):
        with tempfile.TemporaryDirectory() as stamps:
            if case == "cold":
                os.environ["MEDTEMPORAL_PHANTOM_STAMPS"] = stamps
            t0 = time.perf_counter()
            licence = run_licence(loaded.manifest, None, [r.path for i in loaded.items for r in i.images],
                                  folder=bench)
            print(f"the licence check alone ({case}): {licence}, {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
