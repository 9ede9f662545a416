"""Time to the first request when the benchmark's images lie in a phantom folder of MIMIC-CXR's size.

A run checks, before it sends anything, that the images it will send come from the verified phantom its
benchmark was built from (`medtemporal.provenance.run_licence`): the data-use guard's input. This writes a
phantom folder once into a cache: the 1,500 five-image items of the runner benches (``_synthetic``: 2,700
PNGs) beside ``--filler`` other small files (default 454,000, the number of files of ``bench/mimic_scale.py``'s
MIMIC-sized cohort), all listed in its checksum manifest. Then it starts ``medtemporal run`` on all 1,500 items
against the loopback test server in fresh processes and prints, per process, the seconds from process start to
the first request and the seconds of the licence check ("not run" where the run does not wait for it: a local
server); each source tree given with ``--compare SRC`` (e.g. an older checkout's ``src``) is timed in the same way
in the same script run, alternating with this one. Last, the check alone (what a run against a remote endpoint
waits for before it sends anything).

Two cases: ``warm`` (the check's stamp from an earlier check of the same files is in the cache: every run after
the first) and ``cold`` (an empty stamp cache: the first run after the phantom was written elsewhere or copied).

    .venv/bin/python bench/first_request_scale.py [--filler 454000] [--repeats 3] [--compare /tmp/old/src]
"""

from __future__ import annotations

import argparse
import math
import os
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

ITEMS = 1500
CHILD = """
import os, sys, time
start = float(os.environ["BENCH_T0"])
sys.path.insert(0, {bench!r})
import _synthetic
from medtemporal.cli import main
from medtemporal.runner import _run

check = _run.run_licence
def timed(*args, **kwargs):
    t0 = time.monotonic()
    try:
        return check(*args, **kwargs)
    finally:
        print(f"BENCH-MARK check {{time.monotonic() - t0:.4f}}", file=sys.stderr)
_run.run_licence = timed
answer = _run._Runner.answer
async def first(self, item, repeat=0):
    if not getattr(self, "started", False):
        self.started = True
        print(f"BENCH-MARK first {{time.monotonic() - start:.4f}}", file=sys.stderr, flush=True)
    return await answer(self, item, repeat)
_run._Runner.answer = first
import medtemporal
print(f"BENCH-MARK source {{os.path.dirname(medtemporal.__file__)}}", file=sys.stderr)
sys.exit(main())
"""


def phantom(cache: Path, filler: int) -> Path:
    """The phantom folder's benchmark under ``cache`` (written when absent): ``data/`` holds the images and the
    filler files, listed in its phantom manifest."""
    from medtemporal.provenance import PHANTOM_MANIFEST, write_phantom_manifest

    root = cache / f"first-request-{filler}"
    if (root / "data" / PHANTOM_MANIFEST).is_file():
        return root / "bench"
    if root.exists():
        import shutil

        shutil.rmtree(root)
    t0 = time.perf_counter()
    bench = make_benchmark(root, ITEMS)
    text = b"FINDINGS: No focal consolidation. IMPRESSION: No acute cardiopulmonary process.\n"
    per_folder = 7  # MIMIC-CXR: about 3.5 studies per patient, a report and a scene graph each
    for k in range(filler):
        folder = root / "data" / "other" / f"p{k // per_folder // 1000:02d}" / f"p{k // per_folder:08d}"
        if k % per_folder == 0:
            folder.mkdir(parents=True)
        (folder / f"s{k:08d}.txt").write_bytes(text)
    write_phantom_manifest(root / "data", "bench/first_request_scale.py", filler=filler)
    print(f"wrote {root}: {ITEMS} items, {filler:,} filler files, manifest in {time.perf_counter() - t0:.0f} s")
    return bench


