"""The researcher's-desk trial, replayed: a new user on all nine families, then what goes wrong.

Clones this repository (its committed HEAD) into a temporary folder, makes a fresh virtual environment with a
plain ``pip install .``, and, with a fresh ``HOME`` (cold caches) and no ``HF_HUB_OFFLINE``, as a user whose
machine cannot reach the Hugging Face hub or nltk's server:

1. writes phantoms and builds all nine families;
2. runs seven of them in one ``medtemporal run`` with ``baseline:random`` (one folder each, one summary table),
   ELTLM with a constant answer and longitudinal-rrg with its copy-prior baseline; runs the same set again (it
   must skip what is done);
3. runs an eval-set file (YAML) naming a display name and a per-benchmark limit;
4. TemMed's report generation with a constant report: the first offline run of the text metrics;
5. ``score --judge`` with a judge on a loopback server that answers in prose (must exit 1, one sentence);
6. a model on a loopback server that fails every item (must exit 1, one sentence);
7. ``pip install torch==2.13.0 '.[hf]'`` (torch first, as the README says), then an unreachable Hub model,
   ``--model hf:Qwen/Qwen2-VL-2B-Instruct`` (must fail once, fast, in one sentence);
8. ``compare`` of two runs (in %);
9. ``view`` on the folder of all runs: seconds to its URL, to the index, and to one run's page.

Prints, per step, the exit code, the time and the headline lines (score rows, summary rows, errors, notes), then
one table of all steps. Exits 1 when a step's exit code is not the one expected.

    python bench/desk_trial.py [--keep]        # about 10 minutes on two cores (most of it pip)
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TORCH = "torch==2.13.0"
HEADLINE = re.compile(r"^(\| (Overall|[A-Za-z0-9_-]+ \| (accuracy|rouge_l_f1|judge_accuracy|temmed_report_avg)) |"
                      r"\| [^|]+ \| [a-z0-9-]+ \| [^|]+ \| [a-z_0-9]+ \| [0-9.–]|medtemporal: (error|note|warning)|"
                      r"Not computed:|Judge |Summary|serving|.*already done|.*skipped|\| (Group|overall) )")
"""Lines worth showing of a step's output: score rows, summary rows, errors, notes, what was skipped."""
FAMILIES = ["mi-cxr", "temmed", "skillqa", "3d-rad", "mmxu", "ms-cxr-t", "medical-diff-vqa"]
"""The families ``baseline:random`` can run (ELTLM is all open questions: a constant answer runs it)."""


@dataclass
class Step:
    label: str
    code: int
    seconds: float
    expected: tuple[int, ...]
    lines: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.code in self.expected


class Trial:
    """Runs steps in a work folder with the trial's environment, printing each as it ends."""

    def __init__(self, tmp: Path, env: dict[str, str]) -> None:
        self.tmp, self.env, self.steps = tmp, env, []
        self.work = tmp / "work"
        self.work.mkdir(exist_ok=True)
        self.log = tmp / "steps.log"

    def run(self, label: str, command: str, *, expected: tuple[int, ...] = (0,), show: int = 14,
            cwd: Path | None = None) -> Step:
        start = time.perf_counter()
        done = subprocess.run(["bash", "-c", command], cwd=cwd or self.work, env=self.env, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL)
        seconds = time.perf_counter() - start
        output = done.stdout + done.stderr
        with self.log.open("a") as fh:
            fh.write(f"\n$ {command}\n{output}")
        lines = [line.rstrip() for line in output.splitlines() if HEADLINE.match(line)]
        errors = [line for line in lines if line.startswith("medtemporal: error")]  # always shown
        step = Step(label, done.returncode, seconds, expected, [*lines[:show], *(e for e in errors
                                                                                 if e not in lines[:show])])
        self.steps.append(step)
        mark = "ok " if step.ok else "BAD"
        print(f"[{mark}] exit {done.returncode:3d}  {seconds:7.1f} s  {label}", flush=True)
        for line in step.lines:
            print(f"        {line[:170]}", flush=True)
        return step

    def table(self) -> str:
        rows = ["| step | exit | expected | s |", "|---|---|---|---|"]
        rows += [f"| {s.label} | {s.code} | {'/'.join(map(str, s.expected))} | {s.seconds:.1f} |" for s in self.steps]
        return "\n".join(rows)


