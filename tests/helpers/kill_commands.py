"""The kill figure beyond ``run``: SIGKILL ``score --judge``, ``build``, ``report`` and ``export`` at random moments,
run the same command again each time, and compare with an unkilled reference (issue 24).

Each command is started again after every attempt, killed or not, until it has been killed its share of times
and has then finished once. The judge pass runs against the fake server with faults injected (HTTP 500,
malformed JSON and empty replies on some items, each once); the others write files only. What is counted:

- judge: verdicts lost (an item and kind without an ``ok`` verdict at the end), duplicated (``ok`` lines
  beyond one per item and kind), re-asked (requests for an item all of whose verdicts were written before
  that attempt), and whether ``scores.json`` equals the reference's;
- build, report, export: whether the files at the end are byte for byte the reference's, how many items
  are missing or repeated, and ``*.tmp`` or staging folders left behind.

Used by ``bench/kill.py`` with `helpers.kill.kill_figure` (the ``run`` part).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.eltlm import make_open_benchmark, make_open_run
from helpers.fake_openai import TEST_API_KEY, FakeOpenAI
from helpers.kill import CHILD
from helpers.phantoms import make_cxr_phantoms
from helpers.tiny import make_tiny_benchmark

from medtemporal.benchmark import ITEMS, MANIFEST
from medtemporal.runner import run

JUDGE_FAULTS = [
    {"kind": "500", "match": "Question 1", "times": 1},
    {"kind": "malformed", "match": "Question 2", "times": 1},
    {"kind": "empty", "match": "Question 3", "times": 1},
]
VERDICT = [["[Reference Answer]", "Accuracy: 1\nCompleteness: 0"]]
"""The fake judge's reply to every judge request."""
SHARE = {"score --judge": 0.3, "build": 0.2, "build with a retrieval cache": 0.15, "report": 0.175, "export": 0.175}
"""How the kills are shared between the commands (the ``run`` part is `helpers.kill.kill_figure`'s)."""