def child(src: Path | None, bench: Path, uri: str, out: Path, stamps: Path | None) -> dict[str, float]:
    """One ``medtemporal run`` process (source tree ``src``, else this one): its marks in seconds."""
    env = dict(os.environ, BENCH_T0=repr(time.monotonic()), OPENAI_API_KEY="sk-bench", TQDM_DISABLE="1")
    if src is not None:
        env["PYTHONPATH"] = f"{src}{os.pathsep}{env.get('PYTHONPATH', '')}"
    if stamps is not None:
        env["MEDTEMPORAL_PHANTOM_STAMPS"] = str(stamps)
    argv = [sys.executable, "-c", CHILD.format(bench=str(HERE)), "run", str(bench), "--model", uri, "--out", str(out),
            "--concurrency", "32", "--no-cache", "--no-progress", "--no-score"]
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"medtemporal run failed:\n{done.stdout}{done.stderr}")
    marks = dict(line.split()[1:3] for line in done.stderr.splitlines() if line.startswith("BENCH-MARK "))
    want = Path(src or HERE.parent / "src").resolve()
    if not Path(marks["source"]).resolve().is_relative_to(want):
        raise SystemExit(f"the child imported medtemporal from {marks['source']}, not from {want}")
    return {"first": float(marks["first"]), "check": float(marks.get("check", "nan"))}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--filler", type=int, default=454_000, help="files beside the images (default: MIMIC's count)")
    p.add_argument("--repeats", type=int, default=3, help="warm processes per source tree (the median is printed)")
    p.add_argument("--compare", type=Path, action="append", default=[], help="another source tree to time")
    p.add_argument("--no-cold", action="store_true", help="skip the cold case (an old tree hashes every file)")
    p.add_argument("--cache", type=Path, default=Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                   / "medtemporal" / "bench")
    args = p.parse_args()
    bench = phantom(args.cache, args.filler)
    trees: list[tuple[str, Path | None]] = [("this tree", None), *((str(s), s.resolve()) for s in args.compare)]
    load0 = os.getloadavg()
    rows: dict[str, dict[str, list[dict[str, float]]]] = {name: {"warm": [], "cold": []} for name, _ in trees}
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI.spawn(latency=0.0, record_images=False) as server:
        for name, src in trees:  # a first run of each leaves its stamps in the user's cache
            child(src, bench, server.uri(), Path(tmp) / f"prime-{len(rows[name]['warm'])}-{id(name)}", None)
        for k in range(args.repeats):
            for name, src in trees:
                rows[name]["warm"].append(child(src, bench, server.uri(), Path(tmp) / f"w{k}-{id(name)}", None))
        if not args.no_cold:
            for name, src in trees:
                with tempfile.TemporaryDirectory() as stamps:
                    rows[name]["cold"].append(child(src, bench, server.uri(), Path(tmp) / f"c-{id(name)}",
                                                    Path(stamps)))
    print(f"{ITEMS} items x 5 images in a phantom folder of {args.filler + 2700:,} files; load average "
          f"{load0[0]:.2f} before, {os.getloadavg()[0]:.2f} after, {os.cpu_count()} CPUs")
    print(f"{'source tree':<40} {'case':<5} {'first request (s)':>18} {'licence check (s)':>18}")
    for name, cases in rows.items():
        for case, marks in cases.items():
            if marks:
                first = statistics.median(m["first"] for m in marks)
                check = statistics.median(m["check"] for m in marks)
                shown = "not run" if math.isnan(check) else f"{check:.2f}"
                print(f"{name:<40} {case:<5} {first:>18.2f} {shown:>18}")
    from medtemporal.benchmark import load
    from medtemporal.provenance import run_licence

    loaded = load(bench)
    paths = [r.path for item in loaded.items for r in item.images]
    for case in ("warm", "cold"):
        with tempfile.TemporaryDirectory() as stamps:
            if case == "cold":
                os.environ["MEDTEMPORAL_PHANTOM_STAMPS"] = stamps
            t0 = time.perf_counter()
            licence = run_licence(loaded.manifest, None, paths, folder=bench)
            print(f"the licence check alone ({case}, this tree): {licence}, {time.perf_counter() - t0:.2f} s")
        if args.no_cold:
            break


if __name__ == "__main__":
    main()