def fake_server(repo: Path, python: Path, settings: str) -> tuple[subprocess.Popen[str], str]:
    """The tests' loopback OpenAI-compatible server (``tests/helpers/fake_openai.py``) with ``settings``; its URL."""
    proc = subprocess.Popen([str(python), str(repo / "tests" / "helpers" / "fake_openai.py"), "--port", "0",
                             "--settings", settings], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    port = re.match(r"PORT (\d+)", line)
    if port is None:
        proc.kill()
        raise RuntimeError(f"the loopback server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{port[1]}"


def view_timings(trial: Trial, medtemporal: Path) -> None:
    """``medtemporal view runs``: seconds to the URL, to the index, to one run's page; one step."""
    start = time.perf_counter()
    proc = subprocess.Popen([str(medtemporal), "view", "runs"], cwd=trial.work, env=trial.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        to_url = time.perf_counter() - start
        base = re.search(r"http://127\.0\.0\.1:\d+/", line)[0]
        index = urllib.request.urlopen(base, timeout=60).read().decode()
        to_index = time.perf_counter() - start
        page = re.search(r'href="(/r/[0-9a-f]+/report\.html)"', index)[1]
        first = urllib.request.urlopen(base + page.lstrip("/"), timeout=60).read().decode()
        to_answer = time.perf_counter() - start
        while "Writing the report of" in first:  # the page that reloads itself while the report is written
            time.sleep(0.5)
            first = urllib.request.urlopen(base + page.lstrip("/"), timeout=60).read().decode()
        to_page = time.perf_counter() - start
        runs = index.count("/report.html\">") - index.count("runs together")
        step = Step("view runs (URL / index / first run page)", 0, to_url, (0,), [
            line.strip(), f"URL after {to_url:.2f} s; index ({runs} runs) after {to_index:.2f} s; "
            f"a run's page answers after {to_answer:.2f} s, shows its report after {to_page:.2f} s"])
    except Exception as exc:  # noqa: BLE001 (a bench: say what failed and go on)
        step = Step("view runs", 1, time.perf_counter() - start, (0,), [f"{type(exc).__name__}: {exc}"])
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    trial.steps.append(step)
    print(f"[{'ok ' if step.ok else 'BAD'}] exit {step.code:3d}  {step.seconds:7.1f} s  {step.label}", flush=True)
    for text in step.lines:
        print(f"        {text}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="medtemporal-desk-trial-"))
    repo, venv, home = tmp / "medtemporal", tmp / "venv", tmp / "home"
    home.mkdir()
    env = {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home)}
    trial = Trial(tmp, env)
    print(f"desk trial in {tmp} (every step's output: {trial.log})", flush=True)
    python, medtemporal = venv / "bin" / "python", venv / "bin" / "medtemporal"
    servers: list[subprocess.Popen[str]] = []
    try:
        trial.run("git clone (committed HEAD)", f"git clone --quiet {ROOT} {repo}", cwd=tmp)
        trial.run("python -m venv; pip install . (plain)",
                  f"{sys.executable} -m venv {venv} && {python} -m pip install --quiet .", cwd=repo)
        if not all(s.ok for s in trial.steps):
            return 1
        phantoms = ("medtemporal phantoms cxr --patients 60 --out phantoms/cxr && "
                    "medtemporal phantoms chexpert-plus --patients 80 --out phantoms/cxp && "
                    "medtemporal phantoms ct-rate --patients 8 --shape 48,48,16 --out phantoms/ct-rate && "
                    "medtemporal phantoms skillqa --instances 20 --out phantoms/skill && "
                    "medtemporal phantoms mmxu --cxr phantoms/cxr --out phantoms/mmxu && "
                    "medtemporal phantoms ms-cxr-t --cxr phantoms/cxr --out phantoms/ms-cxr-t && "
                    "medtemporal phantoms medical-diff-vqa --cxr phantoms/cxr --out phantoms/diff-vqa")
        trial.run("phantoms of every dataset", phantoms)
        cxr = "--mimic-cxr-jpg phantoms/cxr/mimic-cxr-jpg"
        builds = " && ".join([
            f"medtemporal build mi-cxr {cxr} --qba phantoms/cxr/mimic-ext-cxr-qba --out benchmarks/mi-cxr",
            "medtemporal build temmed --chexpert-plus phantoms/cxp --out benchmarks/temmed",
            f"medtemporal build eltlm {cxr} --qba phantoms/cxr/mimic-ext-cxr-qba --out benchmarks/eltlm",
            "medtemporal build skillqa --frames phantoms/skill --out benchmarks/skillqa",
            "medtemporal build 3d-rad --ct-rate phantoms/ct-rate --out benchmarks/3d-rad",
            f"medtemporal build mmxu --official phantoms/mmxu/MMXU-test.jsonl {cxr} --out benchmarks/mmxu",
            f"medtemporal build ms-cxr-t --ms-cxr-t phantoms/ms-cxr-t {cxr} --out benchmarks/ms-cxr-t",
            f"medtemporal build medical-diff-vqa --diff-vqa phantoms/diff-vqa {cxr} --out benchmarks/medical-diff-vqa",
            f"medtemporal build longitudinal-rrg {cxr} --out benchmarks/longitudinal-rrg",
        ])
        trial.run("build all nine families", builds)
        seven = " ".join(f"benchmarks/{f}" for f in FAMILIES)
        trial.run("run 7 families with baseline:random (one command)",
                  f"medtemporal run {seven} --model baseline:random --out runs --no-progress", show=30)
        trial.run("the same set again (skips what is done)",
                  f"medtemporal run {seven} --model baseline:random --out runs --no-progress", show=8)
        trial.run("eltlm with a constant answer, --name",
                  "medtemporal run benchmarks/eltlm --model 'baseline:constant-No significant interval change.' "
                  "--name stock-answer --out runs/eltlm --no-progress")
        trial.run("longitudinal-rrg with the copy-prior baseline",
                  "medtemporal run benchmarks/longitudinal-rrg --model longitudinal_rrg:copy-prior "
                  "--out runs/longitudinal-rrg --no-progress", show=12)
        (trial.work / "set.yaml").write_text(
            "model: baseline:majority\nname: majority\nout: runs/set\nbenchmarks:\n  - benchmarks/mi-cxr\n"
            "  - path: benchmarks/mmxu\n    limit: 50\n", encoding="utf-8")
        trial.run("eval-set file (set.yaml: majority, mi-cxr + mmxu limit 50)",
                  "medtemporal run set.yaml --no-progress", show=10)
        trial.run("TemMed report generation offline: the first text-metric run",
                  "medtemporal run benchmarks/temmed --model 'baseline:constant-No acute findings.' "
                  "--tasks report --out runs/temmed-report --no-progress", expected=(0,), show=10)
        prose, url = fake_server(repo, python, '{"replies": [["", "The answer looks broadly reasonable to me."]]}')
        servers.append(prose)
        trial.run("score --judge with a judge that answers in prose",
                  f"medtemporal score runs/eltlm --judge openai+{url}/v1:prose-judge --no-progress --no-cache",
                  expected=(1,), show=8)
        broken, url = fake_server(repo, python, '{"faults": [{"kind": "400", "match": "", "times": 100000}]}')
        servers.append(broken)
        trial.run("a model that fails every item",
                  f"medtemporal run benchmarks/mi-cxr --model openai+{url}/v1:broken --out runs/broken --limit 100 "
                  "--no-progress --no-cache", expected=(1,), show=6)
        trial.run(f"pip install {TORCH} '.[hf]' (torch first)",
                  f"{python} -m pip install --quiet {TORCH} && {python} -m pip install --quiet '.[hf]'", cwd=repo)
        trial.run("an unreachable Hub model, hf:Qwen/Qwen2-VL-2B-Instruct",
                  "medtemporal run benchmarks/mmxu --model hf:Qwen/Qwen2-VL-2B-Instruct --out runs/qwen --limit 5 "
                  "--no-progress", expected=(2,), show=4)
        trial.run("compare two runs (in %)", "medtemporal compare runs/mi-cxr runs/set/mi-cxr", show=10)
        view_timings(trial, medtemporal)
    finally:
        for server in servers:
            server.terminate()
        print("\n" + trial.table(), flush=True)
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0 if all(s.ok for s in trial.steps) else 1


if __name__ == "__main__":
    sys.exit(main())
