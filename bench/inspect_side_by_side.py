"""medtemporal and inspect_ai side by side: the same MI-CXR items, the same loopback server, the same concurrency.

Builds MI-CXR from phantom patients (``medtemporal phantoms cxr`` then
``medtemporal build mi-cxr``, not timed), starts the loopback OpenAI-compatible
test server (separate process, fixed latency), then times two whole processes
from start to exit, one after the other:

- ``medtemporal run BENCH --model openai+http://127.0.0.1:PORT/v1:fake-vlm``
  (direct protocol, ``--no-score``, fresh cache);
- an inspect_ai ``eval`` of one task whose samples carry the same messages
  (captions, images and question text as medtemporal's direct protocol renders
  them, written to a JSONL file beforehand, so the prompt rendering is not in
  inspect_ai's time), model ``openai/fake-vlm`` with ``model_base_url`` on the
  loopback server (no network), ``max_connections`` = ``max_samples`` =
  concurrency, temperature 0 as MI-CXR's spec sets, the ``match`` scorer, log
  written as inspect_ai does by default.

Prints for each: the whole process's wall time over the ideal (items × latency /
concurrency), the time from its start to the first request the server received,
and the request phase (first request received to last reply sent, at the server)
over the ideal, with the mean number of requests in flight; then
medtemporal / inspect_ai. Times at the server use `time.monotonic`, one clock
for every process of the machine. inspect_ai is not a medtemporal dependency: run
``pip install inspect_ai`` into this interpreter, or into another environment
and pass its interpreter with ``--inspect-python``; without it the bench says
so and exits 0 after timing medtemporal alone.

    .venv/bin/python bench/inspect_side_by_side.py [--patients 60] [--items 1500] [--latency 0.25]
        [--concurrency 32] [--inspect-python PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests")]

from helpers.fake_openai import FakeOpenAI  # noqa: E402

from medtemporal.benchmark import load  # noqa: E402
from medtemporal.prompts import PromptSet  # noqa: E402
from medtemporal.protocols.base import image_parts  # noqa: E402
from medtemporal.protocols.direct import question_prompt  # noqa: E402

CLI = "import sys; from medtemporal.cli import main; sys.exit(main())"
INSPECT_TASK = '''
import json, sys
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
from inspect_ai.scorer import match
from inspect_ai.solver import generate

samples_path, base_url, concurrency, log_dir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
samples = []
for line in open(samples_path):
    row = json.loads(line)
    content = [ContentImage(image=p["image"]) if "image" in p else ContentText(text=p["text"]) for p in row["parts"]]
    samples.append(Sample(id=row["id"], input=[ChatMessageUser(content=content)], target=row["target"]))
logs = eval(Task(dataset=samples, solver=generate(), scorer=match()), model="openai/fake-vlm",
            model_base_url=base_url, model_args={"responses_api": False}, max_connections=concurrency,
            max_samples=concurrency, temperature=0.0,
            display="none", log_dir=log_dir)
done = sum(1 for s in (logs[0].samples or []) if s.output and s.output.completion)
print(json.dumps({"status": logs[0].status, "answered": done}))
'''


def build(root: Path, patients: int) -> Path:
    """Phantom CXR patients and the MI-CXR build from them (not timed; reused from a kept folder)."""
    from medtemporal.cli import main

    if (root / "bench" / "items.jsonl").is_file() and (root / "cxr" / "phantom_truth.jsonl").is_file():
        return root / "bench"
    data = root / "cxr"
    for argv in (["phantoms", "cxr", "--patients", str(patients), "--seed", "0", "--out", str(data)],
                 ["build", "mi-cxr", "--mimic-cxr-jpg", str(data / "mimic-cxr-jpg"), "--qba",
                  str(data / "mimic-ext-cxr-qba"), "--seed", "0", "--out", str(root / "bench"), "--overwrite"]):
        if main(argv) != 0:
            raise SystemExit(f"medtemporal {' '.join(argv[:2])} failed")
    return root / "bench"


def write_samples(bench: Path, limit: int, out: Path) -> int:
    """The first ``limit`` items as medtemporal's direct protocol renders them, one JSON line each."""
    loaded, prompts = load(bench), PromptSet()
    root = loaded.image_root
    n = 0
    with out.open("w") as f:
        for item in loaded.items[:limit]:
            parts = [{"image": str(p.path)} if hasattr(p, "path") else {"text": p.text}
                     for p in image_parts(item.images, root)]
            parts.append({"text": question_prompt(item, prompts)[1]})
            f.write(json.dumps({"id": item.id, "parts": parts, "target": str(item.answer)}) + "\n")
            n += 1
    return n


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """(wall time of a whole process, start to exit; `time.monotonic` at its start; the process)."""
    t0, start = time.perf_counter(), time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    return time.perf_counter() - t0, start, done