def _timed(argv: list[str], env: dict[str, str]) -> float:
    """Seconds an unkilled run of ``argv`` takes (for the window of the random kills)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, *argv], env=env, capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    return time.perf_counter() - start


def kill_loop(argv: list[str], env: dict[str, str], rng: random.Random, kills: int, window: float,
              around: Callable[[], Callable[[], None]] | None = None) -> dict[str, Any]:
    """Run ``argv`` again and again: SIGKILL each of the first ``kills`` attempts at a random moment within
    ``window`` seconds, then let one finish. ``around`` is called before each attempt and returns what to call
    after it (to count what the attempt did)."""
    done_kills = attempts = 0
    unexpected: list[str] = []
    code: int | None = None
    while done_kills < kills or code != 0:
        if attempts >= kills + 10:
            break
        attempts += 1
        after = around() if around is not None else None
        child = subprocess.Popen([sys.executable, "-c", CHILD, *argv], env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
        if done_kills < kills:
            time.sleep(rng.uniform(0.0, window))
            if child.poll() is None:
                child.send_signal(signal.SIGKILL)
                done_kills += 1
        _, err = child.communicate(timeout=600)
        code = child.returncode
        if code not in (0, -signal.SIGKILL):
            unexpected.append(err.decode(errors="replace")[-2000:])
        if after is not None:
            after()
    return {"kills": done_kills, "attempts": attempts, "finished": code == 0, "unexpected_exits": unexpected}


def _leftovers(root: Path) -> list[str]:
    """Temporary files and report staging folders under ``root``."""
    return sorted(str(p) for p in root.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".report."))


def _verdicts(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_bytes().split(b"\n")[:-1] if line.strip()]


def judge_figure(fake: FakeOpenAI, root: Path, kills: int, rng: random.Random, env: dict[str, str]) -> dict[str, Any]:
    """``score RUN --judge URI`` killed ``kills`` times against a faulty fake judge, against an unkilled one."""
    bench = make_open_benchmark(root / "open", n=24, patients=6)
    questions = {json.loads(line)["id"]: json.loads(line)["question"]
                 for line in (bench / ITEMS).read_text().splitlines()}
    runs = {name: make_open_run(bench, root / f"judge-{name}") for name in ("reference", "killed")}
    argv = ["score", "", "--judge", fake.uri(), "--judge-attempts", "4", "--resamples", "50"]
    fake.reset()
    fake.configure(latency=0.05, faults=JUDGE_FAULTS, replies=VERDICT)
    window = _timed([*argv[:1], str(runs["reference"]), *argv[2:]],
                    {**env, "MEDTEMPORAL_CACHE": str(root / "r.sqlite")})
    fake.reset()
    fake.configure(latency=0.05, faults=JUDGE_FAULTS, replies=VERDICT)
    log = runs["killed"] / "judgements.jsonl"
    reference = _verdicts(runs["reference"] / "judgements.jsonl")
    kinds = {(v["kind"], v["item_id"]) for v in reference if v["status"] == "ok"}
    by_item: dict[str, set[str]] = {}
    for kind, item in kinds:
        by_item.setdefault(item, set()).add(kind)
    reasked = 0

    def around() -> Callable[[], None]:
        ok = {(v["kind"], v["item_id"]) for v in _verdicts(log) if v["status"] == "ok"}
        done = [item for item, need in by_item.items() if all((k, item) in ok for k in need)]
        before = fake.stats()["counts"]

        def after() -> None:
            nonlocal reasked
            now = fake.stats()["counts"]
            for item in done:
                q = questions[item]
                reasked += sum(n for k, n in now.items() if q in k) - sum(n for k, n in before.items() if q in k)

        return after

    loop = kill_loop([*argv[:1], str(runs["killed"]), *argv[2:]], {**env, "MEDTEMPORAL_CACHE": str(root / "k.sqlite")},
                     rng, kills, window, around)
    ok_lines = [(v["kind"], v["item_id"]) for v in _verdicts(log) if v["status"] == "ok"]
    scores = [json.loads((r / "scores.json").read_text())["scores"] if (r / "scores.json").is_file() else None
              for r in runs.values()]
    return {**loop, "verdicts": len(kinds), "lost": len(kinds - set(ok_lines)),
            "duplicated": len(ok_lines) - len(set(ok_lines)), "reasked": reasked,
            "identical": scores[0] is not None and scores[0] == scores[1], "leftovers": _leftovers(runs["killed"])}


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def files_figure(name: str, argv: list[str], reference: Path, out: Path, kills: int, rng: random.Random,
                 env: dict[str, str]) -> dict[str, Any]:
    """``argv`` (whose output is ``out``; ``{out}`` in it) killed ``kills`` times, against an unkilled run into
    ``reference``: the files must end byte for byte the same."""
    window = _timed([a.replace("{out}", str(reference)) for a in argv], env)
    loop = kill_loop([a.replace("{out}", str(out)) for a in argv], env, rng, kills, window)
    ref, got = (_files(p) if p.is_dir() else {p.name: p.read_bytes()} for p in (reference, out))
    figure = {**loop, "identical": ref == got, "leftovers": _leftovers(out.parent if out.is_file() else out)}
    if name.startswith("build"):  # items lost or repeated, judged on the lines of items.jsonl
        want, have = (set(files.get(ITEMS, b"").splitlines()) for files in (ref, got))
        lines = got.get(ITEMS, b"").splitlines()
        figure.update(lost=len(want - have), duplicated=len(lines) - len(set(lines)),
                      manifest_matches=ref.get(MANIFEST) == got.get(MANIFEST))
    return figure


def command_figures(fake: FakeOpenAI, root: Path, *, kills: int, seed: int = 20241125) -> dict[str, dict[str, Any]]:
    """`judge_figure` and `files_figure` for ``build``, ``report`` and ``export``, ``kills`` shared by `SHARE`."""
    rng = random.Random(seed)
    env = {**os.environ, "CI": "1", "OPENAI_API_KEY": TEST_API_KEY}
    share = {name: max(1, round(kills * part)) for name, part in SHARE.items()}
    figures = {"score --judge": judge_figure(fake, root / "judge", share["score --judge"], rng, env)}
    cxr = make_cxr_phantoms(root / "phantoms", patients=8, seed=2, image_size=64).root
    build = ["build", "mi-cxr", "--mimic-cxr-jpg", str(cxr / "mimic-cxr-jpg"), "--qba", str(cxr / "mimic-ext-cxr-qba"),
             "--out", "{out}", "--overwrite"]
    figures["build"] = files_figure("build", build, root / "build-ref", root / "build", share["build"], rng, env)
    name = "build with a retrieval cache"  # longitudinal-rrg's embeddings/, written before items and manifest
    cached = ["build", "longitudinal-rrg", "--mimic-cxr-jpg", str(cxr / "mimic-cxr-jpg"), "--out", "{out}",
              "--overwrite"]
    figures[name] = files_figure(name, cached, root / "rrg-ref", root / "rrg", share[name], rng, env)
    bench = make_tiny_benchmark(root / "tiny", n=12)
    assert run(bench, "baseline:random", root / "tiny-run", progress=False).done == 12
    report = ["report", str(root / "tiny-run"), "--out", "{out}", "--formats", "md,csv,html,png"]
    figures["report"] = files_figure("report", report, root / "report-ref", root / "report", share["report"], rng, env)
    export = ["export", str(bench), "--format", "parquet", "--out", "{out}", "--overwrite"]
    (root / "export").mkdir()
    (root / "export-ref").mkdir()
    figures["export"] = files_figure("export", export, root / "export-ref" / "tiny.parquet",
                                     root / "export" / "tiny.parquet", share["export"], rng, env)
    shutil.rmtree(root / "phantoms", ignore_errors=True)
    return figures
