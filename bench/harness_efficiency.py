"""What a user waits for: a cold ``medtemporal run`` of MI-CXR phantom items against a slow loopback server.

Builds MI-CXR from phantom patients once (``medtemporal phantoms cxr`` then ``build mi-cxr``; kept under
``--keep``, not timed), starts the loopback OpenAI-compatible test server in its own process (answers after
``--latency``), then times ``--repeats`` times, from process start to exit, the command a user types:

    medtemporal run BENCH --model openai+http://127.0.0.1:PORT/v1:fake-vlm --limit N --concurrency 32 --no-score

in a fresh process (the ``medtemporal`` console script of this interpreter, else ``python -m medtemporal``), with a
fresh run folder and response cache. Per run it prints the whole process over the ideal (items × latency /
concurrency; target <= 1.15), the first request's arrival at the server after process start (target <= 1 s; one
``time.monotonic`` clock for both processes), the requests in flight, the process's CPU per item, and the 1-minute
load average beside each figure (on a busy machine the figures say little). ``--inspect`` times the same items
through an inspect_ai ``eval`` (openai provider on the same server, same concurrency, the prompts rendered
beforehand) when inspect_ai is importable by ``--inspect-python``.

    .venv/bin/python bench/harness_efficiency.py [--items 1500] [--repeats 3] [--inspect] [--option http_client=httpx]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers.fake_openai import FakeOpenAI  # noqa: E402

INSPECT_TASK = '''
import json, sys
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
from inspect_ai.scorer import match
from inspect_ai.solver import generate

rows = [json.loads(line) for line in open(sys.argv[1])]
samples = [Sample(id=r["id"], target=r["target"], input=[ChatMessageUser(content=[
    ContentImage(image=p["image"]) if "image" in p else ContentText(text=p["text"]) for p in r["parts"]])])
    for r in rows]
logs = eval(Task(dataset=samples, solver=generate(), scorer=match()), model="openai/fake-vlm", model_base_url=sys.argv[2],
            model_args={"responses_api": False}, max_connections=int(sys.argv[3]), max_samples=int(sys.argv[3]),
            temperature=0.0, display="none", log_dir=sys.argv[4])
print(json.dumps({"status": logs[0].status, "answered": sum(1 for s in logs[0].samples or [] if s.output.completion)}))
'''


def build(root: Path, patients: int) -> Path:
    """Phantom CXR patients and the MI-CXR build from them, reused when ``root`` holds them."""
    from medtemporal.cli import main

    if (root / "bench" / "items.jsonl").is_file():
        return root / "bench"
    data = root / "cxr"
    for argv in (["phantoms", "cxr", "--patients", str(patients), "--seed", "0", "--out", str(data)],
                 ["build", "mi-cxr", "--mimic-cxr-jpg", str(data / "mimic-cxr-jpg"), "--qba",
                  str(data / "mimic-ext-cxr-qba"), "--seed", "0", "--out", str(root / "bench"), "--overwrite"]):
        if main(argv) != 0:
            raise SystemExit(f"medtemporal {' '.join(argv[:2])} failed")
    return root / "bench"


def write_samples(bench: Path, run: Path, out: Path) -> None:
    """The prompts the run sent (its recorded ``prompt``), one JSON line per item, for inspect_ai."""
    from medtemporal.benchmark import load

    loaded = load(bench)
    answers = {item.id: str(item.answer) for item in loaded.items}
    with out.open("w") as f:
        for line in (run / "predictions.jsonl").open():
            p = json.loads(line)
            parts = [{"image": str(loaded.image_root / part["image"])} if "image" in part else {"text": part["text"]}
                     for message in p["prompt"] for part in message["parts"]]
            f.write(json.dumps({"id": p["item_id"], "parts": parts, "target": answers[p["item_id"]]}) + "\n")


def timed(argv: list[str], server: FakeOpenAI, latency: float, ideal: float, items: int, name: str) -> float:
    """Run ``argv`` in a fresh process and print one line of what the server saw; its wall seconds."""
    server.reset()  # counts, in-flight figures and the first request's time are this process's
    server.configure(latency=latency, record_images=False)
    env = {**os.environ, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "sk-bench")}
    load0, r0, start = os.getloadavg()[0], resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    wall, r1 = time.monotonic() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{name} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    s = server.stats()
    cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    requests = s["last_at"] - s["first_at"]
    print(f"{name}: whole process {wall:.2f} s = {wall / ideal:.3f} × ideal (load {load0:.2f} → "
          f"{os.getloadavg()[0]:.2f}); first request at the server {s['first_at'] - start:.2f} s after start (load "
          f"{load0:.2f}); requests {requests / ideal:.3f} × ideal, {s['mean_inflight']:.1f} in flight on average "
          f"(at most {s['max_inflight']}); CPU {cpu:.2f} s = {cpu / items * 1000:.2f} ms per item", flush=True)
    return wall


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--patients", type=int, default=60, help="phantom patients (60 give about 2,000 items)")
    p.add_argument("--items", type=int, default=1500)
    p.add_argument("--latency", type=float, default=0.25)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--repeats", type=int, default=3, help="cold processes in a row")
    p.add_argument("--option", action="append", default=[], help="a backend option passed on, e.g. http_client=httpx")
    p.add_argument("--inspect", action="store_true", help="then the same items through inspect_ai")
    p.add_argument("--inspect-python", default=sys.executable, help="interpreter that has inspect_ai installed")
    p.add_argument("--keep", type=Path, help="work in (and reuse the build of) this folder instead of a temporary one")
    args = p.parse_args()
    script = Path(sys.executable).with_name("medtemporal")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "medtemporal"]
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI.spawn(latency=args.latency, record_images=False) as server:
        root = args.keep or Path(tmp)
        bench = build(root, args.patients)
        n = min(args.items, sum(1 for _ in (bench / "items.jsonl").open()))
        ideal = n * args.latency / args.concurrency
        print(f"MI-CXR phantom items {n} (five images each), latency {args.latency * 1000:.0f} ms, concurrency "
              f"{args.concurrency}: ideal {ideal:.2f} s; {os.cpu_count()} CPUs; targets <= 1.15 × ideal, first "
              "request <= 1 s")
        options = [x for o in args.option for x in ("--option", o)]
        for k in range(args.repeats):
            run = root / f"run-{k}"
            shutil.rmtree(run, ignore_errors=True)
            (root / f"cache-{k}.sqlite").unlink(missing_ok=True)
            timed([*command, "run", str(bench), "--model", server.uri(), "--out", str(run), "--limit", str(n),
                   "--concurrency", str(args.concurrency), "--cache", str(root / f"cache-{k}.sqlite"),
                   "--no-score", *options], server, args.latency, ideal, n, f"medtemporal run #{k + 1}")
        if not args.inspect:
            return 0
        if subprocess.run([args.inspect_python, "-c", "import inspect_ai"], capture_output=True).returncode != 0:
            print(f"inspect_ai is not importable by {args.inspect_python}: `pip install inspect_ai` there (or pass "
                  "--inspect-python); skipped")
            return 0
        write_samples(bench, root / "run-0", root / "samples.jsonl")
        (root / "inspect_task.py").write_text(INSPECT_TASK)
        shutil.rmtree(root / "inspect-logs", ignore_errors=True)
        timed([args.inspect_python, str(root / "inspect_task.py"), str(root / "samples.jsonl"), server.base_url,
               str(args.concurrency), str(root / "inspect-logs")], server, args.latency, ideal, n, "inspect_ai eval")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