def phases(name: str, wall: float, start: float, stats: dict, ideal: float) -> str:
    """One line: the whole process, the first request and the request phase as the server saw them."""
    line = f"{name}: {wall:.2f} s whole process, wall/ideal {wall / ideal:.3f}"
    if stats.get("first_at") is not None and stats.get("last_at") is not None:
        requests = stats["last_at"] - stats["first_at"]
        line += (f"; first request {stats['first_at'] - start:.2f} s after start; requests {requests:.2f} s = "
                 f"{requests / ideal:.3f} × ideal, {stats['mean_inflight']:.1f} in flight on average "
                 f"(at most {stats['max_inflight']}); exit {start + wall - stats['last_at']:.2f} s")
    return line


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--patients", type=int, default=60, help="phantom patients (60 give about 2,300 items)")
    p.add_argument("--items", type=int, default=1500, help="first N items run by both")
    p.add_argument("--latency", type=float, default=0.25)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--inspect-python", default=sys.executable, help="interpreter that has inspect_ai installed")
    p.add_argument("--keep", type=Path,
                   help="work in this folder (kept, and its build reused) instead of a temporary one")
    args = p.parse_args()
    env = {**os.environ, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "sk-bench")}
    has_inspect = subprocess.run([args.inspect_python, "-c", "import inspect_ai"], capture_output=True).returncode == 0
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI.spawn(latency=args.latency, record_images=False) as server:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        bench = build(root, args.patients)
        for old in (root / "run", root / "inspect-logs"):  # a kept folder's earlier timings start afresh
            shutil.rmtree(old, ignore_errors=True)
        (root / "cache.sqlite").unlink(missing_ok=True)
        samples = root / "samples.jsonl"
        items = write_samples(bench, args.items, samples)
        ideal = items * args.latency / args.concurrency
        ours, started, done = timed([sys.executable, "-c", CLI, "run", str(bench), "--model", server.uri(),
                            "--out", str(root / "run"), "--limit", str(items), "--concurrency", str(args.concurrency),
                            "--cache", str(root / "cache.sqlite"), "--no-progress", "--no-score"], env)
        if done.returncode != 0:
            raise SystemExit(f"medtemporal run failed:\n{done.stdout}{done.stderr}")
        answered = sum(1 for _ in (root / "run" / "predictions.jsonl").open())
        print(f"MI-CXR phantom items {items}, latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}, "
              f"ideal {ideal:.2f} s; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
              f"on {os.cpu_count()} CPUs")
        print(phases(f"medtemporal ({answered} predictions)", ours, started, server.stats(), ideal))
        if not has_inspect:
            print(f"inspect_ai is not importable by {args.inspect_python}: `pip install inspect_ai` there "
                  "(or pass --inspect-python) for the side-by-side; skipped")
            return 0
        server.reset()  # counts and in-flight maximum; it also clears the latency, so set it again
        server.configure(latency=args.latency)
        script = root / "inspect_task.py"
        script.write_text(INSPECT_TASK)
        theirs, started, done = timed([args.inspect_python, str(script), str(samples), server.base_url,
                              str(args.concurrency), str(root / "inspect-logs")], env)
        if done.returncode != 0:
            raise SystemExit(f"inspect_ai eval failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        if result["status"] != "success":
            raise SystemExit(f"inspect_ai eval ended {result['status']}; its log is under {root / 'inspect-logs'} "
                             "(pass --keep DIR to keep it)")
        print(phases(f"inspect_ai ({result['answered']} answered, {result['status']})", theirs, started,
                     server.stats(), ideal))
        print(f"medtemporal / inspect_ai wall time = {ours / theirs:.3f} "
              f"(inspect_ai / medtemporal = {theirs / ours:.2f} x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
