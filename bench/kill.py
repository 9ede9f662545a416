"""The kill figure of issue 15: random SIGKILLs of ``medtemporal run`` with faults injected (HTTP 500, malformed
JSON, empty replies) lose, duplicate and re-ask nothing and end in identical scores.

Prints one line: kills, attempts, items, lost, duplicated, re-asked, differing answers, identical scores.

    .venv/bin/python bench/kill.py [--kills 20] [--items 100]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from helpers.fake_openai import FakeOpenAI  # noqa: E402
from helpers.kill import kill_figure  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kills", type=int, default=20)
    p.add_argument("--items", type=int, default=100)
    p.add_argument("--seed", type=int, default=20240611)
    args = p.parse_args()
    start = time.perf_counter()
    with FakeOpenAI.spawn() as fake, tempfile.TemporaryDirectory() as tmp:
        figure = kill_figure(fake, Path(tmp), items=args.items, kills=args.kills, seed=args.seed)
    for err in figure.pop("unexpected_exits"):
        print(f"unexpected exit: {err}", file=sys.stderr)
    print(f"{figure['kills']} SIGKILLs over {figure['attempts']} attempts, {figure['items']} items: "
          f"{figure['lost']} lost, {figure['duplicated']} duplicated, {figure['reasked']} re-asked, "
          f"{figure['different']} differing answers, identical scores: {figure['identical_scores']}, "
          f"finished: {figure['finished']} ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
